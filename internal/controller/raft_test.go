package controller

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/internal/vfs"
)

// The metadata directory and its raft directory are synced into their
// parents when created, and the raft directory once bolt and the snapshot
// store have made their files in it.
func TestRaftDirectoriesAreSyncedIntoTheirParents(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "__cluster_metadata")
	c, err := newController(testConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var synced []string
	c.fs = vfs.NewFaulty(vfs.OS, func(op vfs.Op, name string) error {
		if op == vfs.OpSyncDir {
			mu.Lock()
			synced = append(synced, name)
			mu.Unlock()
		}
		return nil
	})
	err = c.startRaft()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{dir, root, filepath.Join(dir, "raft")}; !slices.Equal(synced, want) {
		t.Fatalf("synced %v, want %v", synced, want)
	}
}
