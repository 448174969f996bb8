package scenario

import (
	"math"
	"sort"
	"time"
)

// Ramp is a load schedule as a pure function of elapsed time: a
// piecewise-linear target (sessions/s for the open model, clients for the
// closed one) from 0 to Duration. It is immutable and safe for concurrent use.
type Ramp struct {
	segs     []segment
	duration time.Duration
}

// segment is a linear ramp r0→r1 over [t0, t1) seconds; h0 is the integral
// of the target (expected arrivals) up to t0.
type segment struct {
	t0, t1, r0, r1, h0 float64
}

// hEnd is the integral of the target up to t1.
func (s segment) hEnd() float64 { return s.h0 + (s.r0+s.r1)/2*(s.t1-s.t0) }

// NewRamp builds the schedule: start at start, ramp linearly through each
// stage's target over its For, hold the last target until duration, and cut
// everything at duration. A stage with For 0 is a step change.
func NewRamp(start float64, stages []Stage, duration time.Duration) Ramp {
	p := Ramp{duration: duration}
	end := duration.Seconds()
	t, r, h := 0.0, start, 0.0
	add := func(t1, r1 float64) {
		if t >= end {
			return
		}
		if t1 > end { // cut the ramp at the end, interpolating its target
			r1 = r + (r1-r)*(end-t)/(t1-t)
			t1 = end
		}
		s := segment{t0: t, t1: t1, r0: r, r1: r1, h0: h}
		p.segs = append(p.segs, s)
		h += (r + r1) / 2 * (t1 - t)
		t, r = t1, r1
	}
	for _, st := range stages {
		if st.For <= 0 {
			r = st.Target
			continue
		}
		add(t+st.For.Seconds(), st.Target)
	}
	if t < end {
		add(end, r)
	}
	return p
}

// Duration is the length of the run.
func (p Ramp) Duration() time.Duration { return p.duration }

// At returns the target at elapsed: sessions per second (open model) or
// concurrent clients (closed model). It is 0 outside [0, Duration).
func (p Ramp) At(elapsed time.Duration) float64 {
	x := elapsed.Seconds()
	// Segments are contiguous and in time order: a curve has thousands.
	i := sort.Search(len(p.segs), func(i int) bool { return x < p.segs[i].t1 })
	if i < len(p.segs) && x >= p.segs[i].t0 {
		s := p.segs[i]
		return s.r0 + (s.r1-s.r0)*(x-s.t0)/(s.t1-s.t0)
	}
	return 0
}

// Clients returns the closed-model target at elapsed as a whole number of
// clients (rounded down, so a ramp to N reaches N only at its end), capped
// at maxClients when maxClients > 0.
func (p Ramp) Clients(elapsed time.Duration, maxClients int) int {
	c := int(math.Floor(p.At(elapsed) + 1e-9))
	if maxClients > 0 && c > maxClients {
		c = maxClients
	}
	return c
}

// Hits returns the expected number of open-model arrivals in [0, elapsed):
// the integral of the rate.
func (p Ramp) Hits(elapsed time.Duration) float64 {
	x := elapsed.Seconds()
	// The last segment starting before x.
	i := sort.Search(len(p.segs), func(i int) bool { return x <= p.segs[i].t0 }) - 1
	if i < 0 {
		return 0
	}
	s := p.segs[i]
	dx := math.Min(x, s.t1) - s.t0
	slope := (s.r1 - s.r0) / (s.t1 - s.t0)
	return s.h0 + s.r0*dx + slope*dx*dx/2
}

// Total is the expected number of arrivals over the whole run.
func (p Ramp) Total() float64 { return p.Hits(p.duration) }

// due returns the time (seconds) at which arrival number k (0-based) is due,
// the first t with Hits(t) = k, or false if it falls at or after the end.
func (p Ramp) due(k float64) (float64, bool) {
	if k == 0 {
		for _, s := range p.segs { // the first moment the rate is positive
			if s.r0 > 0 || s.r1 > 0 {
				return s.t0, true
			}
		}
		return 0, false
	}
	// Skip the segments that end below k (their ends only grow).
	first := sort.Search(len(p.segs), func(i int) bool { return k <= p.segs[i].hEnd() })
	for _, s := range p.segs[first:] {
		span := s.t1 - s.t0
		if k > s.hEnd() {
			continue
		}
		// Solve h0 + r0·x + a·x² = k for the smallest x ≥ 0, with
		// a = slope/2, in the form that stays exact when a → 0.
		need := k - s.h0
		a := (s.r1 - s.r0) / span / 2
		disc := s.r0*s.r0 + 4*a*need
		if disc < 0 {
			disc = 0
		}
		den := s.r0 + math.Sqrt(disc)
		if den <= 0 {
			continue
		}
		x := 2 * need / den
		t := s.t0 + math.Min(math.Max(x, 0), span)
		if t >= p.duration.Seconds() {
			return 0, false
		}
		return t, true
	}
	return 0, false
}

// Due returns the intended start time of open-model arrival k (0-based),
// or false when the schedule ends before it. Latency measured from Due(k)
// rather than from the actual send is free of coordinated omission (wrk2).
func (p Ramp) Due(k uint64) (time.Duration, bool) {
	t, ok := p.due(float64(k))
	if !ok {
		return 0, false
	}
	return time.Duration(t * float64(time.Second)), true
}

// Pacer decides when the next hit is due (vegeta's interface): given the
// time elapsed since the start and the number of hits already sent, it
// returns how long to wait before the next one, or stop = true when the
// schedule is over.
type Pacer interface {
	Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool)
}

var _ Pacer = Ramp{}

// Pace implements Pacer for the open model: hit k is due when Hits reaches
// k. A caller that is behind gets wait 0 until it catches up (arrivals are
// not skipped: the engine counts the ones it cannot start as dropped_starts).
func (p Ramp) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if elapsed >= p.duration {
		return 0, true
	}
	t, ok := p.due(float64(hits))
	if !ok {
		return 0, true
	}
	wait := time.Duration(t*float64(time.Second)) - elapsed
	if wait < 0 {
		wait = 0
	}
	return wait, false
}
