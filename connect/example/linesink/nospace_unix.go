//go:build unix

package linesink

import "syscall"

var errNoSpace error = syscall.ENOSPC
