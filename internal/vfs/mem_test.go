package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, f File, off int64, s string) {
	t.Helper()
	if _, err := f.WriteAt([]byte(s), off); err != nil {
		t.Fatal(err)
	}
}

func content(t *testing.T, m FS, name string) string {
	t.Helper()
	b, err := ReadFile(m, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMemCrashKeepsSyncedData(t *testing.T) {
	m := NewMem()
	if err := MkdirAllDurable(m, "/d"); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/d/a")
	write(t, f, 0, "hello")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	write(t, f, 5, " world")
	for seed := range uint64(50) {
		c := m.CrashClone(CrashTorn, rand.New(rand.NewPCG(seed, 1)))
		got := content(t, c, "/d/a")
		if len(got) < 5 || got[:5] != "hello" || !bytes.HasPrefix([]byte("hello world"), []byte(got)) {
			t.Fatalf("seed %d: crash left %q", seed, got)
		}
	}
	c := m.CrashClone(CrashLoseUnsynced, rand.New(rand.NewPCG(1, 1)))
	if got := content(t, c, "/d/a"); got != "hello" {
		t.Fatalf("lose unsynced: %q", got)
	}
}

func TestMemNamesNeedSyncDir(t *testing.T) {
	m := NewMem()
	MkdirAllDurable(m, "/d")
	f, _ := m.Create("/d/a")
	write(t, f, 0, "x")
	f.Sync()
	c := m.CrashClone(CrashTorn, rand.New(rand.NewPCG(1, 2)))
	if ok, _ := c.Exists("/d/a"); ok {
		t.Fatal("file survived without a directory sync")
	}
	m.SyncDir("/d")
	if err := m.Rename("/d/a", "/d/b"); err != nil {
		t.Fatal(err)
	}
	c = m.CrashClone(CrashTorn, rand.New(rand.NewPCG(1, 2)))
	if ok, _ := c.Exists("/d/a"); !ok {
		t.Fatal("unsynced rename took effect")
	}
	m.SyncDir("/d")
	c = m.CrashClone(CrashTorn, rand.New(rand.NewPCG(1, 2)))
	if got := content(t, c, "/d/b"); got != "x" {
		t.Fatalf("renamed file holds %q", got)
	}
}

// crashStates takes crash images of m with every seed and reports which of
// the names exist in each, as a set of states like "/d /d/e".
func crashStates(m *Mem, mode CrashMode, names ...string) map[string]bool {
	states := map[string]bool{}
	for seed := range uint64(64) {
		c := m.CrashClone(mode, rand.New(rand.NewPCG(seed, 4)))
		var have []string
		for _, n := range names {
			if ok, _ := c.Exists(n); ok {
				have = append(have, n)
			}
		}
		states[strings.Join(have, " ")] = true
	}
	return states
}

func setOf(states ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range states {
		out[s] = true
	}
	return out
}

// A directory's name is durable only once its parent is synced; a crash
// before may keep it or lose it, and a lost directory takes its synced
// files along.
func TestMemDirectoryNeedsParentSync(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d/e"); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/d/e/a")
	write(t, f, 0, "x")
	f.Sync()
	m.SyncDir("/d/e")
	names := []string{"/d", "/d/e", "/d/e/a"}
	if got, want := crashStates(m, CrashLoseUnsynced, names...), setOf(""); !maps.Equal(got, want) {
		t.Fatalf("unsynced directories after a crash that loses everything unsynced: %v", got)
	}
	if got, want := crashStates(m, CrashTorn, names...), setOf("", "/d", "/d /d/e /d/e/a"); !maps.Equal(got, want) {
		t.Fatalf("unsynced directories after torn crashes: %v, want both ways %v", got, want)
	}
	m.SyncDir("/")
	if got, want := crashStates(m, CrashLoseUnsynced, names...), setOf("/d"); !maps.Equal(got, want) {
		t.Fatalf("parent synced, not the directory between: %v", got)
	}
	m.SyncDir("/d")
	if got, want := crashStates(m, CrashTorn, names...), setOf("/d /d/e /d/e/a"); !maps.Equal(got, want) {
		t.Fatalf("after syncing every parent: %v", got)
	}
	if got := content(t, m.CrashClone(CrashTorn, rand.New(rand.NewPCG(1, 1))), "/d/e/a"); got != "x" {
		t.Fatalf("synced file in a synced directory holds %q", got)
	}
}

// A removed directory is gone for sure only once its parent is synced;
// until then a crash may bring it back as it last was durable. Made again
// under the same name, it is a new, empty directory.
func TestMemDirectoryRemovalNeedsParentSync(t *testing.T) {
	m := NewMem()
	if err := MkdirAllDurable(m, "/d/e"); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/d/e/a")
	write(t, f, 0, "x")
	f.Sync()
	m.SyncDir("/d/e")
	if err := m.Remove("/d"); err == nil {
		t.Fatal("removed a directory holding a directory")
	}
	if err := m.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	names := []string{"/d", "/d/e", "/d/e/a"}
	if got, want := crashStates(m, CrashLoseUnsynced, names...), setOf("/d /d/e /d/e/a"); !maps.Equal(got, want) {
		t.Fatalf("unsynced removal: %v", got)
	}
	if got, want := crashStates(m, CrashTorn, names...), setOf("", "/d /d/e /d/e/a"); !maps.Equal(got, want) {
		t.Fatalf("unsynced removal, torn crashes: %v, want both ways %v", got, want)
	}
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	m.SyncDir("/")
	if got, want := crashStates(m, CrashTorn, names...), setOf("/d"); !maps.Equal(got, want) {
		t.Fatalf("directory made again: %v, want it empty", got)
	}
}

func TestMemTruncateAndOverwrite(t *testing.T) {
	m := NewMem()
	f, _ := m.Create("/a")
	write(t, f, 0, "abcdef")
	f.Sync()
	f.Truncate(2)
	write(t, f, 2, "XY")
	f.Sync()
	if got := content(t, m, "/a"); got != "abXY" {
		t.Fatalf("got %q", got)
	}
	m.SyncDir("/")
	c := m.CrashClone(CrashGarbage, rand.New(rand.NewPCG(3, 3)))
	if got := content(t, c, "/a"); got != "abXY" {
		t.Fatalf("synced content changed by crash: %q", got)
	}
}

func TestMemErrors(t *testing.T) {
	m := NewMem()
	if _, err := m.Open("/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
	if _, err := m.Create("/nodir/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("create without dir: %v", err)
	}
	f, _ := m.Create("/a")
	ro, _ := m.Open("/a")
	if _, err := ro.WriteAt([]byte("x"), 0); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("write read-only: %v", err)
	}
	f.Close()
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("read closed: %v", err)
	}
}

