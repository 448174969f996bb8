package result

import (
	"math"
	"strings"
)

// RunMetrics returns the value of a threshold metric (scenario.KnownMetrics
// names, canonical units: seconds, fractions, counts, per second) from a
// recorded (or merged) run: the one mapping from a run's figures to metric
// names, by which Evaluate judges. Latencies are the
// coordinated-omission-corrected ones (from the intended send time);
// "<label>.send_lag.p99" and its p50 and max read the harness's send lag,
// not found in a document without it. The session metrics read
// run.Sessions, which the engine fills and Merge sums, so a merged run is
// judged as its shards were; sessions.failed and clients.max are not found
// without it (sessions.completed is then the recorders' finished count). A
// latency the run never recorded, or a ratio over zero requests, is not
// found — and so fails its threshold instead of passing silently; the
// counts of a step that never completed a request are 0. "<label>.limit"
// reads the rate-limit findings whose Source is the label (or is empty, as
// in documents written before findings named their step): the lowest
// observed limit, and 0 when none of them saw one (the observed value is
// stored in the run, and JSON has no +Inf).
func RunMetrics(run *Run) Lookup {
	steps := make(map[string]*Series, len(run.Steps))
	for i := range run.Steps {
		steps[run.Steps[i].Name] = &run.Steps[i]
	}
	return func(metric string) (float64, bool) {
		if v, ok, known := runWideMetric(run, metric); known {
			return v, ok
		}
		label, stat, ok := strings.Cut(metric, ".")
		if !ok {
			return 0, false
		}
		switch label {
		case MeasureTimeToGame:
			return measureStat(run.TimeToGame, stat)
		case MeasureRoomFill:
			return measureStat(run.RoomFill, stat)
		}
		switch stat {
		case "limit":
			return rateLimitMetric(run.RateLimits, label)
		case "replies", "sent":
			return malformedMetric(run.Malformed, stat)
		}
		return stepMetric(steps[label], stat)
	}
}

// ratio is n/d, not found when d is 0.
func ratio(n, d int64) (float64, bool) {
	if d == 0 {
		return 0, false
	}
	return float64(n) / float64(d), true
}

// runWideMetric reads the metrics of the whole run (no step label); known
// is false when metric is not one of them.
func runWideMetric(run *Run, metric string) (v float64, ok, known bool) {
	t := run.Totals
	switch metric {
	case "requests":
		return float64(t.Requests), true, true
	case "retries":
		return float64(t.Retries), true, true
	case "timeouts":
		return float64(t.Timeouts()), true, true
	case "errors.count":
		return float64(t.Failures), true, true
	case "errors.rate":
		v, ok := ratio(t.Failures, t.Requests-t.Cut)
		return v, ok, true
	case "cut_silent.count":
		return float64(run.SilentCuts()), true, true
	case "cut_silent.rate":
		v, ok := run.SilentCutRate()
		return v, ok, true
	case "violations":
		return float64(t.Violations), true, true
	case "dropped_starts":
		return float64(t.Dropped), true, true
	case "sessions.started", "sessions.completed", "sessions.failed", "clients.max":
		v, ok := sessionMetric(run, metric)
		return v, ok, true
	case "throughput":
		if run.DurationNS <= 0 {
			return 0, false, true
		}
		return float64(t.Successes) / run.DurationNS.Seconds(), true, true
	case MeasureDataSent:
		return float64(t.DataSent), true, true
	case MeasureDataReceived:
		return float64(t.DataReceived), true, true
	}
	return 0, false, false
}

// sessionMetric reads sessions.started, sessions.completed, sessions.failed
// and clients.max: from run.Sessions, which a document may lack.
func sessionMetric(run *Run, metric string) (float64, bool) {
	if metric == "sessions.started" {
		return float64(run.Totals.SessionsStarted), true
	}
	if run.Sessions == nil {
		if metric == "sessions.completed" {
			// A document without the engine's session counts: the
			// recorders' finished count, which includes failed ones.
			return float64(run.Totals.SessionsFinished), true
		}
		return 0, false
	}
	switch metric {
	case "sessions.completed":
		return float64(run.Sessions.Completed), true
	case "sessions.failed":
		return float64(run.Sessions.Failed), true
	}
	return float64(run.Sessions.MaxActive), true // clients.max
}

// rateLimitMetric reads "<label>.limit" (rate_probe): the lowest limit
// observed by the findings of label, 0 when none of them saw one.
func rateLimitMetric(findings []RateLimitFinding, label string) (float64, bool) {
	lim, found := math.Inf(1), false
	for _, f := range findings {
		if !findingOf(f.Source, label) {
			continue
		}
		found = true
		if f.ObservedLimitPerSec > 0 {
			lim = math.Min(lim, f.ObservedLimitPerSec)
		}
	}
	if !found {
		return 0, false
	}
	if math.IsInf(lim, 1) {
		return 0, true
	}
	return lim, true
}

// malformedMetric reads "<label>.replies" and "<label>.sent" (malformed):
// summed over the kinds.
func malformedMetric(findings []MalformedFinding, stat string) (float64, bool) {
	if len(findings) == 0 {
		return 0, false
	}
	var n int64
	for _, f := range findings {
		if stat == "replies" {
			n += f.UnexpectedReplies
		} else {
			n += f.Sent
		}
	}
	return float64(n), true
}

// stepMetric reads statistic stat of step s (nil: the step never
// completed a request, so its counts are 0 and its latencies not found).
func stepMetric(s *Series, stat string) (float64, bool) {
	if s == nil {
		switch stat {
		case "count", "errors", "timeouts", "retries", MeasureDataSent, MeasureDataReceived:
			return 0, true
		}
		return 0, false
	}
	lag := func(v int64) (float64, bool) { return float64(v) / 1e6, s.SendLag.Count > 0 }
	switch stat {
	case "send_lag.p50":
		return lag(s.SendLag.P50US)
	case "send_lag.p99":
		return lag(s.SendLag.P99US)
	case "send_lag.max":
		return lag(s.SendLag.MaxUS)
	case "count":
		return float64(s.Requests), true
	case "errors":
		return float64(s.Failures), true
	case "error_rate":
		return ratio(s.Failures, s.Requests-s.Cut)
	case "timeouts":
		return float64(s.FailuresByReason[ReasonTimeout]), true
	case "retries":
		return float64(s.Retries), true
	case MeasureDataSent:
		return float64(s.DataSent), true
	case MeasureDataReceived:
		return float64(s.DataReceived), true
	}
	return measureStat(&s.Latency, stat) // p50 … max, mean
}

// measureStat reads statistic stat of a lobby duration measure (nil: the
// run recorded none): its count is then 0, its latencies not found.
func measureStat(l *Latency, stat string) (float64, bool) {
	if stat == "count" {
		if l == nil {
			return 0, true
		}
		return float64(l.Count), true
	}
	if l == nil || l.Count == 0 {
		return 0, false
	}
	var us int64
	switch stat {
	case "p50":
		us = l.P50US
	case "p90":
		us = l.P90US
	case "p99":
		us = l.P99US
	case "p999":
		us = l.P999US
	case "min":
		us = l.MinUS
	case "max":
		us = l.MaxUS
	case "mean":
		return l.MeanUS / 1e6, true
	default:
		return 0, false
	}
	return float64(us) / 1e6, true
}

// findingOf reports whether a rate-limit finding's source names the step
// label: the label itself, or the label followed by " " or ":" and a
// detail. An empty source names any step.
func findingOf(source, label string) bool {
	return source == "" || source == label ||
		strings.HasPrefix(source, label+" ") || strings.HasPrefix(source, label+":")
}
