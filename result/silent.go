package result

import (
	"fmt"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// SilentAfter is how long a request cut by the end of the run must have
// waited without a reply (or its whole timeout, if shorter) to be counted
// in Series.CutSilent: far beyond a lobby's latency, so that a server
// dropping requests (a rate limit, a full queue) shows even in a run
// shorter than their timeout, where none of them fails.
const SilentAfter = time.Second

// SilentCutWarning returns one line naming the requests the end of the
// run cut after they had waited SilentAfter or their timeout without a
// reply (Series.CutSilent, by message type), or "" when there were none.
// An interrupted run cuts what it cuts by the user's doing: its headline
// says so, and no such line is made.
func (r *Run) SilentCutWarning() string {
	if r.Interrupted() {
		return ""
	}
	var n int64
	var by []string
	for _, m := range r.Messages {
		if m.CutSilent > 0 && !m.Wait {
			n += m.CutSilent
			by = append(by, fmt.Sprintf("%s %d", m.Name, m.CutSilent))
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s had had no reply for %s or more, or for their whole timeout, when the end of the run cut them (%s): not counted as errors, they are what a server that drops requests (a rate limit, a full queue) leaves in a run shorter than their timeout",
		words.Count(n, "request"), words.Duration(SilentAfter), strings.Join(by, ", "))
}
