//go:build !unix

package storage

// openFilesLimit is 0 (unknown) where there is no RLIMIT_NOFILE.
func openFilesLimit() int64 { return 0 }
