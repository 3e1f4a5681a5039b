package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Every Step, whatever the client sends, returns without panicking, and a
// failed authentication is an *Error that ends the exchange.
func checkStep(t *testing.T, reply []byte, done bool, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if !IsAuthError(err) {
		t.Fatalf("Step failed with %T %v, want an *Error", err, err)
	}
	if !done || reply != nil {
		t.Fatalf("Step failed with reply %q, done %v", reply, done)
	}
}

// checkEnded checks that a session refuses any further token.
func checkEnded(t *testing.T, s Session) {
	t.Helper()
	reply, done, err := s.Step([]byte("n,,n=user,r=x"))
	if !done || !IsAuthError(err) || reply != nil {
		t.Fatalf("Step after the end: reply %q, done %v, err %v", reply, done, err)
	}
}

func FuzzPlainStep(f *testing.F) {
	for _, seed := range []string{
		"\x00admin\x00admin-secret",
		"admin\x00admin\x00admin-secret",
		"alice\x00admin\x00admin-secret",
		"\x00admin\x00wrong",
		"\x00\x00",
		"a\x00b\x00c\x00d",
		"",
		"\x00admin\x00admin-secret\xff",
	} {
		f.Add([]byte(seed))
	}
	users := PlainUsers{"admin": "admin-secret", "bob": "b"}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := NewPlain(users).NewSession()
		reply, done, err := s.Step(msg)
		checkStep(t, reply, done, err)
		if !done {
			t.Fatal("PLAIN needs a second step")
		}
		if err == nil {
			p := s.Principal()
			parts := bytes.Split(msg, []byte{0})
			if p.Name == "" || users[p.Name] != string(parts[2]) {
				t.Fatalf("%q logged in as %v", msg, p)
			}
		}
		checkEnded(t, s)
	})
}

func fuzzScram(f *testing.F) Mechanism {
	store := scramStore{}
	c, err := NewScramCredential(MechanismScramSHA256, "pencil", []byte("salt"), MinScramIterations)
	if err != nil {
		f.Fatal(err)
	}
	store[MechanismScramSHA256+"/user"] = c
	tokens := tokenStore{MechanismScramSHA256 + "/tok": {Credential: c, Owner: User("owner"), Expiry: time.Unix(2e9, 0)}}
	m, err := NewScram(MechanismScramSHA256, store, WithDelegationTokens(tokens), withScramNonce(func() string { return "srv" }))
	if err != nil {
		f.Fatal(err)
	}
	return m
}

func FuzzScramClientFirst(f *testing.F) {
	for _, seed := range []string{
		"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
		"n,a=user,n=user,r=abc",
		"n,a=other,n=user,r=abc",
		"n,,n=tok,r=abc,tokenauth=true",
		"y,,n=a=2Cb=3D,r=x",
		"n,,n=unknown,r=abc,ext=1",
		"p=tls-unique,,n=user,r=abc",
		"n,,m=x,n=user,r=abc",
		"n,,n=us=er,r=abc",
		",,,",
		"",
	} {
		f.Add([]byte(seed))
	}
	m := fuzzScram(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := m.NewSession()
		reply, done, err := s.Step(msg)
		checkStep(t, reply, done, err)
		if err == nil && (done || !bytes.HasPrefix(reply, []byte("r=")) || !bytes.Contains(reply, []byte("srv,s="))) {
			t.Fatalf("client-first %q got server-first %q, done %v", msg, reply, done)
		}
		if done {
			checkEnded(t, s)
		}
	})
}

func FuzzScramClientFinal(f *testing.F) {
	m := fuzzScram(f)
	c := testScramClient{mechanism: MechanismScramSHA256, user: "user", password: "pencil"}
	first := []byte(c.first())
	s := m.NewSession()
	serverFirst, _, err := s.Step(first)
	if err != nil {
		f.Fatal(err)
	}
	withoutProof, proof, _ := c.final(f, string(serverFirst))
	for _, seed := range []string{
		withoutProof + ",p=" + proof,
		withoutProof + ",ext=x,p=" + proof,
		withoutProof + ",p=" + proof[1:],
		withoutProof + ",p=",
		"c=biws,r=x,p=AAAA",
		"c=,r=,p=",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := m.NewSession()
		if _, _, err := s.Step(first); err != nil {
			t.Fatal(err)
		}
		reply, done, err := s.Step(msg)
		checkStep(t, reply, done, err)
		if !done {
			t.Fatalf("client-final %q did not end the exchange", msg)
		}
		if err == nil && s.Principal() != User("user") {
			t.Fatalf("client-final %q logged in as %v", msg, s.Principal())
		}
		checkEnded(t, s)
	})
}

