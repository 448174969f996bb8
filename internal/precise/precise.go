// Package precise waits until an instant without Go's timer lateness, for
// waits that end in a send (open-model arrivals, think times, ping
// intervals).
//
// Why: when a Go process is mostly idle its Ms sleep in epoll_wait, whose
// timeout has millisecond resolution (runtime/netpoll_epoll.go rounds any
// delay under 1 ms up to 1 ms and truncates longer ones), so a time.Timer
// fires on average about half a millisecond late, up to a millisecond and
// more. That lateness sat between a request's intended time and its send
// and was charged to the server.
//
// How (Linux): every wait is queued on one pacing thread (Pacer), a
// goroutine that sleeps in the kernel, in a blocking read of a timerfd
// armed at the earliest deadline (absolute CLOCK_MONOTONIC, no timer
// slack), and at it hands every wait due within Window to its goroutine
// (a buffered channel send). No wait has a Go timer, no wait spins but
// UntilHeld's last Hold, and nothing is bounded by slots: at 20,000
// arrivals a second the thread wakes at most that often, and batches
// deadlines closer than Window into one wake. The thread ends by itself
// after Idle without a wait. Elsewhere waits end on the Go timer (Pacing
// says which).
//
// On a fake clock (testing/synctest, where time moves only when every
// goroutine is blocked) a wait ends on its timer: the pacing thread keeps
// real time.
package precise

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

const (
	// Coarse is the Go timer's worst idle lateness and a thread wake-up:
	// callers that must stay interruptible by their own events (the
	// closed model's resumer) wait on a Go timer until Coarse before a
	// deadline, then on Until.
	Coarse = 1500 * time.Microsecond
	// Window: the pacing thread hands over at one wake every wait due
	// within Window of it; a wait handed over early yields until its
	// deadline (never returns before it).
	Window = 10 * time.Microsecond
	// Idle is how long the pacing thread stays without a wait before it
	// ends (the next wait starts it again).
	Idle = time.Second
	// Hold is how long before the deadline a wait stops giving up its P
	// (one wait at a time: HoldSlots) and spins, without yielding and
	// without a system call, until the deadline. A goroutine woken by the
	// pacing thread waits for a P behind whatever is runnable then (at
	// 2,000 sessions/s against a server answering in 20 ms, replies being
	// handled). Holding costs up to Hold of one core's CPU per wait (at
	// 2,000 waits/s, about 40 % of a core). Only UntilHeld holds.
	Hold = 200 * time.Microsecond
)

// HoldSlots bounds the waits holding their P at once: one less than the
// Ps, so that a P is always left for everything else (none with one P).
var HoldSlots = int64(runtime.GOMAXPROCS(0) - 1)

var holding atomic.Int64

// pacer is the process's pacing thread.
var pacer = &Pacer{newSleeper: newTimerfd, window: Window, idle: Idle}

// Until waits until t, or until ctx is done (then it returns ctx's error);
// a deadline already past returns nil at once.
// timer is the caller's reusable timer (created on first use) for the
// waits that end on the Go timer (a fake clock, no pacing thread), so a
// session's waits do not allocate.
func Until(ctx context.Context, timer **time.Timer, t time.Time) error {
	if time.Until(t) <= 0 {
		return nil
	}
	if !threadPacing || fakeClock() {
		return OnTimer(ctx, timer, t)
	}
	switch err := pacer.Until(ctx, t); err {
	case nil:
		return finish(ctx, timer, t)
	case ErrUnavailable:
		return OnTimer(ctx, timer, t)
	default:
		return err
	}
}

// UntilHeld is Until whose last Hold keeps the P (Hold), for the one
// waiter whose lateness every send inherits (the open model's schedule)
// and only when nothing else in the process needs the core as much: a
// closed-model resumer holding beside 200 clients and an embedded server
// made their p50 1.5-2x worse.
func UntilHeld(ctx context.Context, timer **time.Timer, t time.Time) error {
	if !canHold || time.Until(t) <= Hold || fakeClock() {
		return Until(ctx, timer, t)
	}
	if err := Until(ctx, timer, t.Add(-Hold)); err != nil {
		return err
	}
	if holding.Add(1) > HoldSlots {
		holding.Add(-1)
		return Until(ctx, timer, t)
	}
	defer holding.Add(-1)
	if err := ctx.Err(); err != nil {
		return err
	}
	spinUntil(t)
	return nil
}

// finish yields until t, for a wait the pacing thread handed over early
// (at most Window); a clock that does not move across many yields is a
// fake one: the wait then ends on the timer.
func finish(ctx context.Context, timer **time.Timer, t time.Time) error {
	start := time.Now()
	for n := 0; time.Now().Before(t); n++ {
		if n > fakeClockYields && time.Now().Equal(start) {
			return OnTimer(ctx, timer, t)
		}
		runtime.Gosched()
	}
	return nil
}

// fakeClock reports whether the clock stands still while this goroutine
// runs (testing/synctest's): a real one moves between two readings.
func fakeClock() bool {
	start := time.Now()
	for range 100 {
		if !time.Now().Equal(start) {
			return false
		}
	}
	return true
}

// fakeClockYields is how many yields in a row may see the same clock
// reading before the clock is taken for a fake one.
const fakeClockYields = 10000

// spinUntil spins without yielding until t (a real clock: UntilHeld
// checked).
func spinUntil(t time.Time) {
	for time.Now().Before(t) {
	}
}

// OnTimer waits until t on the Go timer alone (late by up to ~1 ms on an
// idle process): for waits that need no precision (preparing arrivals),
// and the ones a fake clock (testing/synctest) or no pacing thread leaves.
func OnTimer(ctx context.Context, timer **time.Timer, t time.Time) error {
	if d := time.Until(t); d > 0 {
		return sleep(ctx, timer, d)
	}
	return nil
}

func sleep(ctx context.Context, timer **time.Timer, d time.Duration) error {
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-(*timer).C:
		return nil
	case <-ctx.Done():
		(*timer).Stop()
		return ctx.Err()
	}
}
