//go:build unix

package quietport

import (
	"os"
	"syscall"
)

// lockSlice opens path and takes an exclusive lock on it without waiting:
// the file, locked, or nil when another process holds it (or it cannot be
// opened). The kernel lets the lock go when the process ends, however it
// ends.
func lockSlice(path string) *os.File {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return f
}
