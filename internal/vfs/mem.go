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
//   - so is a directory's own name: a directory that MkdirAll made (or
//     Remove or RemoveAll took away) is there after a crash for sure only
//     once its parent is synced. Until then a crash may keep the change or
//     undo it, and a directory that does not survive takes everything in it
//     along, synced or not.
//
// CrashClone returns the filesystem as a crash at this instant could leave
// it. Mem is safe for concurrent use.
type Mem struct {
	mu    sync.Mutex
	files map[string]*memInode // the live namespace: files
	dirs  map[string]*memDir   // and directories, the roots included
	locks map[string]bool      // names held by Lock
	// kids are the live entries of each directory, files and
	// subdirectories, by base name: what ReadDir and SyncDir list without
	// a walk of every name (a broker's tests hold 30,000 files).
	kids map[string]map[string]bool
}

// memDir is a directory. Its entries as of its last SyncDir are what a
// crash keeps of it; the live entries are the paths below it in Mem.files
// and Mem.dirs. A directory removed and made again under the same name is
// a new memDir, as it is a new inode on disk.
type memDir struct {
	durable     map[string]*memInode // file entries at the last SyncDir, by base name
	durableDirs map[string]*memDir   // subdirectory entries at the last SyncDir
}

func newMemDir() *memDir {
	return &memDir{durable: map[string]*memInode{}, durableDirs: map[string]*memDir{}}
}

// memRoots are the directories that always exist: "/" for absolute names,
// "." for relative ones.
var memRoots = [...]string{"/", "."}

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
	m := &Mem{files: map[string]*memInode{}, dirs: map[string]*memDir{}, locks: map[string]bool{}, kids: map[string]map[string]bool{}}
	for _, r := range memRoots {
		m.dirs[r] = newMemDir()
	}
	return m
}

func clean(name string) string { return filepath.Clean(name) }

// linkLocked and unlinkLocked keep kids in step with a name made or
// removed.
func (m *Mem) linkLocked(name string) {
	dir := filepath.Dir(name)
	if dir == name {
		return // a root
	}
	k := m.kids[dir]
	if k == nil {
		k = map[string]bool{}
		m.kids[dir] = k
	}
	k[filepath.Base(name)] = true
}

func (m *Mem) unlinkLocked(name string) {
	delete(m.kids[filepath.Dir(name)], filepath.Base(name))
	delete(m.kids, name)
}

func (m *Mem) parentExistsLocked(name string) bool {
	return m.dirs[filepath.Dir(name)] != nil
}

func (m *Mem) openLocked(name string, create, trunc bool) (*memInode, error) {
	name = clean(name)
	if m.dirs[name] != nil {
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
		m.linkLocked(name)
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
		m.unlinkLocked(name)
		return nil
	}
	if m.dirs[name] != nil {
		if len(m.kids[name]) > 0 {
			return &fs.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
		}
		delete(m.dirs, name)
		m.unlinkLocked(name)
		return nil
	}
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
}

// RemoveAll removes a tree. Like every removal it is durable only when the
// parent directory is synced: until then a crash may bring the tree back as
// it last was durable.
func (m *Mem) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	prefix := name + string(filepath.Separator)
	for n := range m.files {
		if n == name || strings.HasPrefix(n, prefix) {
			delete(m.files, n)
			m.unlinkLocked(n)
		}
	}
	for d := range m.dirs {
		if (d == name || strings.HasPrefix(d, prefix)) && filepath.Dir(d) != d {
			delete(m.dirs, d)
			m.unlinkLocked(d)
		}
	}
	return nil
}

func (m *Mem) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldname, newname = clean(oldname), clean(newname)
	if m.dirs[oldname] != nil && filepath.Dir(oldname) != oldname {
		return m.renameDirLocked(oldname, newname)
	}
	ino, ok := m.files[oldname]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if !m.parentExistsLocked(newname) {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrNotExist}
	}
	delete(m.files, oldname)
	m.unlinkLocked(oldname)
	m.files[newname] = ino
	m.linkLocked(newname)
	return nil
}

// renameDirLocked renames a directory (the same inode, with everything
// below it) to a name that does not exist, as rename(2) does. Like any
// name change it is durable once the parents are synced; until then a
// crash keeps either the old name or the new one, never both or neither
// (when both are in one directory, as a journaling filesystem renames).
func (m *Mem) renameDirLocked(oldname, newname string) error {
	if !m.parentExistsLocked(newname) {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrNotExist}
	}
	if _, ok := m.files[newname]; ok || m.dirs[newname] != nil {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrExist}
	}
	if strings.HasPrefix(newname, oldname+string(filepath.Separator)) {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrInvalid}
	}
	moved := func(n string) (string, bool) {
		if n == oldname {
			return newname, true
		}
		if rest, ok := strings.CutPrefix(n, oldname+string(filepath.Separator)); ok {
			return filepath.Join(newname, rest), true
		}
		return "", false
	}
	for n, ino := range m.files {
		if to, ok := moved(n); ok {
			delete(m.files, n)
			m.files[to] = ino
		}
	}
	for n, d := range m.dirs {
		if to, ok := moved(n); ok {
			delete(m.dirs, n)
			m.dirs[to] = d
		}
	}
	for n, k := range m.kids {
		if to, ok := moved(n); ok {
			delete(m.kids, n)
			m.kids[to] = k
		}
	}
	delete(m.kids[filepath.Dir(oldname)], filepath.Base(oldname))
	m.linkLocked(newname)
	return nil
}

