package httpauth

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
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
