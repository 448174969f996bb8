package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// TargetLines are the summary of the server's process the terminal and
// Markdown print under "Target process": what it is and how it ended,
// its CPU per 1,000 requests, its memory, and what the figures include.
// None when the run has no TargetProcess.
func TargetLines(r *result.Run) []string {
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
		cpu = fmt.Sprintf("CPU: %s per 1,000 requests", words.CPU(c.PerThousand))
		parts = append(parts, fmt.Sprintf("%s over %s requests", words.CPU(c.CPU), fmtThousands(c.Requests)))
	} else {
		cpu = fmt.Sprintf("CPU: %s, no request completed", words.CPU(c.CPU))
	}
	if c.CoreShare > 0 {
		parts = append(parts, strconv.FormatFloat(c.CoreShare*100, 'f', 1, 64)+"% of a core on average")
	}
	if len(parts) > 0 {
		cpu += " (" + strings.Join(parts, "; ") + ")"
	}
	mem := "Memory: peak RSS " + words.MiB(c.PeakRSSBytes)
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
