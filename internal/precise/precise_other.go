//go:build !linux

package precise

import "errors"

// Pacing names how waits that end in a send are paced here (run
// summaries say it): the pacing thread is Linux's (timerfd).
const Pacing = "Go timer (no pacing thread on this OS)"

// threadPacing: Until waits on the Go timer.
const threadPacing = false

// canHold: no wait holds its P here.
const canHold = false

func newTimerfd() (sleeper, error) { return nil, errors.New("no timerfd") }
