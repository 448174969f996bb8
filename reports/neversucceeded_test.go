package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// TestStepsNeverSucceeded: which steps fail a run for want of a single
// success, and how the headline says it.
func TestStepsNeverSucceeded(t *testing.T) {
	tests := []struct {
		name     string
		step     result.Series
		never    bool
		headline string // "" when the step does not change the verdict
	}{
		{"succeeded once", result.Series{Name: "join", Requests: 5, Successes: 1, Failures: 4, FailuresByReason: map[string]int64{result.ReasonTimeout: 4}}, false, ""},
		{"never reached", result.Series{Name: "leave"}, false, ""},
		{"every request failed", result.Series{Name: "join", Requests: 4, Failures: 4, FailuresByReason: map[string]int64{result.ReasonTimeout: 4}}, true,
			"FAIL · step join (4 timeout) was tried and never succeeded"},
		{"every request cut", result.Series{Name: "join", Requests: 3, Cut: 3}, true,
			"FAIL · step join (3 cut by the end of the run) was tried and never succeeded"},
		{"failed and cut", result.Series{Name: "join", Requests: 3, Failures: 1, Cut: 2, FailuresByReason: map[string]int64{result.ReasonJoinDeny: 1}}, true,
			"FAIL · step join (1 join_deny, 2 cut by the end of the run) was tried and never succeeded"},
		{"a wait cut by the end", result.Series{Name: "think", Requests: 3, Cut: 3, Wait: true}, false, ""},
		{"a wait that failed", result.Series{Name: "barrier", Requests: 2, Failures: 2, Wait: true, FailuresByReason: map[string]int64{result.ReasonTimeout: 2}}, true,
			"FAIL · step barrier (2 timeout) was tried and never succeeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := result.NewRun()
			r.Steps = []result.Series{{Name: "list_rooms", Requests: 2, Successes: 2}, tt.step}
			r.Totals.Requests = 2 + tt.step.Requests // the sum over the steps
			got := r.StepsNeverSucceeded()
			if (len(got) == 1) != tt.never || len(got) > 1 {
				t.Fatalf("StepsNeverSucceeded = %+v, want never=%v", got, tt.never)
			}
			if hl := r.Headline(); hl.Text != tt.headline {
				t.Errorf("headline %q, want %q", hl.Text, tt.headline)
			}
		})
	}
}

// TestNeverSucceededFirst: a run whose thresholds all passed but with a
// step that never succeeded leads every format with FAIL naming the step.
func TestNeverSucceededFirst(t *testing.T) {
	run := neverSucceededRun(t)
	var tb bytes.Buffer
	if err := WriteRunTable(&tb, run); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "run_table_never.txt"), tb.Bytes())
	if first, _, _ := strings.Cut(tb.String(), "\n"); !strings.HasPrefix(first, "FAIL · step join") {
		t.Errorf("terminal: first line %q", first)
	}
	var jb bytes.Buffer
	if err := WriteRunJUnit(&jb, run); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "run_junit_never.xml"), jb.Bytes())
	var hb bytes.Buffer
	if err := WriteHTML(&hb, HTMLOptions{}, run); err != nil {
		t.Fatal(err)
	}
	if h := hb.String(); !strings.Contains(h, `<p class="status fail">FAIL · step join`) {
		t.Error("HTML banner does not say FAIL naming the step")
	}
}

// neverSucceededRun is sampleRun with every join failed and every
// threshold passed.
func neverSucceededRun(t testing.TB) *result.Run {
	run := sampleRun(t)
	j := &run.Steps[1]
	j.Successes, j.Failures, j.Cut = 0, 47, 3
	j.FailuresByReason = map[string]int64{result.ReasonTimeout: 47}
	j.Latency, j.Uncorrected = result.Latency{}, result.Latency{}
	run.Violations, run.Totals.Violations = nil, 0
	for i := range run.Thresholds {
		run.Thresholds[i].Pass = true
	}
	return run
}
