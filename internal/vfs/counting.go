package vfs

import (
	"os"
	"sync/atomic"
)

// Counting is an FS that counts the files open through it (opened and not
// yet closed), for a budget of open files (the storage Manager's).
type Counting struct {
	FS
	open atomic.Int64
}

// NewCounting counts the files opened through inner.
func NewCounting(inner FS) *Counting { return &Counting{FS: inner} }

// OpenFiles is how many files opened through c are still open.
func (c *Counting) OpenFiles() int64 { return c.open.Load() }

func (c *Counting) count(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	c.open.Add(1)
	return &countedFile{File: f, fs: c}, nil
}

func (c *Counting) Create(name string) (File, error)        { return c.count(c.FS.Create(name)) }
func (c *Counting) OpenReadWrite(name string) (File, error) { return c.count(c.FS.OpenReadWrite(name)) }
func (c *Counting) Open(name string) (File, error)          { return c.count(c.FS.Open(name)) }

type countedFile struct {
	File
	fs     *Counting
	closed atomic.Bool
}

// Close counts the file closed once, whatever Close returns: the
// descriptor is gone either way.
func (f *countedFile) Close() error {
	if !f.closed.Swap(true) {
		f.fs.open.Add(-1)
	}
	return f.File.Close()
}

// OSFile exposes the wrapped *os.File when there is one, for sendfile.
func (f *countedFile) OSFile() *os.File {
	if o, ok := f.File.(OSFile); ok {
		return o.OSFile()
	}
	return nil
}
