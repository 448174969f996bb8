package precise

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// On a fake clock every wait ends exactly at its deadline, held or not:
// it sees the clock does not move and waits on the timer, not on the
// pacing thread (real time).
func TestUntilFakeClock(t *testing.T) {
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, Window, Hold + time.Microsecond, Coarse, 3 * time.Millisecond, time.Second} {
		for name, until := range map[string]func(context.Context, **time.Timer, time.Time) error{"Until": Until, "UntilHeld": UntilHeld} {
			t.Run(name+" "+d.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var timer *time.Timer
					start := time.Now()
					due := start.Add(d)
					if err := until(context.Background(), &timer, due); err != nil {
						t.Fatal(err)
					}
					want := due
					if d < 0 {
						want = start
					}
					if got := time.Now(); !got.Equal(want) {
						t.Fatalf("returned at %v, want %v", got.Sub(start), want.Sub(start))
					}
				})
			})
		}
	}
}

func TestUntilCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		time.AfterFunc(10*time.Millisecond, cancel)
		var timer *time.Timer
		err := Until(ctx, &timer, start.Add(time.Second))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if got := time.Since(start); got != 10*time.Millisecond {
			t.Fatalf("returned after %v, want 10ms", got)
		}
	})
}

// On the real clock a wait never ends early, whether it holds its P
// (UntilHeld), finds the hold slot taken, or does not hold (Until); and it
// gives back the slots it took (its lateness is a benchmark figure, not
// asserted here).
func TestUntilRealClockNotEarly(t *testing.T) {
	for _, tc := range []struct {
		name     string
		until    func(context.Context, **time.Timer, time.Time) error
		slotUsed bool
	}{
		{"UntilHeld", UntilHeld, false},
		{"UntilHeld, hold slot taken", UntilHeld, true},
		{"Until", Until, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slotUsed {
				holding.Add(HoldSlots)
				defer holding.Add(-HoldSlots)
			}
			var timer *time.Timer
			for _, d := range []time.Duration{0, Window / 2, 20 * time.Microsecond, Hold / 2, 300 * time.Microsecond, 2 * time.Millisecond} {
				due := time.Now().Add(d)
				if err := tc.until(context.Background(), &timer, due); err != nil {
					t.Fatal(err)
				}
				if now := time.Now(); now.Before(due) {
					t.Fatalf("wait of %v returned %v early", d, due.Sub(now))
				}
			}
			want := int64(0)
			if tc.slotUsed {
				want = HoldSlots
			}
			if hold := holding.Load(); hold != want {
				t.Fatalf("holding = %d after the waits, want %d", hold, want)
			}
		})
	}
}
