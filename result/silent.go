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

// SilentCuts counts the requests the end of the run cut after they had
// waited SilentAfter or their timeout without a reply: Series.CutSilent
// over the message types that are not waits (a wait, such as a
// GAME_START a player awaits, is long by nature). The metric
// cut_silent.count; cut_silent.rate is SilentCutRate.
func (r *Run) SilentCuts() int64 {
	var n int64
	for _, m := range r.Messages {
		if !m.Wait {
			n += m.CutSilent
		}
	}
	return n
}

// SilentCutRate is SilentCuts over the requests that had an outcome plus
// those (Requests - Cut + SilentCuts): how many of the requests a server
// was given time to answer it left unanswered until the end cut them.
// Not found when there were none.
func (r *Run) SilentCutRate() (float64, bool) {
	n := r.SilentCuts()
	return ratio(n, r.Totals.Requests-r.Totals.Cut+n)
}

// SilentCutWarning returns one line naming the requests the end of the
// run cut after they had waited SilentAfter or their timeout without a
// reply (Series.CutSilent, by message type), or "" when there were none.
// An interrupted run cuts what it cuts by the user's doing: its headline
// says so, and no such line is made.
func (r *Run) SilentCutWarning() string {
	if r.Interrupted() {
		return ""
	}
	n := r.SilentCuts()
	if n == 0 {
		return ""
	}
	var by []string
	for _, m := range r.Messages {
		if m.CutSilent > 0 && !m.Wait {
			by = append(by, fmt.Sprintf("%s %d", m.Name, m.CutSilent))
		}
	}
	return fmt.Sprintf("%s had had no reply for %s or more, or for their whole timeout, when the end of the run cut them (%s): what a server that drops requests (a rate limit, a full queue) leaves in a run shorter than their timeout; not errors, they are counted by the metrics cut_silent.count and cut_silent.rate",
		words.Count(n, "request"), words.Duration(SilentAfter), strings.Join(by, ", "))
}
