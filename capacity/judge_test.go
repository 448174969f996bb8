package capacity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/result"
)

func passing(name string, observed, limit float64) result.ThresholdResult {
	return result.ThresholdResult{Name: name, Metric: name, Op: "<", Limit: limit, Observed: observed, Pass: observed < limit}
}

func TestJudge(t *testing.T) {
	base := func() *result.Run {
		return &result.Run{DurationNS: 3 * time.Second,
			Totals:     result.Totals{Requests: 100, Successes: 100}, // the sum over the steps
			Steps:      []result.Series{{Name: "list_rooms", Requests: 100, Successes: 100, SendLag: result.Latency{Count: 100, P99US: 200}}},
			Thresholds: []result.ThresholdResult{passing("errors.rate", 0.01, 0.05)},
			Sessions:   &result.Sessions{Started: 100, Completed: 100},
			TimeSeries: []result.Point{{Second: 0, Requests: 10, Errors: 5}, {Second: 1, Requests: 40, Errors: 0}, {Second: 2, Requests: 40, Errors: 4}},
		}
	}
	tests := []struct {
		name    string
		mod     func(*result.Run)
		verdict string
		broke   []string
		why     string
	}{
		{"pass", nil, result.CapPass, nil, ""},
		{"a threshold breached", func(r *result.Run) {
			r.Thresholds = append(r.Thresholds, passing("list_rooms.p50", 0.002, 0.001), passing("errors.rate", 0.5, 0.05))
		}, result.CapFail, []string{"errors.rate (measured 50.00%, over from +0s)", "list_rooms.p50 (measured 2.00ms)"}, ""},
		{"first in time first, then the most breached", func(r *result.Run) {
			r.TimeSeries = []result.Point{{Second: 0, Requests: 10, P50US: 500, P99US: 900}, {Second: 1, Requests: 40, P50US: 3000, P99US: 4000}, {Second: 2, Requests: 40, Errors: 36, P50US: 900, P99US: 1000}}
			r.Thresholds = []result.ThresholdResult{
				{Name: "list_rooms.count > 1000", Metric: "list_rooms.count", Op: ">", Limit: 1000, Observed: 90},
				{Name: "list_rooms.count > 200", Metric: "list_rooms.count", Op: ">", Limit: 200, Observed: 90},
				passing("errors.rate", 0.4, 0.3),
				passing("list_rooms.p50", 0.002, 0.001),
			}
			r.Violations = []result.Violation{{Rule: "U-SEQ", Count: 1, Samples: []result.ViolationSample{{OffsetNS: 1500 * time.Millisecond}}}}
		}, result.CapFail, []string{"list_rooms.p50 (measured 2.00ms, over from +1s)", "rule U-SEQ (1 violation)", "errors.rate (measured 40.00%, over from +2s)",
			"list_rooms.count > 1000 (measured 90)", "list_rooms.count > 200 (measured 90)"}, ""},
		{"violations, first in time first", func(r *result.Run) {
			r.Violations = []result.Violation{
				{Rule: "U-SEQ", Count: 2, Samples: []result.ViolationSample{{OffsetNS: 2 * time.Second}}},
				{Rule: "U-CRC", Count: 7, Samples: []result.ViolationSample{{OffsetNS: time.Second}}},
			}
		}, result.CapFail, []string{"rule U-CRC (7 violations)", "rule U-SEQ (2 violations)"}, ""},
		{"dropped late starts are the harness's", func(r *result.Run) {
			r.Sessions.DroppedLate = 12
			r.Thresholds[0] = passing("errors.rate", 0.5, 0.05)
		}, result.CapHarnessBound, nil, "12 starts dropped late"},
		{"failed starts are the harness's", func(r *result.Run) { r.Sessions.FailedStarts = 3 }, result.CapHarnessBound, nil, "3 sessions could not open a socket"},
		{"send lag over the bound", func(r *result.Run) { r.Steps[0].SendLag.P99US = 250_000 }, result.CapHarnessBound, nil, "send lag p99 250ms over 100ms"},
		{"harness CPU saturated", func(r *result.Run) {
			r.ShardRuns = []result.ShardRun{{Harness: result.Harness{GOMAXPROCS: 2, CPUSeconds: 5.9}}}
		}, result.CapHarnessBound, nil, "the harness's CPU at 98% of 2 cores"},
		{"an embedded server's CPU is not the harness's", func(r *result.Run) {
			r.ShardRuns = []result.ShardRun{{Embedded: true, Harness: result.Harness{GOMAXPROCS: 2, CPUSeconds: 5.9}}}
		}, result.CapPass, nil, ""},
		{"a breach the send lag explains", func(r *result.Run) {
			r.Steps[0].SendLag.P99US = 50_000
			r.Thresholds = append(r.Thresholds, result.ThresholdResult{Name: "list_rooms.p99 < 20ms", Metric: "list_rooms.p99", Op: "<", Limit: 0.020, Observed: 0.060})
		}, result.CapHarnessBound, nil, "list_rooms.p99 < 20ms measured"},
		{"target down wins", func(r *result.Run) {
			r.Sessions.DroppedLate = 12
			r.Outages = []result.Outage{{Kind: result.DownRefused, StartNS: time.Second}}
			r.NoteTargetDown()
		}, result.CapTargetDown, nil, "at +1.0 s (refused)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			if tc.mod != nil {
				tc.mod(r)
			}
			st := DefaultJudgement.Judge(r, 40)
			if st.Verdict != tc.verdict || !slices.Equal(st.Broke, tc.broke) || !strings.Contains(st.Why, tc.why) {
				t.Errorf("got %s %q %q, want %s %q %q", st.Verdict, st.Broke, st.Why, tc.verdict, tc.broke, tc.why)
			}
			if tc.why == "" && st.Why != "" {
				t.Errorf("why %q, want none", st.Why)
			}
		})
	}
}

