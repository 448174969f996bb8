package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
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

// fmtCPU formats a CPU time in the latency tables' units: "850µs",
// "12.35ms", "1.50s".
func fmtCPU(d time.Duration) string { return fmtUS(d.Microseconds()) }

// fmtMiB formats bytes as MiB with one decimal.
func fmtMiB(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// fmtThousands writes n with thousands separators: 1,234,567.
func fmtThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Summary says in one line what the process used: "CPU 1.23s, peak RSS
// 12.3 MiB, up to 9 threads and 14 open files (12 samples)".
func (tp TargetProcess) Summary() string {
	peakThreads, peakFDs := 0, -1
	for _, s := range tp.Samples {
		peakThreads = max(peakThreads, s.Threads)
		peakFDs = max(peakFDs, s.OpenFDs)
	}
	s := fmt.Sprintf("CPU %s, peak RSS %s", fmtCPU(tp.CPUNS), fmtMiB(tp.PeakRSSBytes))
	if len(tp.Samples) > 0 {
		s += fmt.Sprintf(", up to %d threads", peakThreads)
		if peakFDs >= 0 {
			s += fmt.Sprintf(" and %d open files", peakFDs)
		}
	}
	return s + " (" + Count(len(tp.Samples), "sample") + ")"
}

// TargetLines are the summary of the server's process the terminal and
// Markdown print under "Target process": what it is and how it ended,
// its CPU per 1,000 requests, its memory, and what the figures include.
// None when the run has no TargetProcess.
func TargetLines(r *Run) []string {
	c, ok := r.TargetCost()
	if !ok {
		return nil
	}
	tp := r.TargetProcess
	first := tp.Command
	var pids []string
	for _, p := range tp.PIDs {
		pids = append(pids, strconv.Itoa(p))
	}
	if len(pids) > 0 {
		first += fmt.Sprintf(" (pid %s", strings.Join(pids, ", "))
		if tp.Starts > 1 {
			first += fmt.Sprintf("; %d starts", tp.Starts)
		}
		first += ")"
	}
	ends := tp.Exits
	if tp.Stop != "" && len(ends) > 0 {
		ends = ends[:len(ends)-1] // the last is the stop's, said below
	}
	if len(ends) > 0 {
		first += "; ended on its own: " + strings.Join(ends, ", ")
	}
	if tp.Stop != "" {
		first += "; at the end " + tp.Stop
	}
	var cpu string
	var parts []string
	if c.Requests > 0 {
		cpu = fmt.Sprintf("CPU: %s per 1,000 requests", fmtCPU(c.PerThousand))
		parts = append(parts, fmt.Sprintf("%s over %s requests", fmtCPU(c.CPU), fmtThousands(c.Requests)))
	} else {
		cpu = fmt.Sprintf("CPU: %s, no request completed", fmtCPU(c.CPU))
	}
	if c.CoreShare > 0 {
		parts = append(parts, strconv.FormatFloat(c.CoreShare*100, 'f', 1, 64)+"% of a core on average")
	}
	if len(parts) > 0 {
		cpu += " (" + strings.Join(parts, "; ") + ")"
	}
	mem := "Memory: peak RSS " + fmtMiB(c.PeakRSSBytes)
	if c.Samples > 0 {
		mem += fmt.Sprintf("; up to %d threads", c.PeakThreads)
		if c.PeakOpenFDs >= 0 {
			mem += fmt.Sprintf(", %d open files", c.PeakOpenFDs)
		}
	}
	mem += fmt.Sprintf(" (%d samples)", c.Samples)
	out := []string{first, cpu, mem}
	if tp.Note != "" {
		out = append(out, "Note: "+tp.Note)
	}
	return out
}
