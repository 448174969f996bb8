package engine

import (
	"math"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

// MetricLookup returns the value of a threshold metric (scenario.KnownMetrics
// names, canonical units: seconds, fractions, counts, per second) from a run
// result. It is scenario.RunMetrics, the one mapping from a run report to
// metric names, with what only the engine knows: the session metrics
// (sessions.completed, sessions.failed, clients.max) come from run.Sessions,
// which Run fills and reports.Merge sums, so a merged run is judged as its
// shards were; info (may be nil) stands in for a run without them. And a
// rate probe that found no limit reads 0, not +Inf: the observed value is
// stored in the run report, and JSON has no +Inf. A metric the run did not
// produce — the latency of a step that never succeeded, an error rate
// without requests — is not found, so its threshold fails instead of
// passing silently.
func MetricLookup(run *reports.Run, info *Info) func(metric string) (float64, bool) {
	base := scenario.RunMetrics(run)
	var sess *reports.Sessions
	if run.Sessions == nil && info != nil {
		s := info.Sessions.report()
		sess = &s
	}
	return func(m string) (float64, bool) {
		if sess != nil {
			switch m {
			case "sessions.completed":
				return float64(sess.Completed), true
			case "sessions.failed":
				return float64(sess.Failed), true
			case "clients.max":
				return float64(sess.MaxActive), true
			}
		}
		v, ok := base(m)
		if ok && math.IsInf(v, 1) { // only "<label>.limit" reads +Inf
			return 0, true
		}
		return v, ok
	}
}

// EvaluateThresholds checks the plan's thresholds against run (and info)
// and stores the verdicts in run.Thresholds. ok is true when all pass.
func EvaluateThresholds(plan *scenario.Plan, run *reports.Run, info *Info) (ok bool) {
	run.Thresholds, ok = scenario.EvaluateReport(plan.Thresholds, MetricLookup(run, info))
	return ok
}
