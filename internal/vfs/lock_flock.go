//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Lock takes flock(LOCK_EX|LOCK_NB) on name. The lock belongs to the open
// file, so a second Lock in the same process (another open of the file)
// conflicts too; closing the file releases it.
func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			err = ErrLocked
		}
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	return f, nil
}
