package reports

import (
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

func TestSendLagWarning(t *testing.T) {
	step := func(name string, latP50, latP99, lagP50, lagP99 int64) result.Series {
		return result.Series{Name: name,
			Latency: result.Latency{Count: 10, P50US: latP50, P99US: latP99},
			SendLag: result.Latency{Count: 10, P50US: lagP50, P99US: lagP99, MaxUS: lagP99}}
	}
	tests := []struct {
		name  string
		steps []result.Series
		want  string
	}{
		{"no steps", nil, ""},
		{"small lag", []result.Series{step("list", 1000, 5000, 20, 90)}, ""},
		{"under the floor", []result.Series{step("list", 50, 80, 49, 49)}, ""},
		{"no send lag recorded", []result.Series{{Name: "old", Latency: result.Latency{Count: 3, P50US: 10, P99US: 10}}}, ""},
		{"p50 inflated", []result.Series{step("list", 200, 5000, 100, 300)},
			"the harness sent late (send lag p99 up to 300µs, in list): it is 10% or more of list p50, which overstate the server's latency by that much (the uncorrected figures do not include it)"},
		{"many, one line", []result.Series{step("a", 100, 100, 50, 50), step("b", 100, 100, 50, 50), step("c", 100, 1000, 50, 2000)},
			"the harness sent late (send lag p99 up to 2.00ms, in c): it is 10% or more of a p50, a p99, b p50, b p99 and 2 more, which overstate the server's latency by that much (the uncorrected figures do not include it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Run{Steps: tt.steps}
			if got := r.SendLagWarning(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
