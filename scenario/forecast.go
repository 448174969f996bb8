package scenario

import (
	"math"
	"time"
)

// Mean is the think time's expected length (Sample's mean, before its
// clamping at 0 and 1 h).
func (t ThinkTime) Mean() time.Duration {
	switch t.Dist {
	case Fixed, Exponential, Normal:
		return t.A
	case Uniform:
		return (t.A + t.B) / 2
	}
	return 0
}

// Waits is the expected time one session of the flow spends in its own
// pauses: think times, the gaps of ping, echo and malformed series. The
// server's round trips, barriers and waits for a game come on top, so a
// session lasts at least this long.
func (f Flow) Waits() time.Duration {
	var d time.Duration
	for _, s := range f.Steps {
		switch s.Kind {
		case Think:
			d += s.Think.Mean()
		case Malformed:
			d += time.Duration(max(s.Malformed.Count-1, 0)) * s.Malformed.Interval
		default:
			if w, ok := s.Params.(waiter); ok {
				d += w.Waits()
			}
		}
	}
	return d
}

// RoomsPerSession is the rooms one session of the flow creates on
// average: each create_room step counts once for every member it runs for
// (a leader-only step once per group).
func (f Flow) RoomsPerSession() float64 {
	g := float64(max(f.GroupSize, 1))
	n := 0.0
	for _, s := range f.Steps {
		if !s.CreatesRoom() {
			continue
		}
		switch s.Only {
		case Leader:
			n += 1 / g
		case Members:
			n += (g - 1) / g
		default:
			n++
		}
	}
	return n
}

// Mix is the plan's flows weighed together: the mean session waits
// (Flow.Waits) and rooms created per session (Flow.RoomsPerSession) of an
// arrival.
func (p *Plan) Mix() (waits time.Duration, rooms float64) {
	total := 0.0
	for _, f := range p.Flows {
		total += f.Weight
	}
	if total == 0 {
		return 0, 0
	}
	w := 0.0
	for _, f := range p.Flows {
		share := f.Weight / total
		w += share * float64(f.Waits())
		rooms += share * f.RoomsPerSession()
	}
	return time.Duration(math.Round(w)), rooms
}
