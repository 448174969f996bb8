package reports

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// WriteCapacityText writes the capacity search for a terminal, within
// TermWidth columns: the headline, the steps by load, what broke and the
// rule × load matrix.
func WriteCapacityText(w io.Writer, c *result.Capacity) error {
	ew := &errWriter{w: w}
	writeWrapped(ew, c.Headline().Text, 2)
	for _, line := range c.Coverage {
		writeWrapped(ew, "COVERAGE: "+line, 2)
	}
	fmt.Fprintln(ew)
	u := c.Unit()
	fmt.Fprintf(ew, "Steps (load in %s; figures after a %v warm-up):\n", unitName(c), c.Settings.WarmupNS)
	header := []string{"Load", "Verdict", "Achieved/s", "p50", "p99", "Err%", "Lag p99", "Viol"}
	var rows [][]string
	for _, s := range c.StepsByLoad() {
		rows = append(rows, []string{
			result.FormatLoad(s.Load, ""), verdictWord(s.Verdict), strconv.FormatFloat(s.Throughput, 'f', 1, 64),
			capUS(s.P50US), capUS(s.P99US), words.Pct(s.ErrorRate), words.US(s.SendLagP99US), strconv.FormatInt(sumViolations(s.Violations), 10),
		})
	}
	writeColumns(ew, 2, "rlrrrrrr", header, rows)
	var notes []string
	for _, s := range c.Steps {
		switch {
		case len(s.Broke) > 0:
			notes = append(notes, fmt.Sprintf("%s broke: %s", result.FormatLoad(s.Load, u), words.JoinMax(s.Broke, 3)))
		case s.Why != "":
			notes = append(notes, fmt.Sprintf("%s %s: %s", result.FormatLoad(s.Load, u), verdictWord(s.Verdict), s.Why))
		}
		if s.Drain != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", result.FormatLoad(s.Load, u), s.Drain))
		}
		if s.ServerCPUSeconds > 0 || s.ServerPeakRSSBytes > 0 {
			notes = append(notes, fmt.Sprintf("%s: server %.1f CPU-s, peak RSS %.1f MiB", result.FormatLoad(s.Load, u), s.ServerCPUSeconds, float64(s.ServerPeakRSSBytes)/(1<<20)))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(ew)
		for _, n := range notes {
			writeWrapped(ew, "  "+n, 4)
		}
	}
	fmt.Fprintln(ew)
	if len(c.Rules) == 0 {
		writeWrapped(ew, "Conformance under load: no protocol rule was broken at any load.", 2)
	} else {
		fmt.Fprintln(ew, "Conformance under load (each rule's lowest breaking load):")
		var rr [][]string
		for _, r := range c.Rules {
			rr = append(rr, []string{r.Rule, result.FormatLoad(r.FirstLoad, u), strconv.Itoa(r.Steps), strconv.FormatInt(r.Count, 10)})
		}
		writeColumns(ew, 2, "lrrr", []string{"Rule", "First at", "Steps", "Violations"}, rr)
	}
	fmt.Fprintln(ew)
	writeWrapped(ew, capacitySummary(c), 2)
	return ew.err
}

// capacitySummary is the closing line of the text and Markdown: how the
// search, or the ladder, ran and why it stopped.
func capacitySummary(c *result.Capacity) string {
	u := c.Unit()
	head := fmt.Sprintf("Search: start %s, max %s, precision %.0f%%", result.FormatLoad(c.Settings.Start, u), result.FormatLoad(c.Settings.Max, u), c.Settings.Precision*100)
	if c.Ladder() {
		loads := make([]string, len(c.Settings.Loads))
		for i, l := range c.Settings.Loads {
			loads[i] = result.FormatLoad(l, "")
		}
		loads[len(loads)-1] = result.FormatLoad(c.Settings.Loads[len(loads)-1], u)
		ladder := "the ladder " + strings.Join(loads, ", ")
		switch {
		case c.Shard != "":
			head = "Shard " + c.Shard + " of " + ladder
		case c.Shards > 0:
			head = fmt.Sprintf("Merge of %s of %s", words.Count(c.Shards, "shard document"), ladder)
		default:
			head = "Ladder: " + strings.TrimPrefix(ladder, "the ladder ")
		}
	}
	if workers := stepWorkers(c); workers > 0 {
		head += fmt.Sprintf("; each step played by up to %s and judged on their merge", words.Count(workers, "local worker process"))
	}
	return fmt.Sprintf("%s, step %v, budget %v; %s in %v; stopped: %s.", head, c.Settings.StepNS, c.Settings.BudgetNS,
		words.Count(len(c.Steps), "step"), c.DurationNS.Round(time.Second), c.StopText)
}

func unitName(c *result.Capacity) string {
	if c.Model == "closed" {
		return "concurrent clients"
	}
	return "sessions started a second"
}

func sumViolations(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// stepWorkers is the most local worker processes a step of c was played
// by (0: every step by one process).
func stepWorkers(c *result.Capacity) int {
	n := 0
	for _, s := range c.Steps {
		n = max(n, s.Workers)
	}
	return n
}
