package result

import "testing"

// TestNotStarted: a document that measured nothing leads with why, before
// anything its other fields would say (a passing threshold, a merge's
// shards), is partial (no CI reads it as a pass), breaks a comparison's
// GateComplete, and a merge that holds one says so first (INCOMPLETE).
func TestNotStarted(t *testing.T) {
	for _, tt := range []struct {
		why  NotStarted
		want string
	}{
		{NotStarted{StatusUnreachable, "target 127.0.0.1:9 unreachable: connection refused"}, "UNREACHABLE · target 127.0.0.1:9 unreachable: connection refused: nothing was measured"},
		{NotStarted{StatusInterrupted, "stopped while waiting for the start instant"}, "INTERRUPTED · stopped while waiting for the start instant: nothing was measured"},
	} {
		t.Run(tt.why.Status, func(t *testing.T) {
			run := NewRun()
			run.NotStarted = &tt.why
			run.Thresholds = []ThresholdResult{{Name: "violations == 0", Pass: true}} // would read PASS
			conform, capacity := NewConform(), &Capacity{NotStarted: &tt.why, Stop: StopPrecision, Sustainable: 100}
			conform.NotStarted = &tt.why
			for name, doc := range map[string]Doc{"run": run, "conform": conform, "capacity": capacity} {
				if hl := doc.Headline(); hl.Text != tt.want || hl.Status != tt.why.Status || !hl.Partial() {
					t.Errorf("%s: %+v, want %q, partial", name, hl, tt.want)
				}
			}
			base := NewRun()
			base.Thresholds = run.Thresholds
			base.Totals.Requests, base.Totals.Successes = 10, 10
			c, err := Compare(base, run, nil)
			if err != nil {
				t.Fatal(err)
			}
			broken := false
			for _, b := range c.Breaches {
				broken = broken || b.Gate.Metric == GateComplete
			}
			if !broken {
				t.Errorf("comparison against it breaks no %s: %+v", GateComplete, c.Breaches)
			}
			merged, err := Merge(base, run)
			if err != nil {
				t.Fatal(err)
			}
			if hl := merged.Headline(); hl.Status != StatusIncomplete || len(merged.Incomplete) != 1 || merged.Incomplete[0] != "run 2 of the merge measured nothing ("+tt.want+")" {
				t.Errorf("merge: %+v, incomplete %q", hl, merged.Incomplete)
			}
		})
	}
}
