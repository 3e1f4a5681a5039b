package broker

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// describedSCRAMs describes users with kadm: user -> "mechanism=iterations"
// per credential, or the error.
func describedSCRAMs(t *testing.T, adm *kadm.Client, users ...string) map[string][]string {
	t.Helper()
	res, err := adm.DescribeUserSCRAMs(t.Context(), users...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for user, d := range res {
		if d.Err != nil {
			out[user] = []string{d.Err.(*kerr.Error).Message}
			continue
		}
		out[user] = []string{}
		for _, ci := range d.CredInfos {
			out[user] = append(out[user], ci.String())
		}
	}
	return out
}

func alteredSCRAMs(t *testing.T, adm *kadm.Client, del []kadm.DeleteSCRAM, up []kadm.UpsertSCRAM) map[string]string {
	t.Helper()
	res, err := adm.AlterUserSCRAMs(t.Context(), del, up)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for user, r := range res {
		out[user] = "ok"
		if r.Err != nil {
			out[user] = r.Err.(*kerr.Error).Message
		}
	}
	return out
}

// TestScramCredentialsWithKadm: AlterUserScramCredentials upserts and
// deletes with kadm, with Kafka's per-user errors; DescribeUserScram
// Credentials shows mechanisms and iterations, all users or named ones.
func TestScramCredentialsWithKadm(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	adm, _ := adminClient(t, b)
	got := alteredSCRAMs(t, adm, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
	})
	if diff := cmp.Diff(map[string]string{"alice": "ok", "bob": "ok"}, got); diff != "" {
		t.Fatalf("upsert (-want +got):\n%s", diff)
	}
	want := map[string][]string{
		"alice": {"SCRAM-SHA-256=iterations=8192"},
		"bob":   {"SCRAM-SHA-512=iterations=4096"},
	}
	if diff := cmp.Diff(want, describedSCRAMs(t, adm)); diff != "" {
		t.Errorf("describe all (-want +got):\n%s", diff)
	}

	// A second mechanism for alice, bob deleted; the refusals are per user:
	// carol named twice is refused both times.
	got = alteredSCRAMs(t, adm, []kadm.DeleteSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha512},
		{User: "nobody", Mechanism: kadm.ScramSha256},
	}, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 16384, Password: "alice-secret"},
		{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "c"},
		{User: "carol", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "c"},
		{User: "dave", Mechanism: kadm.ScramSha256, Iterations: 100, Salt: []byte("s"), SaltedPassword: []byte("weak")},
		{User: "erin", Mechanism: kadm.ScramSha256, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
	})
	if diff := cmp.Diff(map[string]string{
		"bob": "ok", "alice": "ok", "erin": "ok",
		"nobody": kerr.ResourceNotFound.Message, "carol": kerr.DuplicateResource.Message, "dave": kerr.UnacceptableCredential.Message,
	}, got); diff != "" {
		t.Errorf("alter (-want +got):\n%s", diff)
	}
	want = map[string][]string{
		"alice": {"SCRAM-SHA-256=iterations=8192", "SCRAM-SHA-512=iterations=16384"},
		"erin":  {"SCRAM-SHA-256=iterations=4096"},
	}
	if diff := cmp.Diff(want, describedSCRAMs(t, adm)); diff != "" {
		t.Errorf("describe all (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{
		"alice": {"SCRAM-SHA-256=iterations=8192", "SCRAM-SHA-512=iterations=16384"},
		"bob":   {kerr.ResourceNotFound.Message},
	}, describedSCRAMs(t, adm, "alice", "bob")); diff != "" {
		t.Errorf("describe named (-want +got):\n%s", diff)
	}

	// What kadm cannot send: a name asked twice, a mechanism Kafka does
	// not know.
	cl := newFranz(t, b.Addr())
	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	dreq.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "alice"}, {Name: "erin"}, {Name: "alice"}}
	dresp, err := dreq.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(dresp.Results) != 2 || dresp.Results[0].User != "alice" || dresp.Results[0].ErrorCode != kerr.DuplicateResource.Code ||
		dresp.Results[1].User != "erin" || dresp.Results[1].ErrorCode != 0 || len(dresp.Results[1].CredentialInfos) != 1 {
		t.Errorf("describe alice twice: %+v", dresp.Results)
	}
	areq := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	areq.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "frank", Mechanism: 3, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")}}
	areq.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "", Mechanism: 1}}
	aresp, err := areq.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(aresp.Results) != 2 || aresp.Results[0].User != "" || aresp.Results[0].ErrorCode != kerr.UnacceptableCredential.Code ||
		aresp.Results[1].User != "frank" || aresp.Results[1].ErrorCode != kerr.UnsupportedSaslMechanism.Code {
		t.Errorf("alter: %+v", aresp.Results)
	}

	// The credentials are in the metadata log.
	b = restartBroker(t, b, dir)
	adm, _ = adminClient(t, b)
	if diff := cmp.Diff(want, describedSCRAMs(t, adm)); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
}

// TestScramPasswordNeverStored: after an upsert the image keeps the salt,
// StoredKey and ServerKey that RFC 5802 derives, and neither the password
// nor the salted password the client sent is anywhere in the broker's
// files, in raw, base64 or hex form, while the stored key is (so the
// search can find what is there).
func TestScramPasswordNeverStored(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	adm, _ := adminClient(t, b)
	const password = "correct-horse-battery-staple"
	salt := []byte("a-salt-of-24-bytes-long!")
	salted, err := pbkdf2.Key(sha256.New, password, salt, 4096, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	got := alteredSCRAMs(t, adm, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Salt: salt, SaltedPassword: salted}})
	if got["alice"] != "ok" {
		t.Fatalf("upsert: %v", got)
	}
	want, err := auth.NewScramCredential(auth.MechanismScramSHA256, password, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	cred, ok := b.meta.Load().ScramCredential("alice", metadata.ScramSHA256)
	if !ok || !bytes.Equal(cred.Salt, want.Salt) || !bytes.Equal(cred.StoredKey, want.StoredKey) ||
		!bytes.Equal(cred.ServerKey, want.ServerKey) || cred.Iterations != 4096 {
		t.Fatalf("image credential %+v, %v: want the salt and keys of %+v", cred, ok, want)
	}
	// Through a restart too: what is read back is what was written.
	b = restartBroker(t, b, dir)
	if again, _ := b.meta.Load().ScramCredential("alice", metadata.ScramSHA256); !cmp.Equal(cred, again) {
		t.Errorf("after restart %+v, want %+v", again, cred)
	}
	b.Close()

	forms := func(secret []byte) [][]byte {
		return [][]byte{secret, []byte(base64.StdEncoding.EncodeToString(secret)), []byte(base64.RawStdEncoding.EncodeToString(secret)),
			[]byte(base64.URLEncoding.EncodeToString(secret)), []byte(hex.EncodeToString(secret))}
	}
	var files int
	var storedKeySeen bool
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, form := range append(forms([]byte(password)), forms(salted)...) {
			if bytes.Contains(data, form) {
				t.Errorf("%s holds %q", path, form)
			}
		}
		storedKeySeen = storedKeySeen || bytes.Contains(data, []byte(base64.StdEncoding.EncodeToString(want.StoredKey)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 || !storedKeySeen {
		t.Fatalf("searched %d files and never found the stored key: the search proves nothing", files)
	}
}
