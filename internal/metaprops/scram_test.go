package metaprops

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/auth"
)

func TestParseAddScram(t *testing.T) {
	salted, err := pbkdf2.Key(sha256.New, "carol-secret", []byte("salt"), 8192, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg        string
		name       string
		mechanism  string
		iterations int32
		salt       []byte // nil: drawn at random
		password   string
	}{
		{"SCRAM-SHA-256=[name=alice,password=alice-secret]", "alice", auth.MechanismScramSHA256, 4096, nil, "alice-secret"},
		{` SCRAM-SHA-512=[name="bob",salt="c2FsdA==",password="b=o\"b",iterations=8192] `, "bob", auth.MechanismScramSHA512, 8192, []byte("salt"), `b=o\"b`}, // no escapes, as in Kafka
		{`SCRAM-SHA-256=[name=carol,salt="c2FsdA==",saltedpassword="` + base64.StdEncoding.EncodeToString(salted) + `",iterations=8192]`,
			"carol", auth.MechanismScramSHA256, 8192, []byte("salt"), "carol-secret"},
	} {
		rec, err := ParseAddScram(tc.arg)
		if err != nil {
			t.Fatalf("%s: %v", tc.arg, err)
		}
		if rec.Name != tc.name || scramMechanismName(rec.Mechanism) != tc.mechanism || rec.Iterations != tc.iterations {
			t.Errorf("%s: %v", tc.arg, rec)
		}
		if tc.salt != nil && !bytes.Equal(rec.Salt, tc.salt) || tc.salt == nil && len(rec.Salt) != 32 {
			t.Errorf("%s: salt %q", tc.arg, rec.Salt)
		}
		want, err := auth.NewScramCredential(tc.mechanism, tc.password, rec.Salt, tc.iterations)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.StoredKey, want.StoredKey) || !bytes.Equal(rec.ServerKey, want.ServerKey) {
			t.Errorf("%s: the keys are not the password's", tc.arg)
		}
	}
	a, _ := ParseAddScram("SCRAM-SHA-256=[name=alice,password=alice-secret]")
	b, _ := ParseAddScram("SCRAM-SHA-256=[name=alice,password=alice-secret]")
	if bytes.Equal(a.Salt, b.Salt) {
		t.Error("two credentials drew the same salt")
	}
}

func TestParseAddScramErrors(t *testing.T) {
	const secret = "s3cr3t-Value"
	for _, tc := range []struct{ arg, want string }{
		{"alice", "want MECHANISM=[name=NAME,password=PASSWORD]"},
		{"SCRAM-SHA-1=[name=a,password=" + secret + "]", `the mechanism "SCRAM-SHA-1" is not supported: want SCRAM-SHA-256 or SCRAM-SHA-512`},
		{"scram-sha-256=[name=a,password=" + secret + "]", `the mechanism "scram-sha-256" is not supported`},
		{"SCRAM-SHA-256=name=a,password=" + secret, "expected the configuration in brackets"},
		{"SCRAM-SHA-256=[name=a,password=" + secret + ",x]", "a component has no equals sign"},
		{"SCRAM-SHA-256=[password=" + secret + "]", "you must supply 'name'"},
		{"SCRAM-SHA-256=[name=a]", `you must supply one of 'password' or 'saltedpassword' for "a"`},
		{"SCRAM-SHA-256=[name=a,password=" + secret + ",saltedpassword=AAAA,salt=AAAA]", "you cannot supply both 'password' and 'saltedpassword'"},
		{"SCRAM-SHA-256=[name=a,saltedpassword=" + secret + "]", "you must supply 'salt' with 'saltedpassword'"},
		{"SCRAM-SHA-256=[name=a,salt=c2FsdA==,saltedpassword=" + secret + "!]", `failed to decode the salted password of "a"`},
		{"SCRAM-SHA-256=[name=a,salt=%%,password=" + secret + "]", `failed to decode the salt of "a"`},
		{"SCRAM-SHA-256=[name=a,iterations=many,password=" + secret + "]", `failed to parse the iteration count "many" of "a"`},
		{"SCRAM-SHA-256=[name=a,iterations=1000,password=" + secret + "]", `user "a": SCRAM-SHA-256 iterations 1000 outside [4096, 16384]`},
		{"SCRAM-SHA-256=[name=a,password=" + secret + ",pepper=x,Name=y]", `unknown SCRAM configurations for "a": Name, pepper`},
	} {
		_, err := ParseAddScram(tc.arg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.arg, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the password: %v", tc.arg, err)
		}
	}
}
