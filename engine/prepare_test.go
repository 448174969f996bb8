package engine

import (
	"context"
	"sync"
	"testing"
	"time"
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
