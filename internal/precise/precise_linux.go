//go:build linux

package precise

import (
	"time"

	"golang.org/x/sys/unix"
)

// Pacing names how waits that end in a send are paced here (run
// summaries say it).
const Pacing = "pacing thread (timerfd, CLOCK_MONOTONIC, absolute)"

// threadPacing: Until waits on the pacing thread.
const threadPacing = true

// canHold: waits may hold their P (Hold).
const canHold = true

// timerfd is the Linux sleeper: a blocking CLOCK_MONOTONIC timerfd armed
// at an absolute instant (TFD_TIMER_ABSTIME). Its timer has no slack, and
// arming it again from another goroutine moves the instant a blocked read
// returns at: a deadline sooner than the one the thread sleeps for needs
// no signal (a clock_nanosleep cannot be moved so).
type timerfd struct{ fd int }

func newTimerfd() (sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &timerfd{fd: fd}, nil
}

func (s *timerfd) arm(t time.Time) {
	var now unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	at := max(now.Nano()+int64(time.Until(t)), 1) // 1: in the past, at once (0 would disarm)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(at)}
	_ = unix.TimerfdSettime(s.fd, unix.TFD_TIMER_ABSTIME, &spec, nil)
}

func (s *timerfd) wait() {
	var buf [8]byte
	for {
		if _, err := unix.Read(s.fd, buf[:]); err != unix.EINTR {
			return
		}
	}
}

func (s *timerfd) close() { _ = unix.Close(s.fd) }
