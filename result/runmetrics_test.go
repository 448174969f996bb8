package result

import (
	"math"
	"testing"
	"time"
)

func TestRunMetrics(t *testing.T) {
	run := &Run{
		DurationNS: 10 * time.Second,
		Totals: Totals{Requests: 200, Successes: 190, Failures: 10, Retries: 4, Dropped: 2, Violations: 1,
			FailuresByReason: map[string]int64{ReasonTimeout: 6}, SessionsStarted: 50, SessionsFinished: 48},
		Steps: []Series{
			{Name: "join", Requests: 100, Failures: 5, Retries: 3, FailuresByReason: map[string]int64{ReasonTimeout: 2},
				Latency: Latency{Count: 95, MinUS: 100, MeanUS: 1500, P50US: 1000, P90US: 2000, P99US: 19000, P999US: 25000, MaxUS: 30000},
				SendLag: Latency{Count: 95, P50US: 4, P99US: 80, MaxUS: 1200}},
			{Name: "idle"}, // recorded nothing
		},
		RateLimits: []RateLimitFinding{{ObservedLimitPerSec: 120}, {ObservedLimitPerSec: 0}},
		Malformed:  []MalformedFinding{{Sent: 10, UnexpectedReplies: 1}, {Sent: 5}},
		// a wait's silent cuts are not counted: it is long by nature
		Messages: []Series{{Name: "LOBBY_JOIN_ROOM", CutSilent: 3}, {Name: "LOBBY_GAME_START", Wait: true, CutSilent: 5}},
	}
	look := RunMetrics(run)
	tests := []struct {
		metric string
		want   float64
		found  bool
	}{
		{"requests", 200, true},
		{"retries", 4, true},
		{"timeouts", 6, true},
		{"errors.count", 10, true},
		{"errors.rate", 0.05, true},
		{"cut_silent.count", 3, true},
		{"cut_silent.rate", 3.0 / 203, true},
		{"violations", 1, true},
		{"dropped_starts", 2, true},
		{"sessions.started", 50, true},
		{"sessions.completed", 48, true},
		{"throughput", 19, true},
		{"join.p50", 0.001, true},
		{"join.p90", 0.002, true},
		{"join.p99", 0.019, true},
		{"join.p999", 0.025, true},
		{"join.min", 0.0001, true},
		{"join.max", 0.030, true},
		{"join.mean", 0.0015, true},
		{"join.count", 100, true},
		{"join.errors", 5, true},
		{"join.error_rate", 0.05, true},
		{"join.timeouts", 2, true},
		{"join.retries", 3, true},
		{"join.send_lag.p50", 0.000004, true},
		{"join.send_lag.p99", 0.00008, true},
		{"join.send_lag.max", 0.0012, true},
		{"idle.send_lag.p99", 0, false}, // no send lag recorded (or an older document)
		{"join.send_lag.p90", 0, false},
		{"rate_probe.limit", 120, true},
		{"malformed.replies", 1, true},
		{"malformed.sent", 15, true},
		{"idle.p99", 0, false},        // no samples: not a silent 0
		{"idle.error_rate", 0, false}, // 0/0
		{"idle.count", 0, true},
		{"ghost.p99", 0, false},
		{"ghost.count", 0, true}, // a step that never completed a request counts 0
		{"join.p75", 0, false},
		{"nonsense", 0, false},
	}
	for _, tt := range tests {
		got, found := look(tt.metric)
		if found != tt.found || (found && math.Abs(got-tt.want) > 1e-9) {
			t.Errorf("%s = %v, %v; want %v, %v", tt.metric, got, found, tt.want, tt.found)
		}
	}
	// A probe that found no limit reads 0: the observed value is stored,
	// and JSON has no +Inf.
	if v, found := RunMetrics(&Run{RateLimits: []RateLimitFinding{{}}})("rate_probe.limit"); !found || v != 0 {
		t.Errorf("no limit found = %v, %v; want 0, true", v, found)
	}
	// Findings naming their step are read for that step only.
	named := RunMetrics(&Run{RateLimits: []RateLimitFinding{
		{Source: "probe", ObservedLimitPerSec: 250}, {Source: "probe: 127.0.0.2", ObservedLimitPerSec: 200}, {Source: "probe2", ObservedLimitPerSec: 50}}})
	for m, want := range map[string]float64{"probe.limit": 200, "probe2.limit": 50} {
		if v, found := named(m); !found || v != want {
			t.Errorf("%s = %v, %v; want %v", m, v, found, want)
		}
	}
	if _, found := named("other.limit"); found {
		t.Error("other.limit found from findings of other steps")
	}

}

