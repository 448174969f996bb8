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

// SilentEnd is a silence of the target the run ended in: two or more of
// its watchdog's probes had gone unanswered, the first for SilentAfter or
// more, and none of the load's requests was answered since the last
// began, when the load ended; too soon for their whole timeout to call
// the target down (a hang in a run's last seconds). Offsets count from
// the run's StartedAt.
type SilentEnd struct {
	// SinceNS is when the first unanswered probe started.
	SinceNS time.Duration `json:"since_ns"`
	// LastUpNS is when the last answered probe started; -1 when none
	// was answered.
	LastUpNS time.Duration `json:"last_up_ns"`
	// EndNS is when the watchdog stopped, with the load.
	EndNS time.Duration `json:"end_ns"`
}

// SilentAtEndWarning returns one line saying that the target answered
// none of the watchdog's probes in the run's last seconds, or "" when it
// did (or was found down: the headline says that). An interrupted run
// says it too: the user's stop cuts requests, not the probes' silence
// before it (SilentEnd needs a second of it).
func (r *Run) SilentAtEndWarning() string {
	s := r.SilentAtEnd
	if s == nil {
		return ""
	}
	last := "none was answered"
	if s.LastUpNS >= 0 {
		last = "the last answered probe was sent at +" + words.Seconds(s.LastUpNS)
	}
	return fmt.Sprintf("the target answered none of the watchdog's probes for the last %s of the run (from +%s to its end at +%s; %s): it may have hung, which the watchdog calls down only after two probes each go unanswered for their whole timeout, and the run ended first",
		words.Duration(s.EndNS-s.SinceNS), words.Seconds(s.SinceNS), words.Seconds(s.EndNS), last)
}
