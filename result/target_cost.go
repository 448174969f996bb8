package result

import (
	"fmt"
	"math"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// TargetCost is what the load cost the server: its CPU time against the
// requests the run completed, and its memory. Every format's summary of
// an owned or embedded target comes from Run.TargetCost.
type TargetCost struct {
	// CPU is the user+system CPU time over the run (TargetProcess.CPUNS).
	CPU time.Duration
	// Requests are the run's completed requests (Totals.Requests).
	Requests int64
	// PerThousand is CPU per 1,000 requests; 0 with no request.
	PerThousand time.Duration
	// CoreShare is CPU over the run's wall time: 0.25 is a quarter of one
	// core on average; 0 when the length is unknown.
	CoreShare float64
	// PeakRSSBytes is the largest resident memory sampled.
	PeakRSSBytes int64
	// PeakThreads and PeakOpenFDs are the largest sampled; PeakOpenFDs is
	// -1 when /proc did not say.
	PeakThreads, PeakOpenFDs int
	Samples                  int
}

// TargetCost computes the run's TargetCost; false when the run has no
// TargetProcess.
func (r *Run) TargetCost() (TargetCost, bool) {
	tp := r.TargetProcess
	if tp == nil {
		return TargetCost{}, false
	}
	c := TargetCost{CPU: tp.CPUNS, Requests: r.Totals.Requests, PeakRSSBytes: tp.PeakRSSBytes, PeakOpenFDs: -1, Samples: len(tp.Samples)}
	if c.Requests > 0 {
		c.PerThousand = time.Duration(math.Round(float64(c.CPU) * 1000 / float64(c.Requests)))
	}
	if r.DurationNS > 0 {
		c.CoreShare = float64(c.CPU) / float64(r.DurationNS)
	}
	for _, s := range tp.Samples {
		c.PeakThreads = max(c.PeakThreads, s.Threads)
		c.PeakOpenFDs = max(c.PeakOpenFDs, s.OpenFDs)
		c.PeakRSSBytes = max(c.PeakRSSBytes, s.RSSBytes)
	}
	return c, true
}

// Summary says in one line what the process used: "CPU 1.23s, peak RSS
// 12.3 MiB, up to 9 threads and 14 open files (12 samples)".
func (tp TargetProcess) Summary() string {
	peakThreads, peakFDs := 0, -1
	for _, s := range tp.Samples {
		peakThreads = max(peakThreads, s.Threads)
		peakFDs = max(peakFDs, s.OpenFDs)
	}
	s := fmt.Sprintf("CPU %s, peak RSS %s", words.CPU(tp.CPUNS), words.MiB(tp.PeakRSSBytes))
	if len(tp.Samples) > 0 {
		s += fmt.Sprintf(", up to %d threads", peakThreads)
		if peakFDs >= 0 {
			s += fmt.Sprintf(" and %d open files", peakFDs)
		}
	}
	return s + " (" + words.Count(len(tp.Samples), "sample") + ")"
}
