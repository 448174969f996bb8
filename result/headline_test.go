package result

import (
	"fmt"
	"strings"
	"testing"
)

// TestHeadlineCounts: headlines say "1 threshold", "1 warning", "1 case",
// never "1 thresholds" or "all 1 thresholds".
func TestHeadlineCounts(t *testing.T) {
	run := func(pass []bool, violations int64) *Run {
		r := NewRun()
		for i, p := range pass {
			r.Thresholds = append(r.Thresholds, ThresholdResult{Name: fmt.Sprintf("t%d", i), Pass: p})
		}
		r.Totals.Violations = violations
		return r
	}
	conform := func(strict bool, verdicts ...string) *Conform {
		c := NewConform()
		c.Strict = strict
		for i, v := range verdicts {
			c.Cases = append(c.Cases, Case{ID: fmt.Sprintf("x/%d", i), Verdict: v})
		}
		return c
	}
	for _, tt := range []struct {
		name string
		doc  Doc
		want string
	}{
		{"one threshold passed", run([]bool{true}, 0), "the 1 threshold passed"},
		{"two thresholds passed", run([]bool{true, true}, 0), "all 2 thresholds passed"},
		{"one of one breached", run([]bool{false}, 0), "1 of 1 threshold breached"},
		{"one violation", run(nil, 1), "1 protocol violation"},
		{"one warning", conform(false, VerdictPass, VerdictWarn), "1 warning"},
		{"one warning strict", conform(true, VerdictWarn), "strict: 1 warning counts as a failure"},
		{"one case failed", conform(false, VerdictFail), "1 of 1 case failed"},
		{"one case skipped", conform(false, VerdictPass, VerdictSkip), "1 of 2 cases skipped"},
		{"no case passed", conform(false, VerdictSkip), "not one of 1 case passed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.doc.Headline().Text
			if !strings.Contains(got, tt.want) {
				t.Errorf("headline %q does not say %q", got, tt.want)
			}
			for _, bad := range []string{" 1 thresholds", " 1 warnings", " 1 cases", " 1 protocol violations", "(s)"} {
				if strings.Contains(got, bad) {
					t.Errorf("headline %q says %q", got, bad)
				}
			}
		})
	}
}

// TestConformNoPass: a run in which not one case passed never passes,
// whatever the skip budget says.
func TestConformNoPass(t *testing.T) {
	budget := 10
	tests := []struct {
		name     string
		verdicts []string
		want     Headline
	}{
		{"all skipped", []string{VerdictSkip}, Headline{StatusFail, "NO PASS · not one of 1 case passed (1 skipped)"}},
		{"skips and info", []string{VerdictSkip, VerdictInfo, VerdictSkip}, Headline{StatusFail, "NO PASS · not one of 3 cases passed (1 informational, 2 skipped)"}},
		{"warned", []string{VerdictWarn}, Headline{StatusFail, "NO PASS · not one of 1 case passed (1 warned)"}},
		{"one pass", []string{VerdictPass, VerdictSkip}, Headline{StatusPass, "PASS · no case failed (1 of 2 passed); 1 of 2 cases skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConform()
			c.MaxSkips = &budget
			for i, v := range tt.verdicts {
				c.Cases = append(c.Cases, Case{ID: "x/1/" + string(rune('1'+i)), Verdict: v})
			}
			if got := c.Headline(); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
