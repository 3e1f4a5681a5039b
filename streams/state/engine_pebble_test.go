package state

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestPebbleCommitIsDurable: after a crash that loses everything unsynced,
// what Commit returned for is there and nothing uncommitted is; the runtime
// writes the checkpoint file after Commit on that promise.
func TestPebbleCommitIsDurable(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := OpenPebbleKeyValueStore("kv", "/db", PebbleOptions{fs: fs})
	must(t, err)
	must(t, s.Put([]byte("committed"), []byte("1")))
	must(t, s.Commit())
	must(t, s.Put([]byte("uncommitted"), []byte("2")))

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	must(t, s.Close())
	after, err := OpenPebbleKeyValueStore("kv", "/db", PebbleOptions{fs: crashed})
	must(t, err)
	defer after.Close()
	it, err := after.All()
	got := collect(t, it, err)
	if want := []KeyValue{{Key: []byte("committed"), Value: []byte("1")}}; !equalKVs(got, want) {
		t.Fatalf("after the crash: %q; want %q", got, want)
	}
}
