package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Mem is an in-memory filesystem that models durability the way a Linux
// filesystem gives it to a careful program:
//
//   - a file's bytes are durable up to its last Sync; bytes written since
//     may survive a crash whole, torn, garbled, or not at all;
//   - a name (create, rename, remove) is durable once its directory is
//     synced with SyncDir;
//   - directories themselves are durable when made.
//
// CrashClone returns the filesystem as a crash at this instant could leave
// it. Mem is safe for concurrent use.
type Mem struct {
	mu      sync.Mutex
	files   map[string]*memInode // the live namespace
	dirs    map[string]bool
	durable map[string]*memInode // the namespace as of each dir's last SyncDir
}

// memInode is a file's content. synced is what the disk holds for sure;
// dirtyFrom is the lowest offset written or truncated since the last Sync,
// so data[:dirtyFrom] == synced[:dirtyFrom].
type memInode struct {
	data      []byte
	synced    []byte
	dirtyFrom int
}

// NewMem returns an empty filesystem holding only the root directory.
func NewMem() *Mem {
	return &Mem{
		files:   map[string]*memInode{},
		dirs:    map[string]bool{"/": true, ".": true},
		durable: map[string]*memInode{},
	}
}

func clean(name string) string { return filepath.Clean(name) }

func (m *Mem) parentExistsLocked(name string) bool {
	return m.dirs[filepath.Dir(name)]
}

func (m *Mem) openLocked(name string, create, trunc bool) (*memInode, error) {
	name = clean(name)
	if m.dirs[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	ino, ok := m.files[name]
	if !ok {
		if !create {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if !m.parentExistsLocked(name) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		ino = &memInode{}
		m.files[name] = ino
	}
	if trunc {
		ino.truncate(0)
	}
	return ino, nil
}

func (m *Mem) Create(name string) (File, error) { return m.open(name, true, true, true) }

func (m *Mem) OpenReadWrite(name string) (File, error) { return m.open(name, true, false, true) }

func (m *Mem) Open(name string) (File, error) { return m.open(name, false, false, false) }

func (m *Mem) open(name string, create, trunc, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino, err := m.openLocked(name, create, trunc)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: m, ino: ino, name: clean(name), writable: writable}, nil
}

func (m *Mem) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if _, ok := m.files[name]; ok {
		delete(m.files, name)
		return nil
	}
	if m.dirs[name] {
		for n := range m.files {
			if filepath.Dir(n) == name {
				return &fs.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
}

// RemoveAll removes a tree. Like every removal, the files' absence becomes
// durable only when their directory is synced; a removed directory's files
// are gone durably at once (a simplification: nothing here resurrects a
// directory).
func (m *Mem) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	prefix := name + string(filepath.Separator)
	for n := range m.files {
		if n == name || strings.HasPrefix(n, prefix) {
			delete(m.files, n)
			if n != name {
				delete(m.durable, n)
			}
		}
	}
	for d := range m.dirs {
		if d == name || strings.HasPrefix(d, prefix) {
			delete(m.dirs, d)
		}
	}
	return nil
}

func (m *Mem) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldname, newname = clean(oldname), clean(newname)
	ino, ok := m.files[oldname]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if !m.parentExistsLocked(newname) {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrNotExist}
	}
	delete(m.files, oldname)
	m.files[newname] = ino
	return nil
}

func (m *Mem) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := clean(dir); !m.dirs[d]; d = filepath.Dir(d) {
		if _, ok := m.files[d]; ok {
			return &fs.PathError{Op: "mkdir", Path: d, Err: fs.ErrExist}
		}
		m.dirs[d] = true
	}
	return nil
}

func (m *Mem) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if !m.dirs[dir] {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var names []string
	for n := range m.files {
		if filepath.Dir(n) == dir {
			names = append(names, filepath.Base(n))
		}
	}
	for d := range m.dirs {
		if d != dir && filepath.Dir(d) == dir {
			names = append(names, filepath.Base(d))
		}
	}
	slices.Sort(names)
	return names, nil
}

func (m *Mem) Exists(name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	_, ok := m.files[name]
	return ok || m.dirs[name], nil
}

