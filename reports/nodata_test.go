package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestThresholdNoData: a threshold on a metric the run never produced reads
// "no data" in every format (never "0µs" or "0.00%", which look measured),
// and still fails.
func TestThresholdNoData(t *testing.T) {
	for _, tt := range []struct {
		th      ThresholdResult
		notWant string // what the old rendering showed for the missing value
	}{
		{ThresholdResult{Name: "hello.p99 < 20ms", Metric: "p99", Step: "hello", Op: "<", Limit: 0.02, NoData: true}, "0µs"},
		{ThresholdResult{Name: "hello.error_rate < 1%", Metric: "error_rate", Step: "hello", Op: "<", Limit: 0.01, NoData: true}, "0.00%"},
	} {
		t.Run(tt.th.Name, func(t *testing.T) {
			if got := tt.th.ObservedText(); got != "no data" {
				t.Errorf("ObservedText = %q, want no data", got)
			}
			r := sampleRun(t)
			r.Thresholds = []ThresholdResult{tt.th}
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
