package result

import (
	"encoding/json"
	"math"
	"slices"
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

// TestWithDefaultGate: the default gates are added to a scenario's
// thresholds unless one of them replaces them: an overall error threshold
// replaces both, one on cut_silent the silent gate alone.
func TestWithDefaultGate(t *testing.T) {
	th := func(metric string) Threshold {
		return Threshold{Name: metric + " < 5", Metric: metric, Op: "<", Limit: 5}
	}
	tests := []struct {
		name  string
		ts    []Threshold
		gates []Threshold // added, in order
	}{
		{"none", nil, []Threshold{DefaultErrorGate, DefaultSilentGate}},
		{"latency only", []Threshold{th("connect.p99")}, []Threshold{DefaultErrorGate, DefaultSilentGate}},
		{"a step's error rate", []Threshold{th("join.error_rate")}, []Threshold{DefaultErrorGate, DefaultSilentGate}},
		{"a step's errors", []Threshold{th("join.errors")}, []Threshold{DefaultErrorGate, DefaultSilentGate}},
		{"errors.rate", []Threshold{th("connect.p99"), th("errors.rate")}, nil},
		{"errors.count", []Threshold{th("errors.count")}, nil},
		{"cut_silent.rate", []Threshold{th("cut_silent.rate")}, []Threshold{DefaultErrorGate}},
		{"cut_silent.count", []Threshold{th("cut_silent.count")}, []Threshold{DefaultErrorGate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithDefaultGate(tt.ts)
			if !slices.Equal(got[:len(tt.ts)], tt.ts) || !slices.Equal(got[len(tt.ts):], tt.gates) {
				t.Fatalf("%+v, want %+v then %+v", got, tt.ts, tt.gates)
			}
		})
	}
	for _, g := range []Threshold{DefaultErrorGate, DefaultSilentGate} {
		if !g.Default || !strings.HasSuffix(g.Name, "(default)") || !strings.HasPrefix(g.Name, g.Metric+" ") {
			t.Errorf("default gate %+v is not marked as the default, or not named by its metric", g)
		}
	}
}

// gateWant is what a default gate should say of a run.
type gateWant struct {
	pass, noData bool
	observed     float64
}

// TestDefaultGateJudges: the error gate fails a run whose requests timed
// out (timeouts are errors; the cut ones are not counted on either side)
// and passes one whose only unanswered requests were cut by the end; the
// silent gate fails a run whose cut requests had waited long without a
// reply (but for waits, long by nature); both fail a run with no outcome
// at all (no data); and each keeps its mark through the JSON and a
// re-evaluation (a merge).
func TestDefaultGateJudges(t *testing.T) {
	cutRun := func(silent int64, wait bool) *Run {
		r := NewRun()
		r.Totals = Totals{Requests: 40, Successes: 31, Cut: 9, FailuresByReason: map[string]int64{}}
		r.Messages = []Series{{Name: "LOBBY_LIST_ROOMS", Requests: 40, Successes: 31, Cut: 9, CutSilent: silent, Wait: wait}}
		return r
	}
	allCut := NewRun()
	allCut.Totals = Totals{Requests: 9, Cut: 9, FailuresByReason: map[string]int64{}}
	tests := []struct {
		name         string
		run          *Run
		errs, silent gateWant
		headline     string
	}{
		{"timeouts", timedOutRun(), gateWant{false, false, 27.0 / 39}, gateWant{true, false, 0}, "FAIL · 1 of 2 thresholds breached"},
		{"only cut", cutRun(0, false), gateWant{true, false, 0}, gateWant{true, false, 0}, "PASS · all 2 thresholds passed"},
		{"cut silent", cutRun(6, false), gateWant{true, false, 0}, gateWant{false, false, 6.0 / 37}, "FAIL · 1 of 2 thresholds breached"},
		{"a wait cut silent", cutRun(6, true), gateWant{true, false, 0}, gateWant{true, false, 0}, "PASS · all 2 thresholds passed"},
		{"every request cut", allCut, gateWant{false, true, 0}, gateWant{false, true, 0}, "FAIL · 2 of 2 thresholds breached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			EvaluateThresholds(tt.run, WithDefaultGate(nil))
			checkGates(t, tt.run.Thresholds, tt.errs, tt.silent)
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
			again, _, _, err := Reevaluate([]*Run{back}, []string{"a"}, RunMetrics(back))
			if err != nil {
				t.Fatal(err)
			}
			checkGates(t, again, tt.errs, tt.silent)
		})
	}
}

// TestDefaultGateText: both gates show their limit and value as
// percentages in every format (the silent one once read "< 0.01").
func TestDefaultGateText(t *testing.T) {
	for _, g := range []Threshold{DefaultErrorGate, DefaultSilentGate} {
		tr := ThresholdResult{Name: g.Name, Metric: g.Metric, Op: g.Op, Limit: g.Limit, Observed: 0.25}
		if got, want := tr.LimitText()+" "+tr.ObservedText(), "< 1.00% 25.00%"; got != want {
			t.Errorf("%s: %q, want %q", g.Name, got, want)
		}
	}
}

// checkGates checks that got are the two default gates, each as want.
func checkGates(t *testing.T, got []ThresholdResult, errs, silent gateWant) {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("%d verdicts %+v, want the two default gates", len(got), got)
	}
	for i, g := range []Threshold{DefaultErrorGate, DefaultSilentGate} {
		w := []gateWant{errs, silent}[i]
		v := got[i]
		if v.Name != g.Name || !v.Default || v.Pass != w.pass || v.NoData != w.noData || math.Abs(v.Observed-w.observed) > 1e-9 {
			t.Errorf("verdict %+v, want %s with %+v", v, g.Name, w)
		}
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
