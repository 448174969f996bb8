package reports

import (
	"fmt"
	"io"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// WriteConformCompareTable writes the verdict changes of c (newly failing
// first, then fixed, then other changes) and the broken gates.
func WriteConformCompareTable(w io.Writer, c *result.ConformComparison) error {
	ew := &errWriter{w: w}
	for _, s := range c.Incomplete {
		writeWrapped(ew, s, 2)
	}
	if len(c.Changed) == 0 {
		fmt.Fprintln(ew, "No verdict changed.")
	} else {
		var rows [][]string
		add := func(kind string, chs []result.CaseChange, keep func(result.CaseChange) bool) {
			for _, ch := range chs {
				if keep(ch) {
					k := kind
					if ch.BaseVerdict == "" {
						k += " (new case)"
					}
					rows = append(rows, []string{ch.ID, words.OrDash(ch.BaseVerdict), ch.NewVerdict, k})
				}
			}
		}
		all := func(result.CaseChange) bool { return true }
		add("newly failing", c.NewlyFailing, all)
		add("fixed", c.Fixed, all)
		add("changed", c.Changed, func(ch result.CaseChange) bool {
			return ch.NewVerdict != result.VerdictFail && ch.BaseVerdict != result.VerdictFail
		})
		fmt.Fprintln(ew, "Verdicts changed, BASE -> NEW:")
		writeColumns(ew, 2, "llll", []string{"CASE", "BASE", "NEW", "CHANGE"}, rows)
		fmt.Fprintln(ew)
	}
	fmt.Fprintf(ew, "%d newly failing, %d fixed, %d changed\n", len(c.NewlyFailing), len(c.Fixed), len(c.Changed))
	writeGates(ew, c.Breaches)
	return ew.err
}
