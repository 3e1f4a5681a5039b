package auth

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretValue is put where a password goes in failing configs: no error may
// repeat it.
const secretValue = "s3cr3t-Value"

func assertNoSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q repeats the secret %q", err, s)
		}
	}
}

func TestPlainUsersFromJAAS(t *testing.T) {
	j, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`)
	if err != nil {
		t.Fatal(err)
	}
	users, err := PlainUsersFromJAAS(j)
	if err != nil {
		t.Fatal(err)
	}
	want := PlainUsers{"admin": "admin-secret", "alice": "alice-secret"}
	if diff := cmp.Diff(want, users); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	for _, verb := range []string{"%v", "%#v", "%s"} {
		if out := fmt.Sprintf(verb, users); strings.Contains(out, "secret") {
			t.Errorf("%s printed a password: %s", verb, out)
		}
	}
}

func TestPlainUsersFromJAASErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"other module", `o.a.k.c.s.scram.ScramLoginModule required user_a="` + secretValue + `";`, "PLAIN users come from"},
		{"no users", PlainLoginModule + ` required username="a" password="` + secretValue + `";`, "no user_<name> options"},
		{"empty user name", PlainLoginModule + ` required user_="` + secretValue + `";`, `option "user_" names no valid user`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := ParseJAAS(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			_, err = PlainUsersFromJAAS(j)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PlainUsersFromJAAS: %v, want %q", err, tc.want)
			}
			assertNoSecret(t, err, secretValue)
		})
	}
}

func TestPlainUsersCheckPlain(t *testing.T) {
	users := PlainUsers{"alice": "alice-secret", "bob": "b"}
	for _, tc := range []struct {
		user, password string
		ok             bool
	}{
		{"alice", "alice-secret", true},
		{"bob", "b", true},
		{"alice", "alice-secreT", false},
		{"alice", "alice-secret ", false},
		{"alice", "", false},
		{"alice", "b", false},
		{"carol", "alice-secret", false},
		{"carol", "", false},
		{"", "", false},
	} {
		err := users.CheckPlain(tc.user, tc.password)
		if tc.ok {
			if err != nil {
				t.Errorf("CheckPlain(%q, %q) = %v, want success", tc.user, tc.password, err)
			}
			continue
		}
		if !IsAuthError(err) || err.Error() != msgInvalidUserPassword {
			t.Errorf("CheckPlain(%q, %q) = %v, want %q", tc.user, tc.password, err, msgInvalidUserPassword)
		}
		assertNoSecret(t, err, tc.password, "alice-secret")
	}
}
