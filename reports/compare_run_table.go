package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// runRowName names the comparison's run-wide row (result.Comparison.Run,
// whose breaches have the subject "run"): the error rate over every
// request of the run, all steps together.
const runRowName = "run (all steps)"

// WriteCompareTable writes c for a terminal, every line at most TermWidth
// columns: a line for each side that was interrupted, then per step the
// latency (p50 and p99, BASE and NEW and the change in percent of BASE)
// and the error rate (BASE, NEW and the change in percentage points, with
// the run's over all its steps last), the rules violated in NEW only,
// the increases not gated and the broken gates.
func WriteCompareTable(w io.Writer, c *result.Comparison) error {
	ew := &errWriter{w: w}
	for _, s := range c.Incomplete {
		writeWrapped(ew, s, 2)
	}
	if len(c.Incomplete) > 0 {
		fmt.Fprintln(ew)
	}
	var lat, errs [][]string
	for _, d := range c.Steps {
		name := d.Name
		switch {
		case !d.InBase:
			name += " (new)"
		case !d.InNew:
			name += " (gone)"
		}
		row := []string{name, "-", "-", "-", "-", "-", "-"}
		if d.HasLatency {
			row = []string{name, words.US(d.BaseP50US), words.US(d.NewP50US), words.Signed(d.P50ChangePct, "%"),
				words.US(d.BaseP99US), words.US(d.NewP99US), words.Signed(d.P99ChangePct, "%")}
		}
		lat = append(lat, row)
		errs = append(errs, errorRateRow(name, d))
	}
	errs = append(errs, errorRateRow(runRowName, c.Run))
	fmt.Fprintln(ew, "Latency, BASE -> NEW (change in % of BASE):")
	writeColumns(ew, 2, "lrrrrrr", []string{"STEP", "p50 BASE", "p50 NEW", "CHANGE", "p99 BASE", "p99 NEW", "CHANGE"}, lat)
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, "Error rate, BASE -> NEW (change in percentage points):")
	writeColumns(ew, 2, "lrrr", []string{"STEP", "BASE", "NEW", "CHANGE"}, errs)
	fmt.Fprintln(ew)
	if len(c.NewViolations) > 0 {
		writeWrapped(ew, "New violated rules: "+strings.Join(c.NewViolations, ", "), 2)
	}
	for _, s := range c.Spared {
		writeWrapped(ew, "Not gated: "+s, 2)
	}
	writeGates(ew, c.Breaches)
	return ew.err
}

// errorRateRow is a step's (or the run's) error-rate row: BASE, NEW and
// the change in percentage points.
func errorRateRow(name string, d result.StepDelta) []string {
	return []string{name, words.Pct(d.BaseErrorRate), words.Pct(d.NewErrorRate), words.Signed(d.ErrorRateChangePP, "pp")}
}
