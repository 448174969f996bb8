package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

func TestNeverSucceeded(t *testing.T) {
	run := &result.Run{
		Steps: []result.Series{
			{Name: "connect", Requests: 40, Failures: 40, FailuresByReason: map[string]int64{result.ReasonTimeout: 40}},
			{Name: "create", Requests: 10, Failures: 10, FailuresByReason: map[string]int64{result.ReasonViolation: 10}},
			{Name: "join", Requests: 30, Failures: 30, FailuresByReason: map[string]int64{result.ReasonCreatorFailed: 30}},
			{Name: "hello", Requests: 5, Cut: 5},
			{Name: "list", Requests: 9, Successes: 1, Failures: 8, FailuresByReason: map[string]int64{result.ReasonTimeout: 8}},
			{Name: "think"},
		},
		Violations: []result.Violation{{Rule: "T-SIZE-FIXED", Count: 10}, {Rule: "T-HASH", Count: 2}},
	}
	got := NeverSucceeded(run)
	want := []struct{ step, cause string }{
		{"connect", "never answered it: a request it does not implement"},
		{"create", "broke a protocol rule (T-SIZE-FIXED ×10, T-HASH ×2), one the client cannot read past"},
		{"join", "its group's create step never succeeded"},
		{"hello", "still waiting when the run ended"},
	}
	if len(got) != len(want) {
		t.Fatalf("NeverSucceeded = %q, want %d lines (steps that ran and never succeeded)", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], "step "+w.step+" never succeeded") || !strings.Contains(got[i], w.cause) || strings.Contains(got[i], "\n") {
			t.Errorf("line %d = %q, want one line on %s with %q", i, got[i], w.step, w.cause)
		}
	}
	var b bytes.Buffer
	if err := WriteRunTable(&b, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flat(b.String()), got[0]) {
		t.Errorf("the table does not print %q:\n%s", got[0], b.String())
	}
}
