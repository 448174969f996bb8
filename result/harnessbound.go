package result

import (
	"fmt"
	"math"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
)

// StatusInconclusive is the headline status of a run whose only breaches
// are harness-bound (Run.HarnessBound): latency thresholds the harness's
// own lateness can explain. Nothing shows the server too slow, nothing
// shows it fast enough; `run` exits 8. It ranks under a real FAIL and
// above PASS.
const StatusInconclusive = "inconclusive"

// LagExplains is the one rule by which the harness's lateness excuses a
// latency figure. excessUS is how far the figure lies beyond what it is
// judged against (observed − limit for a threshold, new − base for a
// comparison); lagUS is the harness's send lag at the same quantile of the
// same step (for a comparison, the new side's: the base's lag can only
// have inflated the base figure). The lateness explains the figure when
// the lag is at least the excess: take the lag away and the figure is
// within its bound. A lag that merely reaches the limit does not: with an
// excess beyond the lag, what is left without it (the server's share) is
// itself over the limit, a real breach. A lag under SendLagFloorUS explains
// nothing: that much is the runtime's own wake-up floor, present in every
// run.
//
// Send lag is added to the corrected latency of the request it delays, so
// subtracting it is exact per request; per quantile it is an estimate (the
// p99 of a sum is not the sum of the p99s), which is why such a breach is
// reported INCONCLUSIVE, never PASS.
func LagExplains(excessUS, lagUS int64) bool {
	return lagUS >= SendLagFloorUS && excessUS <= lagUS
}

// HarnessBreach is a breached threshold the harness's lateness explains
// (Run.HarnessBound).
type HarnessBreach struct {
	Threshold ThresholdResult
	Step      string // the step whose latency and send lag were compared
	Quantile  string // "p99", "max", "mean" …: the same on both
	LagUS     int64  // the step's send lag at Quantile
}

// Text says the breach and its excuse: "list_rooms.p99 < 20ms measured
// 535.00ms, send lag p99 533.00ms".
func (b HarnessBreach) Text() string {
	return fmt.Sprintf("%s measured %s, send lag %s %s", b.Threshold.Name, b.Threshold.ObservedText(), b.Quantile, words.US(b.LagUS))
}

// lagQuantile reads the statistic q ("p50" … "max", "mean") of l; ok is
// false for a name that is not one.
func lagQuantile(l Latency, q string) (int64, bool) {
	switch q {
	case "p50":
		return l.P50US, true
	case "p90":
		return l.P90US, true
	case "p99":
		return l.P99US, true
	case "p999":
		return l.P999US, true
	case "max":
		return l.MaxUS, true
	case "min":
		return l.MinUS, true
	case "mean":
		return int64(math.Round(l.MeanUS)), true
	}
	return 0, false
}

// HarnessBound judges one threshold result: ok when it is a breach the
// harness's lateness explains (LagExplains). Only an upper bound ("<",
// "<=") on a step's corrected latency statistic ("<label>.p99", p50, p90,
// p999, max, min, mean) qualifies, against that step's send lag at the
// same statistic: lateness only adds latency, so it cannot explain a
// figure below a lower bound, an error rate, a count or a timeout (the
// engine times a request from its actual send, so a late harness does not
// time it out sooner). A bound on the send lag itself ("<label>.send_lag.p99")
// is the user's own limit on the harness and stays a FAIL; a metric without
// data fails outright.
func (r *Run) HarnessBound(t ThresholdResult) (HarnessBreach, bool) {
	if t.Pass || t.NoData || (t.Op != "<" && t.Op != "<=") {
		return HarnessBreach{}, false
	}
	step, stat, scale := t.Step, t.Metric, 1e6
	if cut, ok := strings.CutSuffix(stat, "_us"); ok && step != "" {
		// An older file's split metric ("p99_us"): values in µs.
		stat, scale = cut, 1
	}
	if step == "" {
		var ok bool
		if step, stat, ok = strings.Cut(t.Metric, "."); !ok {
			return HarnessBreach{}, false
		}
	}
	for _, s := range r.Steps {
		if s.Name != step || s.SendLag.Count == 0 {
			continue
		}
		lag, ok := lagQuantile(s.SendLag, stat)
		if !ok {
			return HarnessBreach{}, false
		}
		excess := int64(math.Round((t.Observed - t.Limit) * scale))
		if !LagExplains(excess, lag) {
			return HarnessBreach{}, false
		}
		return HarnessBreach{Threshold: t, Step: step, Quantile: stat, LagUS: lag}, true
	}
	return HarnessBreach{}, false
}

// HarnessBreaches are the run's breached thresholds its harness's
// lateness explains, in threshold order.
func (r *Run) HarnessBreaches() []HarnessBreach {
	var out []HarnessBreach
	for _, t := range r.Thresholds {
		if b, ok := r.HarnessBound(t); ok {
			out = append(out, b)
		}
	}
	return out
}

// harnessBoundText lists harness-bound breaches in one phrase: the first
// few named (HarnessBreach.Text), the rest counted.
func harnessBoundText(bs []HarnessBreach) string {
	const named = 3
	parts := make([]string, 0, named)
	for _, b := range bs[:min(len(bs), named)] {
		parts = append(parts, b.Text())
	}
	text := strings.Join(parts, "; ")
	if len(bs) > named {
		text += fmt.Sprintf("; and %d more", len(bs)-named)
	}
	return text
}
