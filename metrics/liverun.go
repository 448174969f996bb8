package metrics

import (
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// LiveSet returns c's live figures (Live, LiveViolations, LiveKeys) as one
// set: what a live page turns into a run so far (LiveSet.Run).
func (c *Collector) LiveSet() LiveSet {
	return LiveSet{Live: c.Live(), Violations: c.LiveViolations(), Keys: c.LiveKeys()}
}

// LiveSet merges the slots' latest figures (MergeLive), histograms and
// outages included, in one pass.
func (m *Merged) LiveSet() LiveSet { return MergeLive(m.all()) }

// Run turns live figures into a result.Run so far, as Collector.Snapshot
// aggregates a process's recorders: steps and message types in their
// order with their counters and latencies, the totals summed over the
// steps, the violations per rule (counts, no samples: those stay in the
// recorders until the end), the outages and sessions the set carries, the run's start
// and its duration so far. Nothing is cut yet, no time series and no
// threshold is judged: a live page adds those.
func (s LiveSet) Run(start time.Time, elapsed time.Duration) (*result.Run, error) {
	run := result.NewRun()
	run.StartedAt = start
	run.DurationNS = max(elapsed, 0)
	run.Steps, run.Messages = []result.Series{}, []result.Series{}
	t := &run.Totals
	for _, k := range s.Keys {
		sr := result.Series{Name: k.Name, Successes: k.Successes, Failures: k.Failures, Retries: k.Retries, Dropped: k.Dropped,
			Requests: k.Successes + k.Failures, FailuresByReason: map[string]int64{}}
		for reason, n := range k.FailuresByReason {
			sr.FailuresByReason[reason] = n
		}
		var err error
		if sr.Latency, err = result.NewLatency(k.Corrected); err != nil {
			return nil, err
		}
		if sr.Uncorrected, err = result.NewLatency(k.Uncorrected); err != nil {
			return nil, err
		}
		if sr.SendLag, err = result.NewLatency(k.SendLag); err != nil {
			return nil, err
		}
		if k.Kind == KindMessage {
			run.Messages = append(run.Messages, sr)
			continue
		}
		run.Steps = append(run.Steps, sr)
		t.Requests += sr.Requests
		t.Successes += sr.Successes
		t.Failures += sr.Failures
		t.Retries += sr.Retries
		t.Dropped += sr.Dropped
		for reason, n := range sr.FailuresByReason {
			t.FailuresByReason[reason] += n
		}
	}
	t.SessionsStarted, t.SessionsFinished = s.Live.SessionsStarted, s.Live.SessionsFinished
	t.DataSent, t.DataReceived = s.Live.DataSent, s.Live.DataReceived
	run.Violations = make([]result.Violation, 0, len(s.Violations))
	for _, v := range s.Violations {
		run.Violations = append(run.Violations, result.Violation{Rule: v.Rule, Count: v.Count, Samples: []result.ViolationSample{}})
		t.Violations += v.Count
	}
	run.Outages = append([]result.Outage(nil), s.Outages...)
	if s.Sessions != nil {
		ss := *s.Sessions
		run.Sessions = &ss
	}
	run.TimeSeries = []result.Point{}
	run.RateLimits = []result.RateLimitFinding{}
	run.Malformed = []result.MalformedFinding{}
	run.Thresholds = []result.ThresholdResult{}
	return run, nil
}
