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

// TestAtRead: a stamp is mapped with the reading taken before the read,
// exactly (no clock is read), whether it is before that reading or up to
// readSlack after it (the datagram came during the read); no stamp, one
// further ahead or too old is not used (zero, false).
func TestAtRead(t *testing.T) {
	before := time.Now()
	wall := before.Round(0) // its wall clock alone
	for _, tc := range []struct {
		name       string
		age        time.Duration // of the stamp against before
		none       bool
		wantKernel bool
	}{
		{"queued before the read", 40 * time.Microsecond, false, true},
		{"came during the read", -300 * time.Microsecond, false, true},
		{"past the slack", -2 * readSlack, false, false},
		{"no stamp", 0, true, false},
		{"too old", 2 * maxStampAge, false, false},
	} {
		var ns int64
		if !tc.none {
			ns = wall.Add(-tc.age).UnixNano()
		}
		at, kernel := AtRead(before, ns)
		if kernel != tc.wantKernel {
			t.Errorf("%s: kernel = %v, want %v", tc.name, kernel, tc.wantKernel)
			continue
		}
		if !kernel {
			if !at.IsZero() {
				t.Errorf("%s: at = %v without a usable stamp, want zero", tc.name, at)
			}
			continue
		}
		if want := before.Add(-tc.age); !at.Equal(want) || at.Sub(before) != -tc.age {
			t.Errorf("%s: AtRead = %v, want %v (before less the age, on the monotonic clock)", tc.name, at, want)
		}
	}
}
