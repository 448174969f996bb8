package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// passingRun is sampleRun with every threshold passed and no violation:
// its headline is PASS.
func passingRun(t testing.TB) *result.Run {
	r := sampleRun(t)
	for i := range r.Thresholds {
		r.Thresholds[i].Pass = true
	}
	r.Violations, r.Totals.Violations = nil, 0
	return r
}

// incompleteRun is passingRun as `run --workers 2` merges it when worker
// 1/2 died: one shard, the dead worker's reason, sessions with dropped
// starts (a warning).
func incompleteRun(t testing.TB) *result.Run {
	r := passingRun(t)
	r.Incomplete = []string{"worker 1/2 died (signal: killed): the result is incomplete; its stderr ended:\n  worker exploding | on purpose"}
	r.Sessions = &result.Sessions{Started: 50, Completed: 45, Failed: 3, Cut: 2, DroppedLate: 4, MaxActive: 12}
	r.ShardRuns = []result.ShardRun{{Shard: "0/2", Sessions: *r.Sessions}}
	return r
}

// TestRunMarkdownGolden: the Markdown of a passing, a failing, an
// interrupted and an incomplete run, each led by its headline on the
// first line.
func TestRunMarkdownGolden(t *testing.T) {
	interrupted := passingRun(t)
	interrupted.ShardRuns = []result.ShardRun{{Shard: "0/1", Interrupted: true}}
	never := sampleRun(t)
	never.Steps[1].Successes, never.Steps[1].Failures = 0, 50
	never.Steps[1].FailuresByReason = map[string]int64{result.ReasonTimeout: 50}
	never.Steps[1].Latency = result.Latency{}
	tests := []struct {
		file   string
		run    *result.Run
		status string
	}{
		{"run_pass.md", passingRun(t), result.StatusPass},
		{"run_fail.md", sampleRun(t), result.StatusFail},
		{"run_interrupted.md", interrupted, result.StatusInterrupted},
		{"run_incomplete.md", incompleteRun(t), result.StatusIncomplete},
		{"run_never.md", never, result.StatusFail},
		{"run_empty.md", result.NewRun(), result.StatusIncomplete}, // NO LOAD
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteRunMarkdown(&b, tt.run); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
			hl := tt.run.Headline()
			if hl.Status != tt.status {
				t.Fatalf("headline %+v, want status %q", hl, tt.status)
			}
			first, _, _ := strings.Cut(b.String(), "\n")
			if hl.Text == "" {
				if !strings.HasPrefix(first, "### lobbybench run") {
					t.Errorf("no headline: first line %q, want the title", first)
				}
				return
			}
			if want := "**" + mdInline(hl.Text) + "**"; first != want {
				t.Errorf("first line %q, want the headline %q", first, want)
			}
		})
	}
}

// TestRunMarkdownFacts: the Markdown says what the terminal says, in its
// units: threshold figures, step latencies (and "-" for a step with no
// sample), violations by rule, failures by reason, the incomplete reason
// and the warnings.
func TestRunMarkdownFacts(t *testing.T) {
	r := incompleteRun(t)
	r.Violations = sampleRun(t).Violations
	var md, term bytes.Buffer
	if err := WriteRunMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteRunTable(&term, r); err != nil {
		t.Fatal(err)
	}
	m := md.String()
	for _, want := range []string{
		"| join.p99 &lt; 50ms | &lt; 50.00ms | 45.02ms | ✅ pass |",
		"| errors.rate &lt; 1% | &lt; 1.00% | 3.33% | ✅ pass |",
		"| join | 50 | 45 | 5 | 0 | 10.00% | 23.01ms | 41.02ms | 45.02ms | 45.02ms | 900µs |",
		"| JoinReply | 45 | 45 | 0 | 0 | 0.00% | 20.61ms | 36.83ms | 40.41ms | 40.41ms | - |",
		"| U-CRC | 4 | deadbeef00 |",
		"| timeout | 3 |",
		"- INCOMPLETE: worker 1/2 died (signal: killed): the result is incomplete; its stderr ended:   worker exploding | on purpose",
		"- ⚠️ 4 session starts dropped (0: max clients live, 4: generator behind)",
		"Sessions: 50 started, 45 completed, 3 failed (0 failed starts), 2 cut at the end, 4 dropped (0 no free client, 4 late), peak 12 live.",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, m)
		}
	}
	// The same figures as the terminal, from the same helpers.
	for _, fig := range []string{"45.02ms", "23.01ms", "3.33%", "900µs", "deadbeef00", "1.20ms -> 1.30ms"} {
		if !strings.Contains(term.String(), fig) {
			t.Errorf("terminal lacks %q: the test's figures are stale", fig)
		}
	}
	if !strings.Contains(m, "1.20ms -&gt; 1.30ms") {
		t.Errorf("Markdown lacks the rate limit's others p99:\n%s", m)
	}
}

// TestMdCell: a cell cannot end its column or its row, nor carry HTML.
func TestMdCell(t *testing.T) {
	for in, want := range map[string]string{
		"a|b":       `a\|b`,
		`a\|b`:      `a\\\|b`,
		"two\nrows": "two rows",
		"<b>&":      "&lt;b&gt;&amp;",
		"":          "(none)",
	} {
		if got := mdCell(in); got != want {
			t.Errorf("mdCell(%q) = %q, want %q", in, got, want)
		}
	}
}