func (m *Mem) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if !m.dirs[dir] {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: fs.ErrNotExist}
	}
	for n := range m.durable {
		if filepath.Dir(n) == dir {
			delete(m.durable, n)
		}
	}
	for n, ino := range m.files {
		if filepath.Dir(n) == dir {
			m.durable[n] = ino
		}
	}
	return nil
}

// CrashMode says what a crash does to bytes written since the last sync.
type CrashMode int

const (
	// CrashTorn keeps a random prefix of each file's unsynced writes, or
	// its old synced content: what a power cut usually leaves.
	CrashTorn CrashMode = iota
	// CrashGarbage is CrashTorn with the kept unsynced bytes partly
	// overwritten by random bytes: a disk that reorders or garbles
	// unsynced sectors.
	CrashGarbage
	// CrashLoseUnsynced keeps exactly the synced state.
	CrashLoseUnsynced
)

// CrashClone returns a new filesystem holding what a crash now could leave:
// only durable names, each file's synced bytes, and for the unsynced part
// whatever mode says, chosen with rng.
func (m *Mem) CrashClone(mode CrashMode, rng *rand.Rand) *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.dirs {
		c.dirs[d] = true
	}
	seen := map[*memInode]*memInode{}
	// Sorted, so the same rng gives the same image.
	for _, n := range slices.Sorted(maps.Keys(m.durable)) {
		ino := m.durable[n]
		if !c.dirs[filepath.Dir(n)] {
			continue
		}
		cino, ok := seen[ino]
		if !ok {
			data := ino.crashContent(mode, rng)
			cino = &memInode{data: data, synced: slices.Clone(data), dirtyFrom: len(data)}
			seen[ino] = cino
		}
		c.files[n] = cino
		c.durable[n] = cino
	}
	return c
}

func (ino *memInode) crashContent(mode CrashMode, rng *rand.Rand) []byte {
	if mode == CrashLoseUnsynced || ino.dirtyFrom >= len(ino.data) && ino.dirtyFrom >= len(ino.synced) {
		return slices.Clone(ino.synced)
	}
	if rng.IntN(4) == 0 {
		return slices.Clone(ino.synced)
	}
	base := min(ino.dirtyFrom, len(ino.data))
	out := slices.Clone(ino.data[:base])
	tail := ino.data[base:]
	keep := rng.IntN(len(tail) + 1)
	start := len(out)
	out = append(out, tail[:keep]...)
	if mode == CrashGarbage && keep > 0 {
		n := 1 + rng.IntN(min(keep, 64))
		at := start + rng.IntN(keep-n+1)
		for i := at; i < at+n; i++ {
			out[i] = byte(rng.Uint32())
		}
	}
	return out
}

func (ino *memInode) markDirty(off int) {
	ino.dirtyFrom = min(ino.dirtyFrom, off)
}

func (ino *memInode) truncate(size int) {
	if size < len(ino.data) {
		ino.markDirty(size)
		ino.data = ino.data[:size]
		return
	}
	ino.markDirty(len(ino.data))
	ino.data = append(ino.data, make([]byte, size-len(ino.data))...)
}

func (ino *memInode) sync() {
	from := min(ino.dirtyFrom, len(ino.synced), len(ino.data))
	ino.synced = append(ino.synced[:from:from], ino.data[from:]...)
	ino.dirtyFrom = len(ino.data)
}

type memFile struct {
	fs       *Mem
	ino      *memInode
	name     string
	writable bool
	closed   bool
}

func (f *memFile) check(op string, write bool) error {
	if f.closed {
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	}
	if write && !f.writable {
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrPermission}
	}
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrInvalid}
	}
	end := int(off) + len(p)
	if end > len(f.ino.data) {
		f.ino.truncate(end)
	}
	f.ino.markDirty(int(off))
	copy(f.ino.data[off:], p)
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("sync", false); err != nil {
		return err
	}
	f.ino.sync()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	f.ino.truncate(int(size))
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return 0, err
	}
	return int64(len(f.ino.data)), nil
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.closed = true
	return nil
}
