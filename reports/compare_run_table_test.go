package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// TestCompareTableFits: `report compare` of two runs folds to TermWidth
// columns as the run summary does, whatever it holds: an interrupted side,
// long step names, a step gone and one new, increases not gated, broken
// gates; each step, and the run-wide row under a name that says what it
// is, are there whole.
func TestCompareTableFits(t *testing.T) {
	long := strings.Repeat("join_the_room_", 3) + "now"
	base, worse := sampleRun(t), sampleRun(t)
	base.Steps[1].Name, worse.Steps[1].Name = long, long
	worse.Steps[1].Latency = latencyOf(t, ramp(1000, 1300, 45)...)
	worse.Steps[1].Failures, worse.Steps[1].Requests = 9, 54
	worse.Steps[0].Name = "list_rooms_paged"
	worse.Steps[0].Latency = latencyOf(t, ramp(900, 1100, 60)...)
	worse.Violations = append(worse.Violations, result.Violation{Rule: strings.Repeat("U-RULE-", 6), Count: 1})
	worse.ShardRuns = []result.ShardRun{{Shard: "0/1", Interrupted: true}}
	gates := append(result.DefaultGates(), result.Gate{Metric: result.GateP50IncreasePct, Max: 1, MinDeltaUS: 1_000_000})
	c, err := result.Compare(base, worse, gates)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Incomplete) == 0 || len(c.Spared) == 0 || len(c.Breaches) == 0 {
		t.Fatalf("the fixture lacks a part of the table: incomplete %v, spared %v, breaches %v", c.Incomplete, c.Spared, c.Breaches)
	}
	var b bytes.Buffer
	if err := WriteCompareTable(&b, c); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "compare_table_wide.txt"), b.Bytes())
	out := b.String()
	assertFits(t, out)
	for _, want := range []string{long, "list_rooms (gone)", "list_rooms_paged (new)", runRowName} {
		if !strings.Contains(out, want) {
			t.Errorf("%q is not in the table:\n%s", want, out)
		}
	}
	for _, f := range []string{"compare_table.txt", "compare_table_same.txt", "compare_conform_table.txt", "compare_conform_table_interrupted.txt"} {
		t.Run(f, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", f))
			if err != nil {
				t.Fatal(err)
			}
			assertFits(t, string(b))
		})
	}
}
