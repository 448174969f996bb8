//go:build !linux

package precise

import (
	"runtime"
	"time"
)

// nanosleep yields instead where the Linux call is not used: the fine
// phase then yields for all of it (more CPU, same precision).
func nanosleep(time.Duration) { runtime.Gosched() }

// canHold: no wait holds its P here (nanosleep is a yield: the fine
// phase already spins, yielding).
const canHold = false
