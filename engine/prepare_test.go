package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/precise"
)

// preparing is a session that notes when it was prepared
// (simclient.Preparer: a TCP session dials there) and, as runAt, when it
// was run, against its due time.
type preparing struct {
	runAt
	due      time.Time
	prepared *[]time.Duration
}

func (p *preparing) Prepare() {
	p.mu.Lock()
	*p.prepared = append(*p.prepared, time.Since(p.due))
	p.mu.Unlock()
}

// TestOpenPrepareAhead: the open model prepares each arrival's session
// (Prepare: the TCP dial) PrepareLead before its due time, right after
// making it, and runs it (the first send) at its due time.
func TestOpenPrepareAhead(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var mu sync.Mutex
		var prepared, runs []time.Duration
		plan := openPlan(4, nil, 2*time.Second, 100)
		_, _, err := Execute(context.Background(), Options{Plan: plan, New: func(s Start) (Session, error) {
			return &preparing{runAt{fakeSession{length: time.Millisecond}, &mu, &runs}, s.Intended, &prepared}, nil
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(prepared) != 8 || len(runs) != 8 {
			t.Fatalf("%d prepared, %d run, want 8 each", len(prepared), len(runs))
		}
		for i := range prepared {
			want := -PrepareLead
			if i == 0 {
				want = 0 // due at the start: prepared at once
			}
			if prepared[i] != want || runs[i] != 0 {
				t.Errorf("arrival %d: prepared %v from due (want %v), run %v from due (want 0)", i, prepared[i], want, runs[i])
			}
		}
	})
}

// The open scheduler yields its P to a session it just started only while
// the next prepared arrival is not due within YieldSpare (or there is none):
// at saturation a yield would queue it behind every runnable session.
func TestSpare(t *testing.T) {
	now := time.Now()
	at := func(d time.Duration) []prepared { return []prepared{{st: Start{Intended: now.Add(d)}}} }
	for _, tc := range []struct {
		name  string
		queue []prepared
		want  bool
	}{
		{"nothing prepared", nil, true},
		{"next due in an hour", at(time.Hour), true},
		{"next due in 10µs", at(10 * time.Microsecond), false},
		{"next already late", at(-time.Millisecond), false},
	} {
		if got := spare(tc.queue); got != tc.want {
			t.Errorf("%s: spare = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOpenHoldsOnlyWhenAsked: the open schedule waits for an arrival with
// the held wait (precise.UntilHeld: its last Hold spins on the P) only
// with Options.HoldP, and then not when the next arrival follows within
// YieldSpare (a dense schedule would hold the P for good); every other
// wait is the plain precise one.
func TestOpenHoldsOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		hold      bool
		wantHeld  bool // every arrival's wait held
		wantPlain bool // every arrival's wait plain
	}{
		{"100/s, HoldP", 100, true, true, false},
		{"100/s, no HoldP", 100, false, false, true},
		{"10,000/s, HoldP: dense", 10000, true, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				var held, plain int
				newS := func(Start) (Session, error) { return &fakeSession{length: time.Millisecond}, nil }
				o := Options{Plan: openPlan(tc.rate, nil, 100*time.Millisecond, 1000), New: newS, HoldP: tc.hold}
				x, _, err := Execute(context.Background(), o, func(x *Execution) {
					x.waitHeld = func(ctx context.Context, tm **time.Timer, at time.Time) error {
						held++
						return precise.OnTimer(ctx, tm, at)
					}
					x.wait = func(ctx context.Context, tm **time.Timer, at time.Time) error {
						plain++
						return precise.OnTimer(ctx, tm, at)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				started := int(x.Stats.Snapshot().Started)
				if started == 0 {
					t.Fatal("no arrival started")
				}
				// The last arrival has no next one to be dense with: allow one.
				if tc.wantHeld && held < started-1 || !tc.wantHeld && held > 1 {
					t.Errorf("%d of %d arrivals waited held (HoldP %v), %d plain", held, started, tc.hold, plain)
				}
				if tc.wantPlain && plain < started-1 {
					t.Errorf("%d of %d arrivals waited plain, want all", plain, started)
				}
			})
		})
	}
}
