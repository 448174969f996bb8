package reports

import (
	"fmt"
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "warning", "0 warnings"},
		{1, "warning", "1 warning"},
		{2, "warning", "2 warnings"},
		{1, "source address", "1 source address"},
		{3, "source address", "3 source addresses"},
		{1, "wire log entry", "1 wire log entry"},
		{5, "wire log entry", "5 wire log entries"},
		{2, "day", "2 days"},
		{2, "match", "2 matches"},
	} {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
	if got := Count(uint64(1), "shard"); got != "1 shard" {
		t.Errorf("Count(uint64 1) = %q", got)
	}
	if Agree(1, "its", "their") != "its" || Agree(int64(2), "its", "their") != "their" {
		t.Error("Agree picks the wrong form")
	}
}

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
