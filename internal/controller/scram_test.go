package controller

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// upsertion salts password as a client does (kadm, kafka-configs.sh).
func upsertion(t *testing.T, user string, mechanism int8, password string, iterations int32) ScramUpsertion {
	t.Helper()
	salt := []byte("salt-of-" + user)
	h, size := sha256.New, sha256.Size
	if mechanism == metadata.ScramSHA512 {
		h, size = sha512.New, sha512.Size
	}
	salted, err := pbkdf2.Key(h, password, salt, int(iterations), size)
	if err != nil {
		t.Fatal(err)
	}
	return ScramUpsertion{User: user, Mechanism: mechanism, Iterations: iterations, Salt: salt, SaltedPassword: salted}
}

func checkScram(t *testing.T, got []ScramResult, want []ScramResult) {
	t.Helper()
	for i := range got {
		got[i].ErrorMessage = "" // messages are checked where they matter
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestAlterUserScramCredentials(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	alice := upsertion(t, "alice", metadata.ScramSHA256, "alice-secret", 4096)
	bob := upsertion(t, "bob", metadata.ScramSHA512, "bob-secret", 8192)
	checkScram(t, c.AlterUserScramCredentials(ctx(t), nil, []ScramUpsertion{alice, bob}),
		[]ScramResult{{User: "alice"}, {User: "bob"}})

	// The image keeps salt, StoredKey, ServerKey and iterations: what
	// auth derives from the salted password, which itself is kept nowhere.
	want, err := auth.NewScramCredential(auth.MechanismScramSHA256, "alice-secret", alice.Salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := c.Image().ScramCredential("alice", metadata.ScramSHA256)
	if !ok || !bytes.Equal(got.Salt, want.Salt) || !bytes.Equal(got.StoredKey, want.StoredKey) ||
		!bytes.Equal(got.ServerKey, want.ServerKey) || got.Iterations != 4096 {
		t.Fatalf("alice's credential %+v, %v; want the keys of %+v", got, ok, want)
	}
	for _, k := range [][]byte{got.Salt, got.StoredKey, got.ServerKey} {
		if bytes.Contains(k, alice.SaltedPassword) || bytes.Contains(k, []byte("alice-secret")) {
			t.Error("the image holds the salted password or the password")
		}
	}
	if _, ok := c.Image().ScramCredential("bob", metadata.ScramSHA512); !ok {
		t.Error("bob has no SCRAM-SHA-512 credential")
	}

	// Each refusal is per user; the valid change beside them commits.
	carol := upsertion(t, "carol", metadata.ScramSHA256, "c", 4096)
	tooFew := upsertion(t, "dave", metadata.ScramSHA256, "d", 4095)
	tooMany := upsertion(t, "erin", metadata.ScramSHA256, "e", 4096)
	tooMany.Iterations = 16385
	unknownMech := upsertion(t, "frank", metadata.ScramSHA256, "f", 4096)
	unknownMech.Mechanism = 3
	noSalt := upsertion(t, "grace", metadata.ScramSHA256, "g", 4096)
	noSalt.Salt = nil
	noPassword := upsertion(t, "heidi", metadata.ScramSHA256, "h", 4096)
	noPassword.SaltedPassword = nil
	noName := upsertion(t, "", metadata.ScramSHA256, "x", 4096)
	// bob twice (deletion and upsertion, another mechanism even) is one
	// DUPLICATE_RESOURCE; alice deleting a mechanism she lacks is
	// RESOURCE_NOT_FOUND, and her later upsertion is not looked at.
	res := c.AlterUserScramCredentials(ctx(t),
		[]ScramDeletion{{User: "bob", Mechanism: metadata.ScramSHA512}, {User: "alice", Mechanism: metadata.ScramSHA512}, {User: "ivan", Mechanism: 0}},
		[]ScramUpsertion{carol, tooFew, tooMany, unknownMech, noSalt, noPassword, noName,
			upsertion(t, "bob", metadata.ScramSHA256, "b", 4096), upsertion(t, "alice", metadata.ScramSHA512, "a", 4096)})
	messages := map[string]string{}
	for _, r := range res {
		messages[r.User] = r.ErrorMessage
	}
	checkScram(t, res, []ScramResult{
		{User: "bob", ErrorCode: kerr.DuplicateResource.Code},
		{User: "alice", ErrorCode: kerr.ResourceNotFound.Code},
		{User: "ivan", ErrorCode: kerr.UnsupportedSaslMechanism.Code},
		{User: "carol"},
		{User: "dave", ErrorCode: kerr.UnacceptableCredential.Code},
		{User: "erin", ErrorCode: kerr.UnacceptableCredential.Code},
		{User: "frank", ErrorCode: kerr.UnsupportedSaslMechanism.Code},
		{User: "grace", ErrorCode: kerr.UnacceptableCredential.Code},
		{User: "heidi", ErrorCode: kerr.UnacceptableCredential.Code},
		{User: "", ErrorCode: kerr.UnacceptableCredential.Code},
	})
	for user, msg := range map[string]string{
		"bob": "A user credential cannot be altered twice in the same request", "alice": "Attempt to delete a user credential that does not exist",
		"dave": "Too few iterations", "erin": "Too many iterations", "frank": "Unknown SCRAM mechanism", "": "Username must not be empty",
	} {
		if messages[user] != msg {
			t.Errorf("%q: message %q, want %q", user, messages[user], msg)
		}
	}
	var users []string
	for _, cr := range c.Image().ScramCredentials() {
		users = append(users, cr.User)
	}
	if diff := cmp.Diff([]string{"alice", "bob", "carol"}, users); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}

	// Deleting, and setting a credential again, replace what is there.
	again := upsertion(t, "alice", metadata.ScramSHA256, "new", 8192)
	checkScram(t, c.AlterUserScramCredentials(ctx(t), []ScramDeletion{{User: "bob", Mechanism: metadata.ScramSHA512}}, []ScramUpsertion{again}),
		[]ScramResult{{User: "bob"}, {User: "alice"}})
	if _, ok := c.Image().ScramCredential("bob", metadata.ScramSHA512); ok {
		t.Error("bob's credential was not deleted")
	}
	if got, _ := c.Image().ScramCredential("alice", metadata.ScramSHA256); got.Iterations != 8192 {
		t.Errorf("alice's credential has %d iterations, want 8192", got.Iterations)
	}
	before := c.Image()
	checkScram(t, c.AlterUserScramCredentials(ctx(t), []ScramDeletion{{User: "bob", Mechanism: metadata.ScramSHA512}}, nil),
		[]ScramResult{{User: "bob", ErrorCode: kerr.ResourceNotFound.Code}})
	if c.Image() != before {
		t.Error("a refused request wrote")
	}
}

// TestScramAndACLsInSnapshot: a Raft snapshot carries the credentials and
// ACLs, a restart from it rebuilds them, and its files hold the stored
// key but never the salted password.
func TestScramAndACLsInSnapshot(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(ctx(t), testConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	alice := upsertion(t, "alice", metadata.ScramSHA512, "alice-secret", 4096)
	checkScram(t, c.AlterUserScramCredentials(ctx(t), nil, []ScramUpsertion{alice}), []ScramResult{{User: "alice"}})
	checkACLResults(t, c.CreateACLs(ctx(t), []metadata.ACL{topicACL("orders", patPrefixed, "User:alice", opRead, permAllow)}), 0)
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	cred, _ := c.Image().ScramCredential("alice", metadata.ScramSHA512)
	acls := c.Image().ACLs()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	var snapshotFiles int
	storedKey := base64.StdEncoding.EncodeToString(cred.StoredKey)
	err = filepath.WalkDir(filepath.Join(dir, "raft", "snapshots"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "state.bin") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		snapshotFiles++
		if !bytes.Contains(data, []byte(storedKey)) {
			t.Errorf("%s lacks alice's stored key", path)
		}
		for _, form := range [][]byte{alice.SaltedPassword, []byte(base64.StdEncoding.EncodeToString(alice.SaltedPassword)), []byte("alice-secret")} {
			if bytes.Contains(data, form) {
				t.Errorf("%s holds %q", path, form)
			}
		}
		return nil
	})
	if err != nil || snapshotFiles == 0 {
		t.Fatalf("%d snapshot files: %v", snapshotFiles, err)
	}

	c = open(t, testConfig(dir))
	if got, ok := c.Image().ScramCredential("alice", metadata.ScramSHA512); !ok || !cmp.Equal(got, cred) {
		t.Errorf("after restart %+v, %v; want %+v", got, ok, cred)
	}
	if diff := cmp.Diff(acls, c.Image().ACLs()); diff != "" {
		t.Errorf("ACLs after restart (-want +got):\n%s", diff)
	}
}
