package rxbuf

import (
	"strings"
	"testing"
	"time"
)

// TestAt: a kernel stamp becomes a time on both clocks, before
// now by the datagram's age; an absent stamp, or one out of bounds (a
// wall clock step), gives now.
func TestAt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		age        time.Duration // of the stamp against the wall clock now
		none       bool
		wantKernel bool
	}{
		{"fresh", 40 * time.Microsecond, false, true},
		{"no stamp", 0, true, false},
		{"from the future", -time.Second, false, false},
		{"too old", 2 * maxStampAge, false, false},
	} {
		var ns int64
		before := time.Now()
		if !tc.none {
			ns = before.Add(-tc.age).UnixNano()
		}
		at, kernel := At(ns)
		after := time.Now()
		if kernel != tc.wantKernel {
			t.Errorf("%s: kernel = %v, want %v", tc.name, kernel, tc.wantKernel)
			continue
		}
		if !strings.Contains(at.String(), " m=") {
			t.Errorf("%s: %v has no monotonic reading", tc.name, at)
		}
		// time.Now reads the wall and monotonic clocks one after the
		// other: they may disagree by a few nanoseconds.
		const slack = time.Microsecond
		lo, hi := before.Add(-slack), after.Add(slack)
		if kernel {
			lo, hi = lo.Add(-tc.age), hi.Add(-tc.age)
		}
		if at.Before(lo) || at.After(hi) {
			t.Errorf("%s: At = %v, want within [%v, %v]", tc.name, at, lo, hi)
		}
	}
}
