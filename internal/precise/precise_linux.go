//go:build linux

package precise

import (
	"time"

	"golang.org/x/sys/unix"
)

func nanosleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil) // EINTR: the caller loops on the clock
}

// canHold: waits may hold their P (Hold).
const canHold = true
