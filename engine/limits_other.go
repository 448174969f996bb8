//go:build !unix

package engine

// OpenFilesLimit returns 0: the platform has no RLIMIT_NOFILE.
func OpenFilesLimit() uint64 { return 0 }