// A merged step is judged on the merge, and its harness-bound
// judgement sees every part (worker or shard) alone: one late worker's
// send lag, one worker's CPU, the workers' CPU together on their one
// machine, a worker that left no result.
func TestJudgeParts(t *testing.T) {
	part := func(shard string, n int, lagUS int64, cpu float64) *result.Run {
		return &result.Run{SchemaVersion: result.SchemaVersion, Kind: result.KindRun, DurationNS: 2 * time.Second,
			Steps:      []result.Series{{Name: "list_rooms", Requests: int64(n), Successes: int64(n), Latency: latency(t, n, 900), SendLag: latency(t, n, lagUS)}},
			Thresholds: []result.ThresholdResult{passing("errors.rate", 0, 0.05)},
			ShardRuns:  []result.ShardRun{{Shard: shard, Harness: result.Harness{GOMAXPROCS: 2, CPUSeconds: cpu}}},
			TimeSeries: []result.Point{{Second: 0, Requests: int64(n) / 2}, {Second: 1, Requests: int64(n) - int64(n)/2}}}
	}
	merge := func(parts ...*result.Run) *result.Run {
		m, err := result.Merge(parts...)
		if err != nil {
			t.Fatal(err)
		}
		m.Thresholds = parts[0].Thresholds
		return m
	}
	for _, tc := range []struct {
		name     string
		workers  bool
		embedded bool
		parts    []*result.Run
		incomp   string
		verdict  string
		why      string
	}{
		{"every worker on time", true, false, []*result.Run{part("0/2", 100, 200, 0.5), part("1/2", 100, 300, 0.5)}, "", result.CapPass, ""},
		// 99 % of the merged samples come from workers on time when one
		// of many is late: the merge's p99 alone would not see it.
		{"one late worker", true, false, []*result.Run{part("0/2", 2000, 200, 0.5), part("1/2", 10, 250_000, 0.5)}, "", result.CapHarnessBound, "worker 1/2's send lag p99 250"},
		{"one late shard", false, false, []*result.Run{part("0/2", 2000, 200, 0.5), part("1/2", 10, 250_000, 0.5)}, "", result.CapHarnessBound, "shard 1/2's send lag p99 250"},
		{"both late: the merge says it", true, false, []*result.Run{part("0/2", 100, 250_000, 0.5), part("1/2", 100, 250_000, 0.5)}, "", result.CapHarnessBound, "send lag p99 250"},
		{"one worker's CPU, server embedded", true, true, []*result.Run{part("0/2", 100, 200, 3.9), part("1/2", 100, 200, 0.5)}, "", result.CapHarnessBound, "worker 0/2's CPU at 98% of 2 cores"},
		{"the workers' CPU together", true, true, []*result.Run{part("0/2", 100, 200, 2), part("1/2", 100, 200, 1.9)}, "", result.CapHarnessBound, "the 2 workers' CPU together at 98% of this machine's 2 cores"},
		{"shards' CPU is not summed: other machines", false, false, []*result.Run{part("0/2", 100, 200, 2), part("1/2", 100, 200, 1.9)}, "", result.CapPass, ""},
		{"a worker left no result", true, false, []*result.Run{part("0/2", 100, 200, 0.5)}, "worker 1/2 died (signal: killed): the result is incomplete; its stderr ended:\n  boom", result.CapHarnessBound, "worker 1/2 died (signal: killed): the result is incomplete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := merge(tc.parts...)
			if tc.incomp != "" {
				m.Incomplete = []string{tc.incomp}
			}
			j := DefaultJudgement
			j.Warmup, j.Workers, j.Embedded = 0, tc.workers, tc.embedded
			st := j.Judge(m, 100, tc.parts...)
			if st.Verdict != tc.verdict || !strings.Contains(st.Why, tc.why) || (tc.why == "") != (st.Why == "") {
				t.Errorf("got %s %q, want %s %q", st.Verdict, st.Why, tc.verdict, tc.why)
			}
			if strings.Contains(st.Why, "stderr") {
				t.Errorf("why %q quotes a stderr tail: one line a step", st.Why)
			}
			var sum int64
			for _, p := range tc.parts {
				sum += p.After(0).Requests
			}
			if st.Requests != sum {
				t.Errorf("requests %d, want the parts' sum %d", st.Requests, sum)
			}
		})
	}
}

