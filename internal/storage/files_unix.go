//go:build unix

package storage

import "syscall"

// openFilesLimit is the process's open-files limit (the soft
// RLIMIT_NOFILE), 0 when unlimited or unknown.
func openFilesLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<40 { // RLIM_INFINITY is all ones
		return 0
	}
	return int64(rl.Cur)
}
