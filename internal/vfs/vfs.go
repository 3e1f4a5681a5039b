package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// File is an open file. Writes are positional: callers track their own
// append position, which keeps concurrent readers (ReadAt) independent of
// the writer and makes truncate-then-append well defined.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's data durable (fdatasync on Linux).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size returns the current size.
	Size() (int64, error)
	// Name returns the name the file was opened with.
	Name() string
}

// FS is a filesystem.
type FS interface {
	// Create opens name read-write, creating it or truncating it to zero.
	Create(name string) (File, error)
	// OpenReadWrite opens name read-write, creating it if missing.
	OpenReadWrite(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	Remove(name string) error
	// RemoveAll removes a directory tree; a missing path is not an error.
	RemoveAll(name string) error
	Rename(oldname, newname string) error
	MkdirAll(dir string) error
	// ReadDir lists the names in dir, sorted. Subdirectories are included.
	ReadDir(dir string) ([]string, error)
	// Exists reports whether name exists (file or directory).
	Exists(name string) (bool, error)
	// SyncDir makes the directory's entries (creations, renames,
	// removals) durable.
	SyncDir(dir string) error
	// Lock takes an exclusive lock on the file name, creating it if
	// missing, and returns what releases it. It does not wait: while
	// another holder has the lock (another process, or another Lock in
	// this one) it fails with an error wrapping ErrLocked. On the OS it is
	// flock(LOCK_EX|LOCK_NB), released when the process dies.
	Lock(name string) (io.Closer, error)
}

// ErrNotExist is returned for missing files. It is fs.ErrNotExist, so
// errors.Is(err, os.ErrNotExist) works for every FS.
var ErrNotExist = fs.ErrNotExist

// ErrLocked is wrapped by Lock's error when another holder has the lock.
var ErrLocked = errors.New("vfs: locked by another holder")

// OS is the real filesystem.
var OS FS = osFS{}

// OSFile is implemented by files that wrap an *os.File, so the broker can
// use sendfile(2) on them.
type OSFile interface {
	OSFile() *os.File
}

type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) OSFile() *os.File { return f.File }

func (f osFile) Size() (int64, error) {
	st, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Sync uses fdatasync: the log never depends on mtime, and fdatasync skips
// the metadata write that fsync would add to every group commit.
func (f osFile) Sync() error { return fdatasync(f.File) }

func (osFS) open(name string, flag int) (File, error) {
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (o osFS) Create(name string) (File, error) {
	return o.open(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC)
}

func (o osFS) OpenReadWrite(name string) (File, error) {
	return o.open(name, os.O_RDWR|os.O_CREATE)
}

func (o osFS) Open(name string) (File, error) { return o.open(name, os.O_RDONLY) }

func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }

func (osFS) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

func (osFS) Exists(name string) (bool, error) {
	_, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// MkdirAllDurable creates dir and any missing parents, as MkdirAll does,
// and syncs the parent of every directory it created, deepest first, so the
// whole path survives a crash once it returns: a new directory's name, like
// a new file's, is durable only after its parent is synced. A directory that
// already exists costs one Exists and no sync.
func MkdirAllDurable(fsys FS, dir string) error {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		ok, err := fsys.Exists(d)
		if err != nil {
			return err
		}
		if ok || filepath.Dir(d) == d {
			break
		}
		created = append(created, d)
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for _, d := range created {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// WriteFileAtomic replaces name with data so that after a crash either the
// old or the new content is there, never a mix: write a temporary file,
// sync it, rename it over name, sync the directory.
func WriteFileAtomic(fsys FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if err := WriteFileSynced(fsys, tmp, data); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(name))
}

// WriteFileSynced replaces name's content with data and syncs it. A crash
// meanwhile may leave it torn; a new name is durable only once its
// directory is synced.
func WriteFileSynced(fsys FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		if _, err := f.WriteAt(data, 0); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadFile reads a whole file.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err == io.EOF && int64(n) == size {
		err = nil
	}
	return buf[:n], err
}
