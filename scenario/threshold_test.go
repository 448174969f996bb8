package scenario

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

var testMetrics = map[string]Unit{
	"join.p99": Latency, "join.count": Count, "join.error_rate": Ratio,
	"errors.rate": Ratio, "violations": Count, "rate_probe.limit": Rate,
}

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in      string
		metric  string
		op      Op
		value   float64
		wantErr string
	}{
		{"join.p99 < 20ms", "join.p99", "<", 0.020, ""},
		{"join.p99<=1.5s", "join.p99", "<=", 1.5, ""}, // no spaces, two-char op
		{"join.count > 100", "join.count", ">", 100, ""},
		{"join.count >= 1e3", "join.count", ">=", 1000, ""},
		{"errors.rate < 1%", "errors.rate", "<", 0.01, ""},
		{"errors.rate < 0.01", "errors.rate", "<", 0.01, ""}, // plain fraction
		{"violations == 0", "violations", "==", 0, ""},
		{"violations != 3", "violations", "!=", 3, ""},
		{"rate_probe.limit > 50/s", "rate_probe.limit", ">", 50, ""},
		{"join.p99 < 0", "join.p99", "<", 0, ""},
		{"join.p99 < 20", "", "", 0, "give a unit, e.g. 20ms"},
		{"join.p50 < 20ms", "", "", 0, `unknown metric "join.p50" (did you mean "join.p99"?)`},
		{"violations = 0", "", "", 0, "has no comparison"},
		{"violations <", "", "", 0, "has no value"},
		{"errors.rate < 2", "", "", 0, "want a percentage"},
		{"join count < 1", "", "", 0, "is not a metric name"},
		{"violations == zero", "", "", 0, "want a plain number"},
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.in, testMetrics)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseThreshold(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || th.Metric != tt.metric || th.Op != tt.op || math.Abs(th.Value-tt.value) > 1e-12 {
			t.Errorf("ParseThreshold(%q) = %+v, %v", tt.in, th, err)
		}
		if th.String() != tt.in {
			t.Errorf("String() = %q, want %q", th.String(), tt.in)
		}
	}
}

func TestKnownMetrics(t *testing.T) {
	p, err := Parse("s.yaml", []byte(minimal+"      - {join: {room: random-waiting, label: rejoin}}\n      - {rate_probe: {from: 1/s, to: 2/s, over: 1s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := KnownMetrics(p)
	for _, want := range []string{"join.p999", "join.send_lag.p99", "create_room.error_rate", "rejoin.mean", "rate_probe.limit", "errors.rate", "dropped_starts", "violations"} {
		if _, ok := m[want]; !ok {
			t.Errorf("%s not known", want)
		}
	}
	for _, absent := range []string{"list_rooms.p99", "join.limit", "p99"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s known, should not be", absent)
		}
	}
}

// TestConditions: a scenario's thresholds are evaluated as package result
// judges them, named as written, metric whole, values in canonical units.
func TestConditions(t *testing.T) {
	p, err := Parse("s.yaml", []byte(minimal+"thresholds: [join.p99 < 20ms, errors.rate < 1%]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []result.Threshold{
		{Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.02},
		{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01},
	}
	if got := p.Conditions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Conditions = %+v, want %+v", got, want)
	}
	run := result.NewRun()
	run.Totals = result.Totals{Requests: 200, Failures: 10}
	run.Steps = []result.Series{{Name: "join", Requests: 100, Successes: 95, Latency: result.Latency{Count: 95, P99US: 19000}}}
	res, ok := result.Evaluate(p.Conditions(), result.RunMetrics(run))
	if ok || len(res) != 2 || !res[0].Pass || res[1].Pass {
		t.Fatalf("Evaluate = %+v, %v", res, ok)
	}
	if r := res[0]; r.Step != "" || r.Metric != "join.p99" || r.Op != "<" || r.Limit != 0.02 || r.Observed != 0.019 || r.Name != "join.p99 < 20ms" {
		t.Errorf("verdict = %+v", r)
	}
}
