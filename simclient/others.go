package simclient

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// The run-wide others tracker (everyone but a rate probe): a coarse latency histogram per second of
// every request outcome sessions report with Observe, so a rate probe can
// tell what its flood did to everybody else's latency and errors. It is a
// ring of one-second slots of log-linear buckets (8 per power of two of
// microseconds, ~9 % resolution) updated with atomic adds, striped to keep
// two cores from fighting over one cache line.

const (
	othersSlots   = 64
	othersStripes = 4
	subBuckets    = 8
	othersBuckets = 34 * subBuckets // up to 2^34 µs
)

type othersSlot struct {
	sec     atomic.Int64 // second (since Start) this slot holds, -1 = empty
	errors  atomic.Int64
	buckets [othersBuckets]atomic.Int64
}

type othersTracker struct {
	start   time.Time
	stripes [othersStripes][othersSlots]othersSlot
}

func newOthers(start time.Time) *othersTracker {
	t := &othersTracker{start: start}
	for i := range t.stripes {
		for j := range t.stripes[i] {
			t.stripes[i][j].sec.Store(-1)
		}
	}
	return t
}

func bucketOf(us int64) int {
	if us < subBuckets {
		return int(max(us, 0))
	}
	e := 63 - bits.LeadingZeros64(uint64(us)) // us in [2^e, 2^(e+1))
	sub := int((us >> (e - 3)) & (subBuckets - 1))
	b := (e-2)*subBuckets + sub
	return min(b, othersBuckets-1)
}

// bucketUpper returns the largest µs value of bucket b.
func bucketUpper(b int) int64 {
	if b < subBuckets {
		return int64(b)
	}
	e := b/subBuckets + 2
	sub := int64(b % subBuckets)
	return (int64(subBuckets)+sub+1)<<(e-3) - 1
}

func (t *othersTracker) slot(stripe int, at time.Time) *othersSlot {
	sec := int64(at.Sub(t.start) / time.Second)
	if sec < 0 {
		sec = 0
	}
	s := &t.stripes[uint(stripe)%othersStripes][sec%othersSlots]
	if old := s.sec.Load(); old != sec {
		if old < sec && s.sec.CompareAndSwap(old, sec) {
			// Recycle the slot. Racing adds of the new second may be
			// lost: the tracker is an estimate.
			s.errors.Store(0)
			for i := range s.buckets {
				s.buckets[i].Store(0)
			}
		} else if old > sec {
			return nil // too old
		}
	}
	return s
}

// Observe records one request outcome of client id completed at done with
// latency d (ok) or as an error (!ok) into the run-wide tracker. Sessions
// call it for every request except a rate probe's own.
//
// In a run with no rate probe there is nobody to tell, and it does
// nothing: every request would pay for a count that nothing reads.
func (sh *Shared) Observe(id int, done time.Time, d time.Duration, ok bool) {
	if sh.others == nil {
		return
	}
	s := sh.others.slot(id, done)
	if s == nil {
		return
	}
	if !ok {
		s.errors.Add(1)
		return
	}
	s.buckets[bucketOf(int64(d/time.Microsecond))].Add(1)
}

// OthersEffect is the latency of everybody else around a probe.
type OthersEffect struct {
	BeforeUS, DuringUS int64 // p99 in µs; 0 when nothing was observed
	Errors             int64 // errors while the probe was limited
}

// OthersP99 returns the p99 latency (µs) and the error count of the
// outcomes observed with completion in [from, to), at one-second
// resolution, within the last minute.
func (sh *Shared) OthersP99(from, to time.Time) (p99US int64, errors int64) {
	t := sh.others
	if t == nil {
		return 0, 0 // no rate probe in the run: nothing observed
	}
	s0 := int64(from.Sub(t.start) / time.Second)
	s1 := int64(to.Sub(t.start)/time.Second) + 1
	var hist [othersBuckets]int64
	var total int64
	for stripe := range t.stripes {
		for sec := max(s0, s1-othersSlots); sec < s1; sec++ {
			if sec < 0 {
				continue
			}
			sl := &t.stripes[stripe][sec%othersSlots]
			if sl.sec.Load() != sec {
				continue
			}
			errors += sl.errors.Load()
			for b := range sl.buckets {
				n := sl.buckets[b].Load()
				hist[b] += n
				total += n
			}
		}
	}
	if total == 0 {
		return 0, errors
	}
	rank := (total*99 + 99) / 100
	var cum int64
	for b, n := range hist {
		cum += n
		if cum >= rank {
			return bucketUpper(b), errors
		}
	}
	return bucketUpper(othersBuckets - 1), errors
}

// probes reports whether a flow of plan has a rate probe step: whether
// the run keeps the others tracker.
func probes(plan *scenario.Plan) bool {
	for i := range plan.Flows {
		for j := range plan.Flows[i].Steps {
			if plan.Flows[i].Steps[j].Kind == scenario.RateProbe {
				return true
			}
		}
	}
	return false
}
