package result

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
)

// Send lag against the latency it inflates: a step's corrected p50 (p99)
// is flagged when its send lag p50 (p99) is at least SendLagShare of it
// and at least SendLagFloorUS (below it, lag is within the Go runtime's
// own wake-up floor, see docs/internals.md, "Timing precision").
const (
	SendLagShare   = 0.10
	SendLagFloorUS = 50
)

// SendLagWarning returns one line saying which corrected figures the
// harness's own send lag inflates (see SendLagShare), or "" when none.
// One line whatever the number of steps: the first few figures are named,
// the rest counted.
func (r *Run) SendLagWarning() string {
	var hit []string
	for _, s := range r.Steps {
		if s.SendLag.Count == 0 || s.Latency.Count == 0 {
			continue
		}
		for _, q := range []struct {
			name     string
			lag, lat int64
		}{{"p50", s.SendLag.P50US, s.Latency.P50US}, {"p99", s.SendLag.P99US, s.Latency.P99US}} {
			if q.lag >= SendLagFloorUS && float64(q.lag) >= SendLagShare*float64(q.lat) {
				hit = append(hit, s.Name+" "+q.name)
			}
		}
	}
	if len(hit) == 0 {
		return ""
	}
	worst, worstIn := r.WorstSendLag()
	const named = 4
	list := strings.Join(hit[:min(len(hit), named)], ", ")
	if len(hit) > named {
		list += fmt.Sprintf(" and %d more", len(hit)-named)
	}
	return fmt.Sprintf("the harness sent late (send lag p99 up to %s, in %s): it is %.0f%% or more of %s, which overstate the server's latency by that much (the uncorrected figures do not include it)",
		words.US(worst), worstIn, SendLagShare*100, list)
}

// WorstSendLag is the highest send lag p99 of the run's steps, in µs, and
// the step's name (the first one with it); 0 and "" when no step
// recorded a send lag.
func (r *Run) WorstSendLag() (p99US int64, step string) {
	for _, s := range r.Steps {
		if s.SendLag.Count > 0 && (step == "" || s.SendLag.P99US > p99US) {
			p99US, step = s.SendLag.P99US, s.Name
		}
	}
	return p99US, step
}

// Warnings are what the run's figures must be read with, one sentence
// each, as the terminal summary lists them before its thresholds
// ("Warnings:") and the Markdown lists them: session starts the engine dropped (the server got
// less load than asked), a target silent at the end of the run
// (SilentAtEndWarning), the harness's send lag (SendLagWarning), and
// requests cut after long silence (SilentCutWarning).
func (r *Run) Warnings() []string {
	var out []string
	if s := r.Sessions; s != nil {
		if d := s.DroppedNoSlot + s.DroppedLate; d > 0 {
			out = append(out, fmt.Sprintf("%s dropped (%d: max clients live, %d: generator behind): the server got less load than the scenario asked for",
				words.Count(d, "session start"), s.DroppedNoSlot, s.DroppedLate))
		}
	}
	for _, w := range []string{r.SilentAtEndWarning(), r.SendLagWarning(), r.SilentCutWarning()} {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}
