package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestThresholdNoData: a threshold on a metric the run never produced reads
// "no data" in every format (never "0µs" or "0.00%", which look measured),
// and still fails.
func TestThresholdNoData(t *testing.T) {
	for _, tt := range []struct {
		th      result.ThresholdResult
		notWant string // what the old rendering showed for the missing value
	}{
		{result.ThresholdResult{Name: "hello.p99 < 20ms", Metric: "p99", Step: "hello", Op: "<", Limit: 0.02, NoData: true}, "0µs"},
		{result.ThresholdResult{Name: "hello.error_rate < 1%", Metric: "error_rate", Step: "hello", Op: "<", Limit: 0.01, NoData: true}, "0.00%"},
	} {
		t.Run(tt.th.Name, func(t *testing.T) {
			if got := tt.th.ObservedText(); got != "no data" {
				t.Errorf("ObservedText = %q, want no data", got)
			}
			r := sampleRun(t)
			r.Thresholds = []result.ThresholdResult{tt.th}
			outs := map[string]func(*bytes.Buffer) error{
				"table": func(b *bytes.Buffer) error { return WriteRunTable(b, r) },
				"junit": func(b *bytes.Buffer) error { return WriteRunJUnit(b, r) },
				"html":  func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, r) },
				"json":  func(b *bytes.Buffer) error { return WriteJSON(b, r) },
			}
			for name, write := range outs {
				var b bytes.Buffer
				if err := write(&b); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out := b.String()
				want := "no data"
				if name == "json" {
					want = `"no_data": true`
				}
				if !strings.Contains(out, want) {
					t.Errorf("%s lacks %q", name, want)
				}
				if name == "table" || name == "junit" {
					for _, line := range strings.Split(out, "\n") {
						if strings.Contains(line, tt.th.Name) && strings.Contains(line, tt.notWant+" ") {
							t.Errorf("%s shows the missing value as %s: %s", name, tt.notWant, line)
						}
					}
				}
			}
			var b bytes.Buffer
			_ = WriteRunTable(&b, r)
			failed := false
			for _, line := range strings.Split(b.String(), "\n") {
				failed = failed || strings.Contains(line, tt.th.Name) && strings.Contains(line, "FAIL") && strings.Contains(line, "no data")
			}
			if !failed {
				t.Errorf("table does not show the threshold failed with no data:\n%s", b.String())
			}
		})
	}
}

// TestLatencyNoData: a step with no successful sample shows "-" for its
// latency figures in every format that prints them, never a measured-looking
// "0µs"; the JSON keeps numbers and tells no-data by latency.count 0.
func TestLatencyNoData(t *testing.T) {
	run := neverSucceededRun(t)
	tests := []struct {
		format string
		write  func(*bytes.Buffer) error
		row    func(out string) string // the join step's row
		want   []string
		absent string
	}{
		{"table", func(b *bytes.Buffer) error { return WriteRunTable(b, run) }, func(out string) string {
			// The join row of the latency table, the one under "p50".
			_, lat, _ := strings.Cut(out, " p50 ")
			return flat(lineWith("  join ")(lat))
		}, []string{"join - - - - -"}, " 0µs"},
		{"html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, run) }, lineWith("</span>join</td>"),
			[]string{`<td class="n">-</td><td class="n">-</td><td class="n">-</td><td class="n">-</td><td class="n">-</td><td class="n">-</td>`}, ">0µs<"},
		{"json", func(b *bytes.Buffer) error { return WriteJSON(b, run) }, func(out string) string {
			_, after, _ := strings.Cut(out, `"name": "join"`)
			before, _, _ := strings.Cut(after, `"uncorrected"`)
			return before
		}, []string{`"count": 0`, `"p99_us": 0`}, `"hist"`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			row := tt.row(b.String())
			if row == "" {
				t.Fatalf("no join row in:\n%s", b.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(row, w) {
					t.Errorf("join row lacks %q:\n%s", w, row)
				}
			}
			if strings.Contains(row, tt.absent) {
				t.Errorf("join row has %q:\n%s", tt.absent, row)
			}
		})
	}
}

// lineWith returns a function that finds the first line holding s.
func lineWith(s string) func(string) string {
	return func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, s) {
				return l
			}
		}
		return ""
	}
}
