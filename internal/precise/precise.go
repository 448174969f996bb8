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
// no thread held), then on a blocking nanosleep(2) until Hold before it
// (microsecond-accurate, the thread is parked in the kernel), then spins
// on its P without yielding until the deadline (Linux; one wait at a
// time, HoldSlots; UntilHeld only). A wait that does not hold sleeps until
// Spin before the deadline and yields
// (runtime.Gosched) until it. Only FineSlots goroutines may be in the
// fine phase at once, so the number of threads parked in nanosleep and
// the CPU spent spinning stay bounded; a wait that finds no free slot
// finishes on the Go timer (the old behaviour, late by up to ~1 ms — but a
// process that busy has running Ps checking timers often, so its timers
// are late by much less).
//
// Cost, per wait that gets a slot: one or two nanosleep syscalls and at
// most Hold of spinning (200 µs of one core's CPU) when it holds, Spin
// of yielding (up to 100 µs, less when other goroutines are runnable)
// when it does not. At 2,000 waits/s holding is about 40 % of one core;
// docs/performance.md quotes the measured figure.
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
	// Hold is how long before the deadline a wait stops giving up its P
	// (one wait at a time: HoldSlots) and spins, without yielding and
	// without a system call, until the deadline. Yielding there, or
	// returning from a nanosleep that gave the P up, puts the waiting
	// goroutine behind whatever is runnable then (at 2,000 sessions/s
	// against a server answering in 20 ms, replies being handled) and
	// the send was 130-150 µs late at p99; a nanosleep that keeps the P
	// wakes when the OS gives its thread a core, as late. Holding costs
	// up to Hold of one core's CPU per wait (at 2,000 waits/s, about 40 %
	// of a core). Only UntilHeld holds.
	Hold = 200 * time.Microsecond
)

// FineSlots bounds the waits in their fine phase at once.
var FineSlots = int64(max(runtime.GOMAXPROCS(0), 2))

// HoldSlots bounds the waits holding their P at once: one less than the
// Ps, so that a P is always left for everything else (none with one P).
var HoldSlots = int64(runtime.GOMAXPROCS(0) - 1)

var fine, holding atomic.Int64

// Until waits until t, or until ctx is done (then it returns ctx's error);
// a deadline already past returns nil at once.
// timer is the caller's reusable timer (created on first use), so a
// session's waits do not allocate.
func Until(ctx context.Context, timer **time.Timer, t time.Time) error {
	return until(ctx, timer, t, false)
}

// UntilHeld is Until whose last Hold keeps the P (Hold), for the one
// waiter whose lateness every send inherits (the open model's schedule)
// and only when nothing else in the process needs the core as much: a
// closed-model resumer holding beside 200 clients and an embedded server
// made their p50 1.5-2x worse.
func UntilHeld(ctx context.Context, timer **time.Timer, t time.Time) error {
	return until(ctx, timer, t, canHold)
}

func until(ctx context.Context, timer **time.Timer, t time.Time, mayHold bool) error {
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
	return finish(ctx, timer, t, mayHold)
}

// finish is the fine phase: nanosleep to Spin before t, then yield. A
// clock that does not move across a nanosleep, or across many yields, is a
// fake one (testing/synctest, where time advances only when every
// goroutine is blocked): the wait then ends on the timer.
func finish(ctx context.Context, timer **time.Timer, t time.Time, mayHold bool) error {
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
		if d <= Hold && mayHold {
			if holding.Add(1) <= HoldSlots {
				ok := spinUntil(t)
				holding.Add(-1)
				if ok {
					return nil
				}
				return sleep(ctx, timer, time.Until(t)) // a fake clock
			}
			holding.Add(-1)
			mayHold = false // the slot is taken: finish as before
		}
		if lead := spinLead(mayHold); d > lead {
			// At most Coarse long, so ctx is checked again soon.
			nanosleep(min(d-lead, Coarse))
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

// spinLead is how long before the deadline the fine phase stops
// sleeping: Hold for a wait that may hold its P, Spin otherwise.
func spinLead(mayHold bool) time.Duration {
	if mayHold {
		return Hold
	}
	return Spin
}

// spinUntil spins without yielding until t, and reports true; false when
// the clock does not move (a fake one).
func spinUntil(t time.Time) bool {
	start := time.Now()
	for n := 0; time.Now().Before(t); n++ {
		if n > fakeClockYields && time.Now().Equal(start) {
			return false
		}
	}
	return true
}

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
