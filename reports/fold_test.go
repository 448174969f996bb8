package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// flat collapses every run of white space to one space: folded text as
// it was before Wrap broke it into lines.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// paragraphs splits terminal output at its blank lines, each flattened.
func paragraphs(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		out = append(out, flat(p))
	}
	return out
}

func TestWriteColumns(t *testing.T) {
	long := strings.Repeat("n", 70)
	tests := []struct {
		name   string
		align  string
		header []string
		rows   [][]string
		want   string
	}{
		{"aligned", "lr", []string{"NAME", "COUNT"}, [][]string{{"a", "1"}, {"bbbbbb", "1234567"}},
			"  NAME      COUNT\n  a             1\n  bbbbbb  1234567\n"},
		{"long name on its own line", "lrr", []string{"STEP", "p50", "p99"}, [][]string{{"a", "1µs", "2µs"}, {long, "3µs", "4µs"}},
			"  STEP  p50  p99\n  a     1µs  2µs\n  " + long + "\n        3µs  4µs\n"},
		{"records when nothing fits", "lrl", []string{"SOURCE", "SENT", "NOTE"}, [][]string{{"127.0.0.2", "5", strings.Repeat("w ", 40)}},
			"  127.0.0.2: sent 5, note w w w w w w w w w w w w w w w w w w w w w w w w w w w\n    w w w w w w w w w w w w w\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeColumns(&b, 2, tt.align, tt.header, tt.rows)
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
			assertFits(t, b.String())
		})
	}
}

// assertFits fails for each line of out wider than TermWidth.
func assertFits(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if w := displayWidth(l); w > TermWidth {
			t.Errorf("line %d is %d columns wide, over %d:\n%s", i+1, w, TermWidth, l)
		}
	}
}

// TestRunTableFits: every line of the terminal report is at most
// TermWidth display columns, for the fixture runs (a merged sharded run,
// violations and findings, a target down, a drill, a step that never
// succeeded) and for one built to be wide: long names, large counts,
// every figure at its widest.
func TestRunTableFits(t *testing.T) {
	merged, err := result.Merge(sampleRun(t), sampleRun(t), downRun(t))
	if err != nil {
		t.Fatal(err)
	}
	if merged.Shards != 3 {
		t.Fatalf("merged %d shards, want 3", merged.Shards)
	}
	wide := sampleRun(t)
	wide.Scenario = "scenarios/" + strings.Repeat("a-very-long-scenario-name-", 4) + ".yaml"
	wide.Target = "[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:65535"
	for _, list := range [][]result.Series{wide.Steps, wide.Messages} {
		for i := range list {
			s := &list[i]
			s.Name = strings.Repeat("join_the_room_", 2+i) + "界"
			s.Requests, s.Successes, s.Failures, s.Cut = 9_876_543_210, 1_234_567_890, 8_641_975_320, 123_456
			s.Retries, s.Dropped = 99_999_999, 88_888_888
			s.Latency = latencyOf(t, 999_990, 999_995, 59_000_000)
			s.Uncorrected = latencyOf(t, 999_999)
			s.SendLag = latencyOf(t, 999_999, 59_000_000)
		}
	}
	wide.Messages = append(wide.Messages, result.Series{Name: "CLIENT_JOIN_REQUEST", Requests: 12_345_678, Successes: 12_345_678, Latency: latencyOf(t, 999_990)})
	wide.Totals.Requests, wide.Totals.Failures, wide.Totals.Retries = 9_876_543_210, 8_641_975_320, 99_999_999
	wide.RateLimits[0].Source = "[2001:db8::1]:54321"
	wide.RateLimits[0].OtherSourcesP99BeforeUS, wide.RateLimits[0].OtherSourcesP99AfterUS = 999_990, 999_999
	wide.Violations[0].Rule = strings.Repeat("U-RULE-", 8)
	wide.Violations[0].Samples[0].Packet = strings.Repeat("ab", 64)
	wide.Malformed[0].Kind = strings.Repeat("truncated_header_", 3)
	wide.Thresholds[0].Name = strings.Repeat("join_the_room_", 3) + ".p99 < 50ms"
	wide.Outages = downRun(t).Outages
	wide.Outages[0].Detail = strings.Repeat("x", 120)
	wide.Totals.FailuresByReason["a_reason_with_a_name_far_longer_than_any_reason_we_have_ever_had"] = 1_000_000_000
	wide.Totals.FailuresWhileDown = map[string]int64{result.ReasonTimeout: 3}
	wide.NoteTargetDown()

	for _, tt := range []struct {
		name string
		run  *result.Run
	}{
		{"sample", sampleRun(t)},
		{"merged shards", merged},
		{"target down", downRun(t)},
		{"drill", drillRun(t, true)},
		{"never succeeded", neverSucceededRun(t)},
		{"empty", result.NewRun()},
		{"wide", wide},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteRunTable(&b, tt.run); err != nil {
				t.Fatal(err)
			}
			assertFits(t, b.String())
			// Nothing shown is lost to the folding: every step and
			// message name is in the text as a whole.
			for _, s := range append(append([]result.Series(nil), tt.run.Steps...), tt.run.Messages...) {
				if !strings.Contains(b.String(), s.Name) {
					t.Errorf("%s is not in the report:\n%s", s.Name, b.String())
				}
			}
			if testing.Verbose() {
				t.Logf("\n%s", b.String())
			}
		})
	}
}
