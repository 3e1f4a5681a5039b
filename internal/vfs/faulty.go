package vfs

import (
	"errors"
	"io"
	"os"
	"sync"
)

// Op names a filesystem operation for fault injection.
type Op int

const (
	OpCreate Op = iota // Create, OpenReadWrite
	OpOpen             // Open (read-only)
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpRemove
	OpRename
	OpMkdir
	OpReadDir
	OpSyncDir
	OpClose
	OpLock
)

var opNames = [...]string{"create", "open", "read", "write", "sync", "truncate", "remove", "rename", "mkdir", "readdir", "syncdir", "close", "lock"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op?"
}

// ErrInjected is the error a Faulty filesystem returns for an injected fault.
var ErrInjected = errors.New("vfs: injected fault")

// Injector decides, before each operation, whether it fails. It returns nil
// to let the operation run. For OpWrite, returning an error wrapping
// ErrShortWrite makes half of the write land before the error, as a full
// disk or a dying device can.
type Injector func(op Op, name string) error

// ErrShortWrite, wrapped by an Injector's error for OpWrite, lands half the
// bytes before failing.
var ErrShortWrite = errors.New("vfs: short write")

// Faulty wraps an FS and consults an Injector before every operation.
type Faulty struct {
	inner FS
	mu    sync.Mutex
	inj   Injector
}

// NewFaulty wraps inner. A nil injector injects nothing.
func NewFaulty(inner FS, inj Injector) *Faulty { return &Faulty{inner: inner, inj: inj} }

// SetInjector replaces the injector.
func (f *Faulty) SetInjector(inj Injector) {
	f.mu.Lock()
	f.inj = inj
	f.mu.Unlock()
}

func (f *Faulty) fault(op Op, name string) error {
	f.mu.Lock()
	inj := f.inj
	f.mu.Unlock()
	if inj == nil {
		return nil
	}
	return inj(op, name)
}

func (f *Faulty) wrap(op Op, name string, open func(string) (File, error)) (File, error) {
	if err := f.fault(op, name); err != nil {
		return nil, err
	}
	file, err := open(name)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f}, nil
}

func (f *Faulty) Create(name string) (File, error) { return f.wrap(OpCreate, name, f.inner.Create) }
func (f *Faulty) OpenReadWrite(name string) (File, error) {
	return f.wrap(OpCreate, name, f.inner.OpenReadWrite)
}
func (f *Faulty) Open(name string) (File, error) { return f.wrap(OpOpen, name, f.inner.Open) }

func (f *Faulty) Remove(name string) error {
	if err := f.fault(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

func (f *Faulty) RemoveAll(name string) error {
	if err := f.fault(OpRemove, name); err != nil {
		return err
	}
	return f.inner.RemoveAll(name)
}

func (f *Faulty) Rename(oldname, newname string) error {
	if err := f.fault(OpRename, oldname); err != nil {
		return err
	}
	return f.inner.Rename(oldname, newname)
}

func (f *Faulty) MkdirAll(dir string) error {
	if err := f.fault(OpMkdir, dir); err != nil {
		return err
	}
	return f.inner.MkdirAll(dir)
}

func (f *Faulty) ReadDir(dir string) ([]string, error) {
	if err := f.fault(OpReadDir, dir); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(dir)
}

func (f *Faulty) Exists(name string) (bool, error) { return f.inner.Exists(name) }

func (f *Faulty) SyncDir(dir string) error {
	if err := f.fault(OpSyncDir, dir); err != nil {
		return err
	}
	return f.inner.SyncDir(dir)
}

func (f *Faulty) Lock(name string) (io.Closer, error) {
	if err := f.fault(OpLock, name); err != nil {
		return nil, err
	}
	return f.inner.Lock(name)
}

type faultyFile struct {
	File
	fs *Faulty
}

func (f *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.fault(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.fault(OpWrite, f.Name()); err != nil {
		if errors.Is(err, ErrShortWrite) {
			n, _ := f.File.WriteAt(p[:len(p)/2], off)
			return n, err
		}
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *faultyFile) Sync() error {
	if err := f.fs.fault(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.fs.fault(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *faultyFile) Close() error {
	if err := f.fs.fault(OpClose, f.Name()); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}

// OSFile exposes the wrapped *os.File when there is one, so a Faulty over
// OS still allows sendfile.
func (f *faultyFile) OSFile() *os.File {
	if o, ok := f.File.(OSFile); ok {
		return o.OSFile()
	}
	return nil
}
