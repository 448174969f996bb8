package scenario

import (
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals is how the open model spaces its arrivals in time.
type Arrivals string

const (
	// ArrivalsUniform (the default) starts arrival k when the integral of
	// the rate reaches k: evenly spaced at a constant rate.
	ArrivalsUniform Arrivals = "uniform"
	// ArrivalsPoisson makes the arrivals a non-homogeneous Poisson process
	// whose intensity is the rate ramp, drawn from the scenario's seed.
	ArrivalsPoisson Arrivals = "poisson"
)

// ArrivalStream is the NewRand stream of the seed that draws Poisson
// arrival gaps: apart from flow choice (0), think times (1+client),
// closed-model slots (1<<62+slot) and impairment (1<<40+client).
const ArrivalStream = 1 << 63

// Schedule yields the open model's arrival times in order, arrival 0
// first. Every shard of a run builds the same Schedule from the plan and
// walks all of it, starting only the arrivals it owns, so the shards
// together start exactly the arrivals of an unsharded run at the same
// times. A Schedule is not safe for concurrent use.
//
// Poisson arrivals use time rescaling: with Λ(t) the integral of the rate
// (Ramp.Hits), the times t_k = Λ⁻¹(E_0+…+E_k), where the E_i are
// independent Exp(1) gaps, are exactly a Poisson process of intensity
// rate(t) (the unit-rate process mapped through Λ⁻¹). Λ is piecewise
// quadratic for a piecewise-linear rate, so Λ⁻¹ has a closed form
// (Ramp.due, the same inversion the uniform schedule uses with E_k = 1)
// and each arrival costs one random draw. Thinning would be exact too, but
// spends draws on rejected candidates in proportion to peak/rate, so a
// ramp from near 0 wastes most of them.
type Schedule struct {
	prof    Ramp
	poisson bool
	rng     *rand.Rand
	level   float64 // Λ of the last arrival (Poisson)
	k       uint64
	done    bool
}

// Schedule returns the arrival times of this open load; seed is the
// scenario's seed (Plan.Seed), used by Poisson arrivals only.
func (l LoadShape) Schedule(seed int64) *Schedule {
	s := &Schedule{prof: l.Ramp()}
	if l.Arrivals == ArrivalsPoisson {
		s.poisson = true
		s.rng = NewRand(seed, ArrivalStream)
	}
	return s
}

// Next returns the due time (from the start of the run) of the next
// arrival, or false once the schedule has ended; it stays ended.
func (s *Schedule) Next() (time.Duration, bool) {
	if s.done {
		return 0, false
	}
	var t float64
	var ok bool
	if s.poisson {
		// Inverse transform: -ln(1-U) is Exp(1) for U uniform in [0,1),
		// written out rather than rand.ExpFloat64 so the times depend only
		// on the PCG stream, not on the library's ziggurat tables.
		s.level += -math.Log1p(-s.rng.Float64())
		t, ok = s.prof.due(s.level)
	} else {
		t, ok = s.prof.due(float64(s.k))
	}
	if !ok {
		s.done = true
		return 0, false
	}
	s.k++
	return time.Duration(t * float64(time.Second)), true
}
