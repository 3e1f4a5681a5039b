package devcluster

import "syscall"

// childAttr puts a node in a process group of its own, so a Ctrl-C at the
// terminal goes to the parent only (which stops the nodes in turn), and
// kills it when the parent dies, so a crashed or timed-out test leaves no
// broker behind. Pdeathsig fires when the thread that started the child
// ends; the Go runtime ends a thread only under a goroutine that locked it
// and returned, which nothing here does.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
