package result

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// timedOutRun is the run of a server that trickles its replies: 48
// connects, 12 answered, 27 timed out, 9 cut by the end, and no
// threshold on errors.
func timedOutRun() *Run {
	r := NewRun()
	r.Totals = Totals{Requests: 48, Successes: 12, Failures: 27, Cut: 9, FailuresByReason: map[string]int64{ReasonTimeout: 27}}
	r.Steps = []Series{{Name: "connect", Requests: 48, Successes: 12, Failures: 27, Cut: 9, FailuresByReason: map[string]int64{ReasonTimeout: 27}}}
	return r
}

// TestWithDefaultGate: the default error gate is added to a scenario's
// thresholds unless one of them is an overall error threshold.
func TestWithDefaultGate(t *testing.T) {
	th := func(metric string) Threshold {
		return Threshold{Name: metric + " < 5", Metric: metric, Op: "<", Limit: 5}
	}
	tests := []struct {
		name string
		ts   []Threshold
		gate bool
	}{
		{"none", nil, true},
		{"latency only", []Threshold{th("connect.p99")}, true},
		{"a step's error rate", []Threshold{th("join.error_rate")}, true},
		{"a step's errors", []Threshold{th("join.errors")}, true},
		{"errors.rate", []Threshold{th("connect.p99"), th("errors.rate")}, false},
		{"errors.count", []Threshold{th("errors.count")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithDefaultGate(tt.ts)
			if n := len(got) - len(tt.ts); n != map[bool]int{true: 1, false: 0}[tt.gate] {
				t.Fatalf("%d thresholds added to %d, want the gate %v", n, len(tt.ts), tt.gate)
			}
			if tt.gate && got[len(got)-1] != DefaultErrorGate {
				t.Errorf("last %+v, want the default gate", got[len(got)-1])
			}
		})
	}
	if g := DefaultErrorGate; !g.Default || !strings.HasSuffix(g.Name, "(default)") {
		t.Errorf("default gate %+v is not marked as the default", g)
	}
}

// TestDefaultGateJudges: the default gate fails a run whose requests
// timed out (timeouts are errors; the cut ones are not counted on either
// side), passes one whose only unanswered requests were cut by the end,
// fails a run with no outcome at all (no data), and keeps its mark
// through the JSON and a re-evaluation (a merge).
func TestDefaultGateJudges(t *testing.T) {
	cut := NewRun()
	cut.Totals = Totals{Requests: 40, Successes: 31, Cut: 9, FailuresByReason: map[string]int64{}}
	allCut := NewRun()
	allCut.Totals = Totals{Requests: 9, Cut: 9, FailuresByReason: map[string]int64{}}
	tests := []struct {
		name     string
		run      *Run
		pass     bool
		noData   bool
		observed float64
		headline string
	}{
		{"timeouts", timedOutRun(), false, false, 27.0 / 39, "FAIL · 1 of 1 threshold breached"},
		{"only cut", cut, true, false, 0, "PASS · the 1 threshold passed"},
		{"every request cut", allCut, false, true, 0, "FAIL · 1 of 1 threshold breached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok := EvaluateThresholds(tt.run, WithDefaultGate(nil))
			g := tt.run.Thresholds[0]
			if ok != tt.pass || g.Pass != tt.pass || g.NoData != tt.noData || math.Abs(g.Observed-tt.observed) > 1e-9 || !g.Default {
				t.Errorf("gate %+v (ok %v), want pass %v no data %v observed %v", g, ok, tt.pass, tt.noData, tt.observed)
			}
			if hl := tt.run.Headline(); !strings.HasPrefix(hl.Text, tt.headline) {
				t.Errorf("headline %q, want %q", hl.Text, tt.headline)
			}
			data, err := json.Marshal(tt.run)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ReadRun(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			again, ok, _, err := Reevaluate([]*Run{back}, []string{"a"}, RunMetrics(back))
			if err != nil || ok != tt.pass || !again[0].Default || again[0].Name != DefaultErrorGate.Name {
				t.Errorf("re-evaluated %+v ok %v err %v: the default mark lost", again, ok, err)
			}
		})
	}
}

// TestFailedText: the totals name the timeouts among the failures, which
// no latency percentile shows.
func TestFailedText(t *testing.T) {
	if got, want := timedOutRun().Totals.FailedText(), "failed 27 (69.23%; 27 timeouts)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	r := NewRun()
	r.Totals = Totals{Requests: 10, Successes: 9, Failures: 1, FailuresByReason: map[string]int64{ReasonJoinDeny: 1}}
	if got, want := r.Totals.FailedText(), "failed 1 (10.00%)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
