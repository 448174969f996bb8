//go:build unix

package engine

import "syscall"

// OpenFilesLimit returns the process's RLIMIT_NOFILE soft limit, 0 when it
// cannot be read or is unlimited.
func OpenFilesLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<40 {
		return 0
	}
	return uint64(r.Cur)
}
