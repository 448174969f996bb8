package reports

import (
	"fmt"
	"io"
	"strconv"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

func init() {
	registerCapacity("markdown", "write a Markdown summary of the search to `FILE`", WriteCapacityMarkdown)
}

// WriteCapacityMarkdown writes the search as a Markdown summary: the
// headline, the steps by load, what broke and the rule × load matrix.
func WriteCapacityMarkdown(w io.Writer, c *result.Capacity) error {
	ew := &errWriter{w: w}
	u := c.Unit()
	fmt.Fprintf(ew, "## lobbybench capacity: %s\n\n", mdInline(c.Scenario))
	fmt.Fprintf(ew, "**%s**\n\n", mdInline(c.Headline().Text))
	for _, line := range c.Coverage {
		fmt.Fprintf(ew, "- COVERAGE: %s\n", mdInline(line))
	}
	if len(c.Coverage) > 0 {
		fmt.Fprintln(ew)
	}
	fmt.Fprintf(ew, "Load in %s; figures after a %v warm-up.\n\n", unitName(c), c.Settings.WarmupNS)
	var rows [][]string
	for _, s := range c.StepsByLoad() {
		rows = append(rows, []string{result.FormatLoad(s.Load, ""), verdictWord(s.Verdict), strconv.FormatFloat(s.Throughput, 'f', 1, 64),
			capUS(s.P50US), capUS(s.P99US), words.Pct(s.ErrorRate), words.US(s.SendLagP99US), violationsText(s.Violations), serverText(s), whatBroke(s)})
	}
	mdTable(ew, []string{"Load", "Verdict", "Achieved/s", "p50", "p99", "Err%", "Send lag p99", "Violations", "Server", "What broke"}, rows)
	fmt.Fprintln(ew)
	if len(c.Rules) == 0 {
		fmt.Fprintln(ew, "Conformance under load: no protocol rule was broken at any load.")
	} else {
		fmt.Fprintln(ew, "### Conformance under load")
		fmt.Fprintln(ew)
		var rr [][]string
		for _, r := range c.Rules {
			rr = append(rr, []string{r.Rule, result.FormatLoad(r.FirstLoad, u), strconv.Itoa(r.Steps), strconv.FormatInt(r.Count, 10)})
		}
		mdTable(ew, []string{"Rule", "First broken at", "Steps", "Violations"}, rr)
	}
	if c.Ladder() || c.Shards > 0 || stepWorkers(c) > 0 {
		fmt.Fprintf(ew, "\n%s\n", mdInline(capacitySummary(c)))
	} else {
		fmt.Fprintf(ew, "\nSearch stopped: %s (%s in %v).\n", mdInline(c.StopText), words.Count(len(c.Steps), "step"), c.DurationNS.Round(1e9))
	}
	return ew.err
}

// serverText is a step's server cost, "-" when not measured.
func serverText(s result.CapacityStep) string {
	if s.ServerCPUSeconds == 0 && s.ServerPeakRSSBytes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f CPU-s, %.1f MiB", s.ServerCPUSeconds, float64(s.ServerPeakRSSBytes)/(1<<20))
}

func drainText(s result.CapacityStep) string {
	if s.Drain == "" {
		return ""
	}
	return " (" + s.Drain + ")"
}
