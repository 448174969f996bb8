package instant

import (
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		t    time.Time
	}{
		{"now", now},
		{"a second on", now.Add(time.Second)},
		{"a day back", now.Add(-24 * time.Hour)},
		{"a wall-clock time", time.Unix(1_000_000_000, 123)},
		{"synctest's start", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := Of(tc.t)
			if i.IsZero() {
				t.Fatalf("Of(%v) is zero", tc.t)
			}
			if got := i.Time(); !got.Equal(tc.t) {
				t.Errorf("Of(%v).Time() = %v", tc.t, got)
			}
			if d := Of(tc.t.Add(1500 * time.Nanosecond)).Sub(i); d != 1500*time.Nanosecond {
				t.Errorf("Sub = %v, want 1.5µs", d)
			}
		})
	}
}

func TestZero(t *testing.T) {
	if i := Of(time.Time{}); i != 0 || !i.IsZero() {
		t.Errorf("Of(zero time) = %d", i)
	}
	if !Instant(0).Time().IsZero() {
		t.Error("Instant(0).Time() is not the zero time")
	}
	if Now().IsZero() {
		t.Error("Now() is zero")
	}
}

func TestOrder(t *testing.T) {
	a := Now()
	b := a.Add(time.Microsecond)
	if !a.Before(b) || b.Before(a) || b.Sub(a) != time.Microsecond {
		t.Errorf("a %d, b %d: Before or Sub wrong", a, b)
	}
	// The monotonic reading counts, as in time.Time's Sub: a time
	// stripped of it (Round(0)) is read by its wall clock alone.
	now := time.Now()
	if got := Of(now).Time().Sub(now); got != 0 {
		t.Errorf("round trip moved the moment by %v", got)
	}
}
