package scenario

import (
	"math"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/reports"
)

func TestRunMetrics(t *testing.T) {
	run := &reports.Run{
		DurationNS: 10 * time.Second,
		Totals: reports.Totals{Requests: 200, Successes: 190, Failures: 10, Retries: 4, Dropped: 2, Violations: 1,
			FailuresByReason: map[string]int64{reports.ReasonTimeout: 6}, SessionsStarted: 50, SessionsFinished: 48},
		Steps: []reports.Series{
			{Name: "join", Requests: 100, Failures: 5, Retries: 3, FailuresByReason: map[string]int64{reports.ReasonTimeout: 2},
				Latency: reports.Latency{Count: 95, MinUS: 100, MeanUS: 1500, P50US: 1000, P90US: 2000, P99US: 19000, P999US: 25000, MaxUS: 30000},
				SendLag: reports.Latency{Count: 95, P50US: 4, P99US: 80, MaxUS: 1200}},
			{Name: "idle"}, // recorded nothing
		},
		RateLimits: []reports.RateLimitFinding{{ObservedLimitPerSec: 120}, {ObservedLimitPerSec: 0}},
		Malformed:  []reports.MalformedFinding{{Sent: 10, UnexpectedReplies: 1}, {Sent: 5}},
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
	if v, _ := RunMetrics(&reports.Run{RateLimits: []reports.RateLimitFinding{{}}})("rate_probe.limit"); !math.IsInf(v, 1) {
		t.Errorf("no limit found = %v, want +Inf", v)
	}
	// Findings naming their step are read for that step only.
	named := RunMetrics(&reports.Run{RateLimits: []reports.RateLimitFinding{
		{Source: "probe", ObservedLimitPerSec: 250}, {Source: "probe: 127.0.0.2", ObservedLimitPerSec: 200}, {Source: "probe2", ObservedLimitPerSec: 50}}})
	for m, want := range map[string]float64{"probe.limit": 200, "probe2.limit": 50} {
		if v, found := named(m); !found || v != want {
			t.Errorf("%s = %v, %v; want %v", m, v, found, want)
		}
	}
	if _, found := named("other.limit"); found {
		t.Error("other.limit found from findings of other steps")
	}

	// End to end: thresholds from a scenario, evaluated on the run, reported.
	p, err := Parse("s.yaml", []byte(minimal+"thresholds: [join.p99 < 20ms, errors.rate < 1%]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, ok := Evaluate(p.Thresholds, look)
	if ok || !res[0].Pass || res[1].Pass {
		t.Fatalf("Evaluate = %+v, %v", res, ok)
	}
	r0, r1 := res[0].Report(), res[1].Report()
	if r0.Step != "" || r0.Metric != "join.p99" || r0.Op != "<" || r0.Limit != 0.02 || r0.Observed != 0.019 || !r0.Pass || r0.Name != "join.p99 < 20ms" {
		t.Errorf("Report = %+v", r0)
	}
	if r1.Step != "" || r1.Metric != "errors.rate" || r1.Pass {
		t.Errorf("Report = %+v", r1)
	}
}

// TestRunMetricsSessions reads the engine's session counts (as a merged
// run carries them): thresholds on sessions.* and clients.max parse and
// evaluate; without them the engine-only ones are missing, not 0.
func TestRunMetricsSessions(t *testing.T) {
	run := &reports.Run{
		Totals:   reports.Totals{SessionsStarted: 30, SessionsFinished: 29},
		Sessions: &reports.Sessions{Started: 30, Completed: 24, Failed: 5, Cut: 1, MaxActive: 12},
	}
	p, err := Parse("s.yaml", []byte(minimal+"thresholds: [sessions.completed >= 24, sessions.failed < 5, clients.max <= 12]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, ok := Evaluate(p.Thresholds, RunMetrics(run))
	if ok || !res[0].Pass || res[1].Pass || !res[2].Pass || res[1].Value != 5 || res[2].Value != 12 {
		t.Errorf("Evaluate = %+v, %v", res, ok)
	}
	old := RunMetrics(&reports.Run{Totals: run.Totals})
	if v, found := old("sessions.completed"); !found || v != 29 {
		t.Errorf("sessions.completed without Sessions = %v, %v; want the finished count 29", v, found)
	}
	for _, m := range []string{"sessions.failed", "clients.max"} {
		if _, found := old(m); found {
			t.Errorf("%s found without Sessions", m)
		}
	}
}

// TestSetVerdictNoData: a metric the run did not produce is reported as
// NoData, fails, and carries no NaN (JSON has none).
func TestSetVerdictNoData(t *testing.T) {
	p, err := Parse("s.yaml", []byte(minimal+"thresholds: [join.p99 < 20ms]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, ok := Evaluate(p.Thresholds, func(string) (float64, bool) { return 0, false })
	if ok {
		t.Fatal("a missing metric passed")
	}
	r := res[0].Report()
	if !r.NoData || r.Pass || r.Observed != 0 {
		t.Errorf("Report = %+v, want NoData, failed, Observed 0", r)
	}
}
