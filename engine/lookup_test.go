package engine

import (
	"math"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

func TestMetricLookup(t *testing.T) {
	run := reports.NewRun()
	run.DurationNS = 2 * time.Second
	run.Totals = reports.Totals{Requests: 100, Successes: 90, Failures: 10, Retries: 4, Dropped: 3, Violations: 2,
		SessionsStarted: 50, FailuresByReason: map[string]int64{"timeout": 6}}
	run.Steps = []reports.Series{
		{Name: "join", Requests: 40, Successes: 38, Failures: 2, Retries: 1, FailuresByReason: map[string]int64{"timeout": 2},
			Latency: reports.Latency{Count: 38, MinUS: 100, MeanUS: 1500, P50US: 1000, P90US: 2000, P99US: 5000, P999US: 7000, MaxUS: 9000}},
		{Name: "leave", Requests: 0},
	}
	run.Malformed = []reports.MalformedFinding{{Kind: "bad_crc", Sent: 5, UnexpectedReplies: 1}, {Kind: "truncated", Sent: 3}}
	run.RateLimits = []reports.RateLimitFinding{{Source: "probe", ObservedLimitPerSec: 250}}
	info := &Info{Sessions: SessionInfo{Completed: 45, Failed: 5, MaxActive: 12}}
	tests := []struct {
		metric string
		want   float64
		found  bool
	}{
		{"requests", 100, true},
		{"retries", 4, true},
		{"timeouts", 6, true},
		{"errors.count", 10, true},
		{"errors.rate", 0.1, true},
		{"violations", 2, true},
		{"dropped_starts", 3, true},
		{"sessions.started", 50, true},
		{"sessions.completed", 45, true},
		{"sessions.failed", 5, true},
		{"clients.max", 12, true},
		{"throughput", 45, true}, // 90 successes / 2 s
		{"join.p50", 0.001, true},
		{"join.p99", 0.005, true},
		{"join.p999", 0.007, true},
		{"join.min", 0.0001, true},
		{"join.mean", 0.0015, true},
		{"join.max", 0.009, true},
		{"join.count", 40, true},
		{"join.errors", 2, true},
		{"join.error_rate", 0.05, true},
		{"join.timeouts", 2, true},
		{"join.retries", 1, true},
		{"leave.p99", 0, false},        // no latency recorded: a threshold on it fails
		{"leave.error_rate", 0, false}, // no requests: no rate
		{"never.count", 0, true},       // a step that never completed counts 0
		{"never.p50", 0, false},
		{"mal.sent", 8, true},
		{"mal.replies", 1, true},
		{"probe.limit", 250, true},
		{"other.limit", 0, false},
		{"nonsense", 0, false},
	}
	look := MetricLookup(run, info)
	for _, tc := range tests {
		got, found := look(tc.metric)
		if found != tc.found || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, %v; want %v, %v", tc.metric, got, found, tc.want, tc.found)
		}
	}
	// Without engine info or run.Sessions the engine-only metrics are missing.
	if _, found := MetricLookup(run, nil)("clients.max"); found {
		t.Error("clients.max found without engine info")
	}
	// A merged result carries them in run.Sessions.
	run.Sessions = &reports.Sessions{Started: 50, Completed: 44, Failed: 6, MaxActive: 20}
	for m, want := range map[string]float64{"sessions.completed": 44, "sessions.failed": 6, "clients.max": 20} {
		if got, found := MetricLookup(run, nil)(m); !found || got != want {
			t.Errorf("%s from run.Sessions = %v, %v; want %v", m, got, found, want)
		}
	}
}

func TestEvaluateThresholds(t *testing.T) {
	plan := &scenario.Plan{Flows: []scenario.Flow{{Steps: []scenario.Step{{Label: "join"}}}}}
	known := scenario.KnownMetrics(plan)
	for _, s := range []string{"join.p99 < 10ms", "violations == 0", "join.p50 < 10ms"} {
		th, err := scenario.ParseThreshold(s, known)
		if err != nil {
			t.Fatal(err)
		}
		plan.Thresholds = append(plan.Thresholds, th)
	}
	run := reports.NewRun()
	run.Totals.Violations = 1
	run.Steps = []reports.Series{{Name: "join", Requests: 1, Successes: 1, Latency: reports.Latency{Count: 1, P99US: 5000}}}
	if EvaluateThresholds(plan, run, nil) {
		t.Error("all passed")
	}
	want := []bool{true, false, true}
	for i, r := range run.Thresholds {
		if r.Pass != want[i] || r.Name != plan.Thresholds[i].Source {
			t.Errorf("%d: %+v, want pass %v", i, r, want[i])
		}
	}
}
