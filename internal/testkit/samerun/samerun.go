// Package samerun compares two runs of one scenario made two ways (a
// socket per client and virtual flows, in one process or through
// workers): they must be the same run, as far as a run's timing lets two
// be the same.
package samerun

import (
	"maps"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// Compare fails tb unless runs a and b (made the ways aName and bName)
// have the same steps in the same order, each with requests within
// timing's slack (max(8, a quarter): a schedule starts sessions by the
// clock, so one run may start a few more), the same
// failures by reason, the same violations by rule and the same threshold
// verdicts.
func Compare(tb testing.TB, aName string, a *result.Run, bName string, b *result.Run) {
	tb.Helper()
	if len(a.Steps) != len(b.Steps) {
		tb.Fatalf("%d steps %s, %d %s", len(a.Steps), aName, len(b.Steps), bName)
	}
	for i, x := range a.Steps {
		y := b.Steps[i]
		if x.Name != y.Name {
			tb.Errorf("step %d: %s %s, %s %s", i, x.Name, aName, y.Name, bName)
			continue
		}
		if d := max(x.Requests-y.Requests, y.Requests-x.Requests); d > max(8, x.Requests/4) {
			tb.Errorf("%s: %d requests %s, %d %s", x.Name, x.Requests, aName, y.Requests, bName)
		}
		if !maps.Equal(x.FailuresByReason, y.FailuresByReason) {
			tb.Errorf("%s failures: %v %s, %v %s", x.Name, x.FailuresByReason, aName, y.FailuresByReason, bName)
		}
		tb.Logf("%s: %d requests (%d ok) %s, %d (%d ok) %s", x.Name, x.Requests, x.Successes, aName, y.Requests, y.Successes, bName)
	}
	if x, y := byRule(a.Violations), byRule(b.Violations); !maps.Equal(x, y) {
		tb.Errorf("violations: %v %s, %v %s", x, aName, y, bName)
	}
	if x, y := verdicts(a.Thresholds), verdicts(b.Thresholds); !maps.Equal(x, y) {
		tb.Errorf("threshold verdicts: %v %s, %v %s", x, aName, y, bName)
	}
}

func byRule(vs []result.Violation) map[string]int64 {
	m := map[string]int64{}
	for _, v := range vs {
		m[v.Rule] += v.Count
	}
	return m
}

func verdicts(ts []result.ThresholdResult) map[string]bool {
	m := map[string]bool{}
	for _, th := range ts {
		m[th.Name] = th.Pass
	}
	return m
}
