package reports

import (
	"fmt"
	"io"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// WriteCapacityCompareTable writes c for a terminal: a line for each
// partial side first, then the sustainable loads and their change, the
// loads whose verdict changed, and the broken gates.
func WriteCapacityCompareTable(w io.Writer, c *result.CapacityComparison) error {
	ew := &errWriter{w: w}
	for _, s := range c.Incomplete {
		writeWrapped(ew, s, 2)
	}
	u := "/s"
	if c.Model == "closed" {
		u = " clients"
	}
	change := words.Signed(c.ChangePct, "%")
	if c.BaseSustainable == 0 {
		change = "base held no load"
	}
	writeWrapped(ew, fmt.Sprintf("Sustainable load: %s -> %s (%s); each search knows its limit within its precision (base %.0f%%, new %.0f%%).",
		result.FormatLoad(c.BaseSustainable, u), result.FormatLoad(c.NewSustainable, u), change, c.BasePrecision*100, c.NewPrecision*100), 2)
	if len(c.Changed) == 0 {
		fmt.Fprintln(ew, "No verdict changed at a load both searches tried.")
	} else {
		fmt.Fprintln(ew, "Verdicts changed at loads both searches tried:")
		var rows [][]string
		for _, ch := range c.Changed {
			rows = append(rows, []string{result.FormatLoad(ch.Load, u), verdictWord(ch.BaseVerdict), verdictWord(ch.NewVerdict)})
		}
		writeColumns(ew, 2, "rll", []string{"Load", "Base", "New"}, rows)
		for _, ch := range c.Changed {
			if ch.NewBroke != "" {
				writeWrapped(ew, fmt.Sprintf("  %s in new: %s", result.FormatLoad(ch.Load, u), ch.NewBroke), 4)
			}
		}
	}
	writeGates(ew, c.Breaches)
	return ew.err
}
