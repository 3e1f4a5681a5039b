//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package vfs

import (
	"io"
	"os"
)

// Lock only creates name here: there is no flock on this platform, so
// nothing stops a second process.
func (osFS) Lock(name string) (io.Closer, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
}