// TestRunMetricsSessions reads the engine's session counts (as a merged
// run carries them): thresholds on sessions.* and clients.max parse and
// evaluate; without them the engine-only ones are missing, not 0.
func TestRunMetricsSessions(t *testing.T) {
	run := &Run{
		Totals:   Totals{SessionsStarted: 30, SessionsFinished: 29},
		Sessions: &Sessions{Started: 30, Completed: 24, Failed: 5, Cut: 1, MaxActive: 12},
	}
	ts := []Threshold{
		{Name: "sessions.completed >= 24", Metric: "sessions.completed", Op: ">=", Limit: 24},
		{Name: "sessions.failed < 5", Metric: "sessions.failed", Op: "<", Limit: 5},
		{Name: "clients.max <= 12", Metric: "clients.max", Op: "<=", Limit: 12},
	}
	res, ok := Evaluate(ts, RunMetrics(run))
	if ok || !res[0].Pass || res[1].Pass || !res[2].Pass || res[1].Observed != 5 || res[2].Observed != 12 {
		t.Errorf("Evaluate = %+v, %v", res, ok)
	}
	old := RunMetrics(&Run{Totals: run.Totals})
	if v, found := old("sessions.completed"); !found || v != 29 {
		t.Errorf("sessions.completed without Sessions = %v, %v; want the finished count 29", v, found)
	}
	for _, m := range []string{"sessions.failed", "clients.max"} {
		if _, found := old(m); found {
			t.Errorf("%s found without Sessions", m)
		}
	}
}

// TestRunMetricsMerged reads a run as the engine fills it and Merge sums
// it: the session counts from run.Sessions, malformed findings summed
// over kinds, the rate limit of the findings naming the step.
func TestRunMetricsMerged(t *testing.T) {
	run := NewRun()
	run.DurationNS = 2 * time.Second
	run.Totals = Totals{Requests: 100, Successes: 90, Failures: 10, Retries: 4, Dropped: 3, Violations: 2,
		SessionsStarted: 50, FailuresByReason: map[string]int64{"timeout": 6}}
	run.Steps = []Series{
		{Name: "join", Requests: 40, Successes: 38, Failures: 2, Retries: 1, FailuresByReason: map[string]int64{"timeout": 2},
			Latency: Latency{Count: 38, MinUS: 100, MeanUS: 1500, P50US: 1000, P90US: 2000, P99US: 5000, P999US: 7000, MaxUS: 9000}},
		{Name: "leave", Requests: 0},
	}
	run.Malformed = []MalformedFinding{{Kind: "bad_crc", Sent: 5, UnexpectedReplies: 1}, {Kind: "truncated", Sent: 3}}
	run.RateLimits = []RateLimitFinding{{Source: "probe", ObservedLimitPerSec: 250}}
	run.Sessions = &Sessions{Started: 50, Completed: 45, Failed: 5, MaxActive: 12}
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
	look := RunMetrics(run)
	for _, tc := range tests {
		got, found := look(tc.metric)
		if found != tc.found || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, %v; want %v, %v", tc.metric, got, found, tc.want, tc.found)
		}
	}
	// Without run.Sessions the engine-only metrics are missing.
	run.Sessions = nil
	if _, found := RunMetrics(run)("clients.max"); found {
		t.Error("clients.max found without run.Sessions")
	}
}
