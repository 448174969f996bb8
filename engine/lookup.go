package engine

import (
	"strings"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

// MetricLookup returns the value of a threshold metric (scenario.KnownMetrics
// names, canonical units: seconds, fractions, counts, per second) from a run
// result. The session metrics (sessions.completed, sessions.failed,
// clients.max) come from run.Sessions, which Run fills and reports.Merge
// sums, so a merged run is judged as its shards were; info (may be nil)
// stands in for a run without them. With neither they are not found. A
// metric the run did not produce — the latency of a step that never
// succeeded, an error rate without requests — is not found, so its
// threshold fails instead of passing silently.
func MetricLookup(run *reports.Run, info *Info) func(metric string) (float64, bool) {
	steps := map[string]*reports.Series{}
	for i := range run.Steps {
		steps[run.Steps[i].Name] = &run.Steps[i]
	}
	sess := run.Sessions
	if sess == nil && info != nil {
		s := info.Sessions.report()
		sess = &s
	}
	return func(m string) (float64, bool) {
		t := &run.Totals
		switch m {
		case "requests":
			return float64(t.Requests), true
		case "retries":
			return float64(t.Retries), true
		case "timeouts":
			return float64(t.FailuresByReason[reports.ReasonTimeout]), true
		case "errors.count":
			return float64(t.Failures), true
		case "errors.rate":
			if t.Requests == 0 {
				return 0, false
			}
			return t.ErrorRate(), true
		case "violations":
			return float64(t.Violations), true
		case "dropped_starts":
			return float64(t.Dropped), true
		case "sessions.started":
			return float64(t.SessionsStarted), true
		case "sessions.completed":
			if sess == nil {
				return 0, false
			}
			return float64(sess.Completed), true
		case "sessions.failed":
			if sess == nil {
				return 0, false
			}
			return float64(sess.Failed), true
		case "clients.max":
			if sess == nil {
				return 0, false
			}
			return float64(sess.MaxActive), true
		case "throughput":
			if run.DurationNS <= 0 {
				return 0, false
			}
			return float64(t.Successes) / run.DurationNS.Seconds(), true
		}
		i := strings.LastIndexByte(m, '.')
		if i < 0 {
			return 0, false
		}
		label, stat := m[:i], m[i+1:]
		s := steps[label]
		switch stat {
		case "count", "errors", "timeouts", "retries":
			if s == nil { // the step never completed a request
				return 0, true
			}
			switch stat {
			case "count":
				return float64(s.Requests), true
			case "errors":
				return float64(s.Failures), true
			case "timeouts":
				return float64(s.FailuresByReason[reports.ReasonTimeout]), true
			default:
				return float64(s.Retries), true
			}
		case "error_rate":
			if s == nil || s.Requests == 0 {
				return 0, false
			}
			return s.ErrorRate(), true
		case "p50", "p90", "p99", "p999", "max", "min", "mean":
			if s == nil || s.Latency.Count == 0 {
				return 0, false
			}
			l := s.Latency
			us := map[string]float64{"p50": float64(l.P50US), "p90": float64(l.P90US), "p99": float64(l.P99US),
				"p999": float64(l.P999US), "max": float64(l.MaxUS), "min": float64(l.MinUS), "mean": l.MeanUS}[stat]
			return us / 1e6, true
		case "limit":
			// Rate-limit findings carry the probing step's label as
			// their source when the client reports one.
			best, found := 0.0, false
			for _, f := range run.RateLimits {
				if f.Source == label || strings.HasPrefix(f.Source, label+" ") || strings.HasPrefix(f.Source, label+":") {
					if f.ObservedLimitPerSec > 0 && (!found || f.ObservedLimitPerSec < best) {
						best = f.ObservedLimitPerSec
					}
					found = true
				}
			}
			return best, found
		case "replies", "sent":
			// Malformed findings are kept per packet kind, not per step:
			// the figure is the run's total over every malformed step.
			if len(run.Malformed) == 0 {
				return 0, false
			}
			var n int64
			for _, f := range run.Malformed {
				if stat == "sent" {
					n += f.Sent
				} else {
					n += f.UnexpectedReplies
				}
			}
			return float64(n), true
		}
		return 0, false
	}
}

// EvaluateThresholds checks the plan's thresholds against run (and info)
// and stores the verdicts in run.Thresholds. ok is true when all pass.
func EvaluateThresholds(plan *scenario.Plan, run *reports.Run, info *Info) (ok bool) {
	results, ok := scenario.Evaluate(plan.Thresholds, MetricLookup(run, info))
	run.Thresholds = make([]reports.ThresholdResult, 0, len(results))
	for _, r := range results {
		tr := reports.ThresholdResult{
			Name:     r.Threshold.Source,
			Metric:   r.Threshold.Metric,
			Op:       string(r.Threshold.Op),
			Limit:    r.Threshold.Value,
			Observed: r.Value,
			Pass:     r.Pass,
		}
		if r.Missing {
			tr.Observed = 0 // JSON has no NaN; Pass is false
		}
		run.Thresholds = append(run.Thresholds, tr)
	}
	return ok
}
