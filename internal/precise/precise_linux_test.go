//go:build linux

package precise

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The pacing thread on the real clock: concurrent waits each return at
// or after their deadline (the pacer's hand-over at most Window early,
// Until never early; lateness is the benchmark's figure, not asserted),
// the thread ends by itself when idle, and Close leaves no goroutine.
func TestPacerThreadNotEarly(t *testing.T) {
	before := runtime.NumGoroutine()
	p := &Pacer{newSleeper: newTimerfd, window: Window, idle: 20 * time.Millisecond}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			due := time.Now().Add(time.Duration(rand.Int64N(int64(3 * time.Millisecond))))
			if i%2 == 0 {
				if err := p.Until(context.Background(), due); err != nil {
					t.Error(err)
				} else if now := time.Now(); now.Before(due.Add(-Window)) {
					t.Errorf("handed over %v early, more than the window", due.Sub(now))
				}
				return
			}
			var timer *time.Timer
			if err := Until(context.Background(), &timer, due); err != nil {
				t.Error(err)
			} else if now := time.Now(); now.Before(due) {
				t.Errorf("Until returned %v early", due.Sub(now))
			}
		})
	}
	wg.Wait()
	// Idle: the thread ends by itself (bounded wait, no time asserted).
	for i := 0; i < 1000 && func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.sl != nil }(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if p.mu.Lock(); p.sl != nil {
		t.Error("the pacing thread still runs 10 s after its last wait")
	}
	p.mu.Unlock()
	// Started again, then closed.
	if err := p.Until(context.Background(), time.Now().Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	pacer.Close() // the package's, which Until used
	n := runtime.NumGoroutine()
	for i := 0; i < 1000 && n > before; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
	pacer = &Pacer{newSleeper: newTimerfd, window: Window, idle: Idle}
}

// BenchmarkPacer: how late a wait of 200 µs returns, on the pacing thread
// (Until) against a time.Timer in the same run; one waiter, then 8 at
// once. Figures: p50/p99 lateness in µs.
func BenchmarkPacer(b *testing.B) {
	const ahead = 200 * time.Microsecond
	for _, waiters := range []int{1, 8} {
		for name, wait := range map[string]func(*time.Timer, time.Time){
			"pacer": func(_ *time.Timer, due time.Time) {
				var tm *time.Timer
				_ = Until(context.Background(), &tm, due)
			},
			"timer": func(tm *time.Timer, due time.Time) {
				tm.Reset(time.Until(due))
				<-tm.C
			},
		} {
			b.Run(name+"/waiters="+string(rune('0'+waiters)), func(b *testing.B) {
				late := make([][]time.Duration, waiters)
				var wg sync.WaitGroup
				for w := range waiters {
					wg.Go(func() {
						tm := time.NewTimer(time.Hour)
						for range b.N {
							due := time.Now().Add(ahead)
							wait(tm, due)
							late[w] = append(late[w], time.Since(due))
						}
					})
				}
				wg.Wait()
				all := slices.Concat(late...)
				slices.Sort(all)
				q := func(f float64) float64 { return float64(all[int(f*float64(len(all)-1))]) / 1e3 }
				b.ReportMetric(q(0.5), "p50-late-µs")
				b.ReportMetric(q(0.99), "p99-late-µs")
			})
		}
	}
}

// monoBase pairs its Go time and its CLOCK_MONOTONIC reading from one
// moment: both fall between readings of each clock taken before and
// after it (an order of events, no length of time asserted), and a
// deadline's instant is its distance from that moment.
func TestMonoBase(t *testing.T) {
	var a, b unix.Timespec
	t0 := time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &a); err != nil {
		t.Fatal(err)
	}
	base, mono, err := monoBase()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &b); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	if mono < a.Nano() || mono > b.Nano() {
		t.Errorf("CLOCK_MONOTONIC %d read outside [%d, %d], the readings around it", mono, a.Nano(), b.Nano())
	}
	if base.Before(t0) || base.After(t1) {
		t.Errorf("Go time %v outside [%v, %v], the readings around it", base, t0, t1)
	}
}

// A timerfd armed at a Go time expires at that time's CLOCK_MONOTONIC
// instant (instant; TestMonoBase checks the pairing behind it): the
// kernel's count of what remains, read between two readings of the clock,
// puts the expiry between them plus that count. An order of events: no
// length of time is asserted, and a stalled test only widens the bracket.
func TestTimerfdArmsTheGoInstant(t *testing.T) {
	sl, err := newTimerfd()
	if err != nil {
		t.Fatal(err)
	}
	defer sl.close()
	s := sl.(*timerfd)
	due := time.Now().Add(time.Hour)
	s.arm(due)
	var before, after unix.Timespec
	var cur unix.ItimerSpec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &before); err != nil {
		t.Fatal(err)
	}
	if err := unix.TimerfdGettime(s.fd, &cur); err != nil {
		t.Fatal(err)
	}
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &after); err != nil {
		t.Fatal(err)
	}
	left, at := cur.Value.Nano(), s.instant(due)
	if at < before.Nano()+left || at > after.Nano()+left {
		t.Errorf("armed for CLOCK_MONOTONIC %d, the kernel's expiry lies in [%d, %d]", at, before.Nano()+left, after.Nano()+left)
	}
}