func TestFaultyInjects(t *testing.T) {
	m := NewMem()
	calls := 0
	ff := NewFaulty(m, func(op Op, name string) error {
		if op == OpWrite {
			calls++
			if calls == 2 {
				return ErrShortWrite
			}
		}
		return nil
	})
	f, err := ff.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, 0, "ab")
	if n, err := f.WriteAt([]byte("cdef"), 2); !errors.Is(err, ErrShortWrite) || n != 2 {
		t.Fatalf("short write: n=%d err=%v", n, err)
	}
	if got := content(t, m, "/a"); got != "abcd" {
		t.Fatalf("got %q", got)
	}
}

func TestOSFSRoundTrip(t *testing.T) {
	dir := t.TempDir()
	name := dir + "/f"
	if err := WriteFileAtomic(OS, name, []byte("data")); err != nil {
		t.Fatal(err)
	}
	if got := content(t, OS, name); got != "data" {
		t.Fatalf("got %q", got)
	}
	names, err := OS.ReadDir(dir)
	if err != nil || len(names) != 1 || names[0] != "f" {
		t.Fatalf("readdir %v %v", names, err)
	}
	f, _ := OS.Open(name)
	defer f.Close()
	if _, ok := f.(OSFile); !ok {
		t.Fatal("OS file does not expose *os.File")
	}
}

