//go:build unix && !linux

package devcluster

import "syscall"

// childAttr puts a node in a process group of its own, so a Ctrl-C at the
// terminal goes to the parent only. There is no Pdeathsig outside Linux:
// nodes outlive a parent that is killed.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
