// Package instant holds a moment in 8 bytes: nanoseconds on the monotonic
// clock since an epoch of the process, where a time.Time takes 24. It is
// for state kept once per simulated client (a wait's deadline, a send's
// stamp), of which one process keeps hundreds of thousands.
package instant

import "time"

// epoch is what an Instant counts from: an hour before the process began,
// so that no moment of its own is 0, the zero Instant.
var epoch = time.Now().Add(-time.Hour)

// Instant is a moment: nanoseconds since epoch; 0 is none (time.Time's
// zero value).
type Instant int64

// Of is t as an Instant: 0 for the zero time. Its monotonic clock reading,
// when it has one, is what counts, as in t.Sub.
func Of(t time.Time) Instant {
	if t.IsZero() {
		return 0
	}
	return Instant(t.Sub(epoch))
}

// Now is the current moment.
func Now() Instant { return Of(time.Now()) }

// Time is i as a time.Time, with a monotonic clock reading: the zero time
// for 0.
func (i Instant) Time() time.Time {
	if i == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(i))
}

// IsZero reports whether i is none.
func (i Instant) IsZero() bool { return i == 0 }

// Add is i moved by d.
func (i Instant) Add(d time.Duration) Instant { return i + Instant(d) }

// Sub is the duration from j to i.
func (i Instant) Sub(j Instant) time.Duration { return time.Duration(i - j) }

// Before reports whether i is before j.
func (i Instant) Before(j Instant) bool { return i < j }