// MkdirAllDurable syncs the parent of each directory it creates, deepest
// first, and nothing when the directory exists.
func TestMkdirAllDurableSyncsNewParents(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/a"); err != nil {
		t.Fatal(err)
	}
	var synced []string
	ff := NewFaulty(m, func(op Op, name string) error {
		if op == OpSyncDir {
			synced = append(synced, name)
		}
		return nil
	})
	if err := MkdirAllDurable(ff, "/a/b/c"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a/b", "/a"}; !slices.Equal(synced, want) {
		t.Fatalf("synced %v, want %v", synced, want)
	}
	if ok, _ := m.Exists("/a/b/c"); !ok {
		t.Fatal("directory not created")
	}
	synced = nil
	if err := MkdirAllDurable(ff, "/a/b/c/"); err != nil || len(synced) != 0 {
		t.Fatalf("existing directory: synced %v, err %v", synced, err)
	}
	if err := MkdirAllDurable(ff, "/x"); err != nil || !slices.Equal(synced, []string{"/"}) {
		t.Fatalf("directory under the root: synced %v, err %v", synced, err)
	}
	if err := MkdirAllDurable(OS, t.TempDir()+"/p/q"); err != nil {
		t.Fatal(err)
	}
}

// testLock checks Lock on fsys: a second Lock of a held name fails at once
// with ErrLocked, and Close lets the next one in.
func testLock(t *testing.T, fsys FS, name string) {
	t.Helper()
	first, err := fsys.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock of a held name: %v, want ErrLocked", err)
	}
	if ok, _ := fsys.Exists(name); !ok {
		t.Fatal("Lock did not create the file")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := fsys.Lock(name)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Close()
}

func TestMemLock(t *testing.T) {
	m := NewMem()
	MkdirAllDurable(m, "/d")
	testLock(t, m, "/d/.lock")
	held, err := m.Lock("/d/.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// A crash frees every lock: the process that held them is gone.
	c := m.CrashClone(CrashLoseUnsynced, nil)
	l, err := c.Lock("/d/.lock")
	if err != nil {
		t.Fatalf("lock in a crash image: %v", err)
	}
	l.Close()
	if _, err := m.Lock("/missing/.lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock in a missing directory: %v", err)
	}
}

// flock locks belong to the open file, so two Locks in one process
// conflict as two processes' do.
func TestOSLock(t *testing.T) {
	testLock(t, OS, t.TempDir()+"/.lock")
}

// A directory renamed within its parent is, after a crash before the
// parent's sync, under its old name or its new one with what it durably
// held, never both and never neither; after the sync, under the new one.
func TestMemRenameDirectoryIsAtomic(t *testing.T) {
	m := NewMem()
	if err := MkdirAllDurable(m, "/d/a"); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/d/a/f")
	f.WriteAt([]byte("x"), 0)
	f.Sync()
	f.Close()
	m.SyncDir("/d/a")
	if err := m.Rename("/d/a", "/d/b"); err != nil {
		t.Fatal(err)
	}
	if names, _ := m.ReadDir("/d"); len(names) != 1 || names[0] != "b" {
		t.Fatalf("after rename: %v", names)
	}
	if data, err := ReadFile(m, "/d/b/f"); err != nil || string(data) != "x" {
		t.Fatalf("renamed file: %q %v", data, err)
	}
	seen := map[string]bool{}
	for seed := range uint64(64) {
		c := m.CrashClone(CrashTorn, rand.New(rand.NewPCG(seed, 0)))
		names, _ := c.ReadDir("/d")
		if len(names) != 1 {
			t.Fatalf("seed %d: crash image holds %v", seed, names)
		}
		if data, err := ReadFile(c, "/d/"+names[0]+"/f"); err != nil || string(data) != "x" {
			t.Fatalf("seed %d: %s/f: %q %v", seed, names[0], data, err)
		}
		seen[names[0]] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("crash images show only %v", seen)
	}
	m.SyncDir("/d")
	if names, _ := m.CrashClone(CrashLoseUnsynced, nil).ReadDir("/d"); len(names) != 1 || names[0] != "b" {
		t.Fatalf("after sync: %v", names)
	}
}