func FuzzOAuthBearerStep(f *testing.F) {
	now := func() time.Time { return oauthNow }
	good := unsecuredJWS(f, goodUnsecuredClaims())
	expired := unsecuredJWS(f, with(goodUnsecuredClaims(), "exp", float64(oauthNow.Unix()-1)))
	claims := goodJWTClaims()
	signed := signJWT(f, jwt.SigningMethodES256, "e1", testKeys().ec, claims)
	for _, seed := range []string{
		"n,,\x01auth=Bearer " + good + "\x01\x01",
		"n,a=alice,\x01auth=Bearer " + good + "\x01\x01",
		"n,a=bob,\x01auth=Bearer " + good + "\x01\x01",
		"y,,\x01k=v\x01auth=bearer  " + good + "\x01\x01",
		"n,,\x01auth=Bearer " + expired + "\x01\x01",
		"n,,\x01auth=Bearer " + signed + "\x01\x01",
		"n,,\x01auth=Bearer a..b\x01\x01",
		"n,,\x01\x01",
		"\x01",
		"",
	} {
		f.Add([]byte(seed), []byte{1})
	}
	unsecured, err := NewOAuthBearer(OAuthConfig{Now: now, Unsecured: UnsecuredOptions{RequiredScope: []string{"LOGIN_TO_KAFKA"}}})
	if err != nil {
		f.Fatal(err)
	}
	jwks, err := LoadJWKS(context.Background(), writeJWKSFile(f, jwksJSON(f)), nil)
	if err != nil {
		f.Fatal(err)
	}
	signedMech, err := NewOAuthBearer(OAuthConfig{Now: now, JWKS: jwks, ExpectedAudience: []string{"kafka"}, OnUnknownKeyID: func(string) {}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		for _, m := range []Mechanism{unsecured, signedMech} {
			s := m.NewSession()
			reply, done, err := s.Step(first)
			checkStep(t, reply, done, err)
			if err == nil && done && s.Principal().Name == "" {
				t.Fatalf("%q logged in with no principal", first)
			}
			if !done {
				if !json.Valid(reply) || !strings.HasPrefix(string(reply), `{"status":"`) {
					t.Fatalf("%q got challenge %q", first, reply)
				}
				reply, done, err = s.Step(second)
				checkStep(t, reply, done, err)
				if err == nil {
					t.Fatalf("the exchange succeeded after a challenge with %q", second)
				}
			}
			checkEnded(t, s)
		}
	})
}

func FuzzParseJAAS(f *testing.F) {
	for _, seed := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`,
		`m.L optional a="q\"b\\s\n\t\101\60\4011" b='x\;' c=word;`,
		"/* c */ m.L REQUIRED // x\n a=b /c\n;",
		`"quoted module" sufficient "quoted key"="v";`,
		`m.L required a="unterminated;`,
		`a.L required; b.L required;`,
		`m.L required a=;`,
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJAAS(s)
		if err != nil {
			return
		}
		PlainUsersFromJAAS(j)
		UnsecuredOptionsFromJAAS(j)
		// Written back with every name and value quoted, the entry parses to
		// itself.
		again, err := ParseJAAS(quoteJAAS(j))
		if err != nil {
			t.Fatalf("%q parsed to %#v, whose quoted form %q fails: %v", s, j, quoteJAAS(j), err)
		}
		if again.LoginModule != j.LoginModule || again.ControlFlag != j.ControlFlag || len(again.Options) != len(j.Options) {
			t.Fatalf("%q: %#v, quoted again %#v", s, j, again)
		}
		for k, v := range j.Options {
			if again.Options[k] != v {
				t.Fatalf("%q: option %q is %q, quoted again %q", s, k, v, again.Options[k])
			}
		}
	})
}

func quoteJAAS(j JAASConfig) string {
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	var b strings.Builder
	b.WriteString(`"` + q.Replace(j.LoginModule) + `" ` + j.ControlFlag)
	for _, k := range sortedKeys(j.Options) {
		b.WriteString(` "` + q.Replace(k) + `"="` + q.Replace(j.Options[k]) + `"`)
	}
	b.WriteString(";")
	return b.String()
}
