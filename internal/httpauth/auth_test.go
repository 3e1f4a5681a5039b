package httpauth

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLoadUsers reads Jetty's PropertyFileLoginModule format and refuses
// what it cannot check.
func TestLoadUsers(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "users.properties")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sum := md5.Sum([]byte("pw"))
	users, err := LoadUsers(write("# comment\n! another\n\nalice: secret,admin, developer\nbob=MD5:" + hex.EncodeToString(sum[:]) + "\ncarol : x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 3 || strings.Join(users["alice"].Roles, "|") != "admin|developer" || len(users["carol"].Roles) != 0 {
		t.Fatalf("users %+v", users)
	}
	for _, c := range []struct {
		user, pw string
		ok       bool
	}{{"alice", "secret", true}, {"alice", "secret ", false}, {"bob", "pw", true}, {"bob", "MD5:" + hex.EncodeToString(sum[:]), false}, {"carol", "x", true}} {
		if got := users[c.user].Matches(c.pw); got != c.ok {
			t.Errorf("%s/%q: %v", c.user, c.pw, got)
		}
	}
	for _, bad := range []string{"alice\n", "alice:\n", "alice: OBF:1v2j1uum1xtv1zej1zer1xtn1uvk1v1v\n", "alice: CRYPT:adpexzg3FUZAk\n"} {
		if _, err := LoadUsers(write(bad)); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
	if _, err := LoadUsers(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file was read")
	}
}

// TestCheck: who a request came in as, or why not: a file user with its
// roles, a user the login accepts (no roles, Kafka set), a refused login
// 401, a login that cannot reach the cluster its own error, a role not
// allowed 403.
func TestCheck(t *testing.T) {
	login := func(_ context.Context, user, password string) error {
		switch {
		case user == "down":
			return errors.New("no broker answered")
		case password != user+"-secret":
			return ErrLoginFailed
		}
		return nil
	}
	a := &Auth{Realm: "r", Roles: []string{"dev", "*"}, Users: map[string]User{"alice": {Password: "pw", Roles: []string{"dev"}}}, Login: login}
	strict := &Auth{Realm: "r", Roles: []string{"admin"}, Users: a.Users, Login: login}
	for _, c := range []struct {
		auth           *Auth
		user, password string
		want           Principal
		err            error
	}{
		{a, "alice", "pw", Principal{User: "alice", Password: "pw", Roles: []string{"dev"}}, nil},
		{a, "alice", "bad", Principal{}, ErrUnauthorized},
		{a, "bob", "bob-secret", Principal{User: "bob", Password: "bob-secret", Kafka: true}, nil},
		{a, "bob", "nope", Principal{}, ErrUnauthorized},
		{a, "", "", Principal{}, ErrUnauthorized},
		{strict, "alice", "pw", Principal{User: "alice", Password: "pw", Roles: []string{"dev"}}, ErrForbidden},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, c.password)
		}
		got, err := c.auth.Check(req)
		if !errors.Is(err, c.err) || (err == nil && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s/%s: %+v %v, want %+v %v", c.user, c.password, got, err, c.want, c.err)
		}
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.SetBasicAuth("down", "x")
	if _, err := a.Check(req); err == nil || errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "no broker answered") {
		t.Errorf("a cluster that cannot be reached: %v", err)
	}
	for _, name := range []string{"PLAIN", "scram-sha-256", "SCRAM-SHA-512"} {
		if _, err := Mechanism(name, "u", "p"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Mechanism("GSSAPI", "u", "p"); err == nil {
		t.Error("GSSAPI was taken")
	}
}