// latency is n samples of us microseconds.
func latency(t *testing.T, n int, us int64) result.Latency {
	t.Helper()
	h := result.NewLatencyHistogram()
	for range n {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	l, err := result.NewLatency(h)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestJudgeFiguresAfterWarmup(t *testing.T) {
	r := &result.Run{DurationNS: 3 * time.Second, TimeSeries: []result.Point{{Second: 0, Requests: 10, Errors: 5}, {Second: 1, Requests: 40}, {Second: 2, Requests: 40, Errors: 4}}}
	j := DefaultJudgement
	j.Warmup = time.Second
	st := j.Judge(r, 40)
	if st.Requests != 80 || st.Throughput != 38 || st.ErrorRate != 0.05 {
		t.Errorf("requests %d, throughput %v, error rate %v: want 80, 38 answered a second, 0.05 (the warm-up second left out)", st.Requests, st.Throughput, st.ErrorRate)
	}
}

// A harness-bound step from the engine (failed starts in its result)
// stops the search, and the result says the limit is the harness's.
func TestEngineRunnerHarnessBoundStops(t *testing.T) {
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	calls := 0
	r := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement,
		Run: func(_ context.Context, cfg engine.Config) (*engine.Result, error) {
			calls++
			load := cfg.Plan.Load.Start
			run := &result.Run{DurationNS: 3 * time.Second, Sessions: &result.Sessions{Started: int64(load)},
				Thresholds: []result.ThresholdResult{passing("errors.rate", 0, 0.05)},
				TimeSeries: []result.Point{{Second: 0, Requests: int64(load)}}}
			if load >= 40 {
				run.Sessions.FailedStarts = 5
			}
			return &engine.Result{Run: run, Engine: &engine.Info{}}, nil
		}}
	c, err := Search(context.Background(), Settings{Start: 10, Max: 1000, Precision: 0.1, Budget: time.Hour}, r, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || c.Stop != result.StopHarness || c.Sustainable != 20 {
		t.Fatalf("%d steps, stop %q, sustainable %v: want 3, harness-bound, 20", calls, c.Stop, c.Sustainable)
	}
	hl := c.Headline()
	if hl.Status != result.StatusInconclusive || !strings.Contains(hl.Text, "harness's") || !strings.Contains(hl.Text, "--workers") {
		t.Errorf("headline %q (%s): want it to say the limit is the harness's and suggest --workers", hl.Text, hl.Status)
	}
}

func TestStepPlan(t *testing.T) {
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	p := StepPlan(plan, 5000, 3*time.Second)
	if p.Load.Start != 5000 || len(p.Load.Stages) != 0 || p.Load.Duration != 3*time.Second || p.Load.MaxClients != 500000 {
		t.Errorf("step plan load %+v: want a flat 5000/s for 3s, max clients scaled from 1000 at 10/s", p.Load)
	}
	if plan.Load.Start != 10 || plan.Load.Duration != 2*time.Second {
		t.Errorf("the scenario's plan changed: %+v", plan.Load)
	}
}
