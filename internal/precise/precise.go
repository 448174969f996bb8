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
// How: Until sleeps on a Go timer until Coarse before the deadline (cheap,
// no thread held), then on a blocking nanosleep(2) until Spin before it
// (microsecond-accurate, the thread is parked in the kernel), then yields
// (runtime.Gosched) until the deadline. Only FineSlots goroutines may be in
// the fine phase at once, so the number of threads parked in nanosleep and
// the CPU spent yielding stay bounded; a wait that finds no free slot
// finishes on the Go timer (the old behaviour, late by up to ~1 ms — but a
// process that busy has running Ps checking timers often, so its timers
// are late by much less).
//
// Cost, per wait that gets a slot: one or two nanosleep syscalls and at
// most Spin of yielding (about 100 µs of CPU, less when other goroutines
// are runnable: Gosched runs them). At 2,000 waits/s that is at most 20 %
// of one core; the README quotes the measured figure.
package precise

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

const (
	// Coarse is how long before the deadline the Go timer hands over to
	// nanosleep: more than the timer's worst idle lateness (1 ms) plus a
	// thread wake-up.
	Coarse = 1500 * time.Microsecond
	// Spin is how long before the deadline nanosleep hands over to
	// yielding: covers nanosleep's own wake-up lateness (timer slack,
	// default 50 µs on Linux, plus the thread wake-up).
	Spin = 100 * time.Microsecond
)

// FineSlots bounds the waits in their fine phase at once.
var FineSlots = int64(max(runtime.GOMAXPROCS(0), 2))

var fine atomic.Int64

// Until waits until t, or until ctx is done (then it returns ctx's error);
// a deadline already past returns nil at once.
// timer is the caller's reusable timer (created on first use), so a
// session's waits do not allocate.
func Until(ctx context.Context, timer **time.Timer, t time.Time) error {
	if d := time.Until(t) - Coarse; d > 0 {
		if err := sleep(ctx, timer, d); err != nil {
			return err
		}
	}
	if time.Until(t) <= 0 {
		return nil
	}
	if fine.Add(1) > FineSlots {
		fine.Add(-1)
		// No slot: finish on the timer.
		if d := time.Until(t); d > 0 {
			return sleep(ctx, timer, d)
		}
		return nil
	}
	defer fine.Add(-1)
	return finish(ctx, timer, t)
}

// finish is the fine phase: nanosleep to Spin before t, then yield. A
// clock that does not move across a nanosleep, or across many yields, is a
// fake one (testing/synctest, where time advances only when every
// goroutine is blocked): the wait then ends on the timer.
func finish(ctx context.Context, timer **time.Timer, t time.Time) error {
	still := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		d := t.Sub(now)
		if d <= 0 {
			return nil
		}
		if d > Spin {
			// At most Coarse long, so ctx is checked again soon.
			nanosleep(min(d-Spin, Coarse))
			if time.Now().Equal(now) {
				return sleep(ctx, timer, d)
			}
			continue
		}
		runtime.Gosched()
		if time.Now().Equal(now) {
			if still++; still > fakeClockYields {
				return sleep(ctx, timer, d)
			}
		}
	}
}

// fakeClockYields is how many yields in a row may see the same clock
// reading before the clock is taken for a fake one.
const fakeClockYields = 10000

// OnTimer waits until t on the Go timer alone, as Until without its fine
// phase (late by up to ~1 ms on an idle process); for fake clocks
// (testing/synctest), where the fine phase would spend real time.
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
