package simclient

import (
	"testing"
	"time"
)

// FinishAt ends a step at the time it is given (its reply's arrival), or
// now when it is given none; Next moves there.
func TestFinishAt(t *testing.T) {
	sh, c := baseShared(t, "  - name: f\n    steps: [list_rooms]\n")
	intended := time.Now().Add(-time.Second)
	for _, tc := range []struct {
		name string
		done time.Time // zero: now
	}{
		{"reply time", intended.Add(7 * time.Millisecond)},
		{"now", time.Time{}},
	} {
		s := newBaseSession(t, sh, 0, &sh.Plan.Flows[0])
		before := time.Now()
		if err := s.FinishAt(0, &s.Flow.Steps[0], intended, intended, tc.done, nil); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		want := tc.done
		if want.IsZero() && (s.Next.Before(before) || s.Next.After(after)) {
			t.Errorf("%s: Next %v, want the time of the call, in [%v, %v]", tc.name, s.Next, before, after)
		}
		if !want.IsZero() && !s.Next.Equal(want) {
			t.Errorf("%s: Next %v, want %v", tc.name, s.Next, want)
		}
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Steps[0].Latency; got.Count != 2 || got.MinUS != 7000 {
		t.Errorf("step latency %+v, want 2 samples, the least 7000 µs (the reply's time)", got)
	}
}