// MkdirAll makes dir and its missing parents. Their names are durable only
// once each one's parent is synced (see MkdirAllDurable).
func (m *Mem) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var missing []string
	for d := clean(dir); m.dirs[d] == nil; d = filepath.Dir(d) {
		if _, ok := m.files[d]; ok {
			return &fs.PathError{Op: "mkdir", Path: d, Err: fs.ErrExist}
		}
		missing = append(missing, d)
	}
	for _, d := range missing {
		m.dirs[d] = newMemDir()
		m.linkLocked(d)
	}
	return nil
}

func (m *Mem) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if m.dirs[dir] == nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	return slices.Sorted(maps.Keys(m.kids[dir])), nil
}

func (m *Mem) Exists(name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	_, ok := m.files[name]
	return ok || m.dirs[name] != nil, nil
}

// SyncDir makes dir's entries durable as they are now: the files and
// subdirectories in it, and the absence of those removed.
func (m *Mem) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	d := m.dirs[dir]
	if d == nil {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: fs.ErrNotExist}
	}
	clear(d.durable)
	clear(d.durableDirs)
	for base := range m.kids[dir] {
		n := filepath.Join(dir, base)
		if ino, ok := m.files[n]; ok {
			d.durable[base] = ino
		} else if sub := m.dirs[n]; sub != nil {
			d.durableDirs[base] = sub
		}
	}
	return nil
}

// Lock holds name, creating the file if missing, until the returned
// Closer's Close. A crash image holds no locks: the process that held them
// is gone.
func (m *Mem) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if _, err := m.openLocked(name, true, false); err != nil {
		return nil, err
	}
	if m.locks[name] {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	m.locks[name] = true
	return &memLock{fs: m, name: name}, nil
}

type memLock struct {
	fs       *Mem
	name     string
	released bool
}

func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.released {
		return &fs.PathError{Op: "unlock", Path: l.name, Err: fs.ErrClosed}
	}
	l.released = true
	delete(l.fs.locks, l.name)
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
// whatever mode says, chosen with rng. A directory whose name is not durable
// in its parent (made, or removed, since the parent's last SyncDir) is lost
// (or kept) with CrashLoseUnsynced; the other modes pick either state with
// rng, so images show both. rng may be nil with CrashLoseUnsynced.
func (m *Mem) CrashClone(mode CrashMode, rng *rand.Rand) *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	seen := map[*memInode]*memInode{}
	for _, r := range memRoots {
		m.crashDirLocked(c, r, m.dirs[r], mode, rng, seen)
	}
	return c
}

// crashDirLocked copies what a crash keeps of directory d, found at path
// (it may since have been removed from there), into c, below it too.
func (m *Mem) crashDirLocked(c *Mem, path string, d *memDir, mode CrashMode, rng *rand.Rand, seen map[*memInode]*memInode) {
	cd := c.dirs[path]
	// Sorted, so the same rng gives the same image.
	for _, name := range slices.Sorted(maps.Keys(d.durable)) {
		ino := d.durable[name]
		cino, ok := seen[ino]
		if !ok {
			data := ino.crashContent(mode, rng)
			cino = &memInode{data: data, synced: slices.Clone(data), dirtyFrom: len(data)}
			seen[ino] = cino
		}
		c.files[filepath.Join(path, name)] = cino
		c.linkLocked(filepath.Join(path, name))
		cd.durable[name] = cino
	}
	live := m.dirs[path] == d
	names := slices.Collect(maps.Keys(d.durableDirs))
	if live {
		for base := range m.kids[path] {
			if m.dirs[filepath.Join(path, base)] != nil {
				names = append(names, base)
			}
		}
	}
	slices.Sort(names)
	// A directory renamed within this one since its last sync is here
	// under its old name or its new one, as one decision.
	livePlace := map[*memDir]string{}
	if live {
		for base := range m.kids[path] {
			if sd := m.dirs[filepath.Join(path, base)]; sd != nil {
				livePlace[sd] = base
			}
		}
	}
	reached := map[*memDir]bool{}
	decide := func(key *memDir) bool {
		if r, ok := reached[key]; ok {
			return r
		}
		r := rng.IntN(2) == 0
		reached[key] = r
		return r
	}
	for _, name := range slices.Compact(names) {
		sub := filepath.Join(path, name)
		kept := d.durableDirs[name]
		if now := m.dirs[sub]; live && now != kept && mode != CrashLoseUnsynced {
			key := now // the change: now, or kept renamed away
			if kept != nil {
				if to, ok := livePlace[kept]; ok && to != name {
					key = kept
				}
			}
			if key == nil && rng.IntN(2) == 0 || key != nil && decide(key) {
				kept = now // the unsynced change reached the disk
			}
		}
		if kept == nil {
			continue
		}
		c.dirs[sub] = newMemDir()
		c.linkLocked(sub)
		cd.durableDirs[name] = c.dirs[sub]
		m.crashDirLocked(c, sub, kept, mode, rng, seen)
	}
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
