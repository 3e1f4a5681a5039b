package controller

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/vfs"
)

func scramRecord(t *testing.T, user, password string) metadata.UserScramCredentialRecord {
	t.Helper()
	c, err := auth.NewScramCredential(auth.MechanismScramSHA256, password, []byte("salt-of-"+user), 4096)
	if err != nil {
		t.Fatal(err)
	}
	return metadata.UserScramCredentialRecord{Name: user, Mechanism: metadata.ScramSHA256, Salt: c.Salt,
		StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}
}

// The bootstrap records are committed on the first start, with the
// cluster ID, and never read again.
func TestBootstrapRecordsOnFirstStart(t *testing.T) {
	dir := t.TempDir()
	alice := scramRecord(t, "alice", "alice-secret")
	if err := WriteBootstrapRecords(vfs.OS, dir, []metadata.Record{alice}); err != nil {
		t.Fatal(err)
	}
	c := open(t, testConfig(dir))
	got, ok := c.Image().ScramCredential("alice", metadata.ScramSHA256)
	if !ok || !bytes.Equal(got.StoredKey, alice.StoredKey) || !bytes.Equal(got.ServerKey, alice.ServerKey) || got.Iterations != 4096 {
		t.Fatalf("alice after the first start: %+v %v", got, ok)
	}
	c.Close()

	if err := WriteBootstrapRecords(vfs.OS, dir, []metadata.Record{scramRecord(t, "bob", "bob-secret")}); err != nil {
		t.Fatal(err)
	}
	c = open(t, testConfig(dir))
	if _, ok := c.Image().ScramCredential("bob", metadata.ScramSHA256); ok {
		t.Fatal("a second start committed the bootstrap records again")
	}
	if _, ok := c.Image().ScramCredential("alice", metadata.ScramSHA256); !ok {
		t.Fatal("alice is gone after a restart")
	}
}

// Anything but SCRAM credentials is refused when written, and a file that
// holds it fails the first start rather than being skipped.
func TestBootstrapRecordsRefused(t *testing.T) {
	alice := scramRecord(t, "alice", "alice-secret")
	few := alice
	few.Iterations = 100
	for _, tc := range []struct {
		recs []metadata.Record
		want string
	}{
		{[]metadata.Record{metadata.TopicRecord{Name: "t"}}, "a topic record cannot be bootstrapped: only SCRAM credentials can"},
		{[]metadata.Record{few}, `the SCRAM-SHA-256 credential of "alice" has 100 iterations, outside [4096, 16384]`},
		{[]metadata.Record{alice, alice}, `the SCRAM-SHA-256 credential of "alice" is given twice`},
	} {
		if err := WriteBootstrapRecords(vfs.OS, t.TempDir(), tc.recs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("write %v: %v, want %q", tc.recs, err, tc.want)
		}
	}

	topic, err := metadata.EncodeBatch([]metadata.Record{metadata.TopicRecord{Name: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ content, want string }{
		{string(topic), BootstrapRecordsFile + ": a topic record cannot be bootstrapped"},
		{"not json", BootstrapRecordsFile + ": metadata: decode batch"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, BootstrapRecordsFile), []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := Open(ctx, testConfig(dir))
		cancel()
		if err == nil {
			c.Close()
			t.Fatalf("%q: the first start succeeded", tc.content)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("first start: %v, want %q", err, tc.want)
		}
	}
}
