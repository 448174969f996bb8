package reports

import (
	"fmt"
	"io"

	"github.com/lobbybench/lobbybench/result"
)

// writeRunWarnings writes what the run's figures must be read with
// (result.Run.Warnings: dropped session starts, the harness's send lag)
// under "Warnings:", each folded to TermWidth, then a blank line; nothing
// when there is none. The run summary puts them before its thresholds
// and verdict, as the Markdown and the HTML list them.
func writeRunWarnings(w io.Writer, run *result.Run) {
	warns := run.Warnings()
	if len(warns) == 0 {
		return
	}
	fmt.Fprintln(w, "Warnings:")
	for _, s := range warns {
		writeWrapped(w, "  "+s, 4)
	}
	fmt.Fprintln(w)
}
