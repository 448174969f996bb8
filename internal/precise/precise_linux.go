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
//
// A deadline's instant on CLOCK_MONOTONIC is its distance from base, on
// Go's monotonic clock (the same kernel clock, read through the vDSO),
// added to mono, CLOCK_MONOTONIC at base: x/sys/unix reads the clock with
// a system call, which once per arm was 2.5 % of the harness's CPU at
// 20,000 arrivals a second.
type timerfd struct {
	fd   int
	base time.Time // carries a monotonic reading
	mono int64     // CLOCK_MONOTONIC at base, ns
}

func newTimerfd() (sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	s := &timerfd{fd: fd}
	if s.base, s.mono, err = monoBase(); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return s, nil
}

// monoBase pairs a Go time with CLOCK_MONOTONIC read between two
// time.Now calls, the closest pair of a few: the pairing is off by at most
// half their gap (a system call's length, about a µs).
func monoBase() (base time.Time, mono int64, err error) {
	best := time.Duration(-1)
	for range 5 {
		var ts unix.Timespec
		t0 := time.Now()
		if err = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return time.Time{}, 0, err
		}
		if gap := time.Since(t0); best < 0 || gap < best {
			best, base, mono = gap, t0.Add(gap/2), ts.Nano()
		}
	}
	return base, mono, nil
}

// instant is t on CLOCK_MONOTONIC, in ns; 1 for an instant in the past
// (the timer then fires at once; 0 would disarm it).
func (s *timerfd) instant(t time.Time) int64 {
	return max(s.mono+int64(t.Sub(s.base)), 1)
}

func (s *timerfd) arm(t time.Time) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(s.instant(t))}
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
