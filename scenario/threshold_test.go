package scenario

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/reports"
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

func TestEvaluate(t *testing.T) {
	parse := func(s string) Threshold {
		th, err := ParseThreshold(s, testMetrics)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	ts := []Threshold{
		parse("join.p99 < 20ms"),  // 0.019: pass
		parse("errors.rate < 1%"), // 0.01: fail (not strictly below)
		parse("violations == 0"),  // missing: fail, never a silent pass
		parse("join.count >= 10"), // 10: pass
		parse("join.count != 10"), // 10: fail
	}
	metrics := map[string]float64{"join.p99": 0.019, "errors.rate": 0.01, "join.count": 10}
	res, ok := Evaluate(ts, func(m string) (float64, bool) { v, found := metrics[m]; return v, found })
	if ok {
		t.Error("Evaluate ok = true with failures")
	}
	want := []struct{ pass, missing bool }{{true, false}, {false, false}, {false, true}, {true, false}, {false, false}}
	for i, w := range want {
		if res[i].Pass != w.pass || res[i].Missing != w.missing {
			t.Errorf("%s: pass %v missing %v, want %v %v", res[i].Threshold, res[i].Pass, res[i].Missing, w.pass, w.missing)
		}
	}
	if !math.IsNaN(res[2].Value) {
		t.Errorf("missing metric value = %v, want NaN", res[2].Value)
	}
	if _, ok := Evaluate(ts[:1], func(string) (float64, bool) { return 0.001, true }); !ok {
		t.Error("all passing: ok = false")
	}
	if _, ok := Evaluate(ts[:1], func(string) (float64, bool) { return math.NaN(), true }); ok {
		t.Error("NaN value passed")
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

// TestReevaluate judges merged shards by the thresholds they carry: the
// stored naming (metric whole or split into step and statistic) is kept,
// the verdict is the merged figure's, shards that disagree are named, and
// a stored comparison that is not one is an error naming its file.
func TestReevaluate(t *testing.T) {
	whole := reports.ThresholdResult{Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.02, Observed: 0.001, Pass: true}
	split := reports.ThresholdResult{Name: "join p99 < 20ms", Metric: "p99", Step: "join", Op: "<", Limit: 0.02, Observed: 0.001, Pass: true}
	rate := reports.ThresholdResult{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01}
	lookup := func(m string) (float64, bool) {
		v, ok := map[string]float64{"join.p99": 0.03, "errors.rate": 0}[m]
		return v, ok
	}
	names := []string{"a.json", "b.json"}
	for _, tc := range []struct {
		name     string
		a, b     []reports.ThresholdResult
		want     []reports.ThresholdResult
		ok       bool
		warn     string
		errMatch string
	}{
		{name: "none", want: []reports.ThresholdResult{}, ok: true},
		{name: "whole", a: []reports.ThresholdResult{whole, rate}, b: []reports.ThresholdResult{whole, rate},
			want: []reports.ThresholdResult{{Name: whole.Name, Metric: "join.p99", Op: "<", Limit: 0.02, Observed: 0.03}, {Name: rate.Name, Metric: "errors.rate", Op: "<", Limit: 0.01, Pass: true}}},
		{name: "split, from the second shard", b: []reports.ThresholdResult{split},
			want: []reports.ThresholdResult{{Name: split.Name, Metric: "p99", Step: "join", Op: "<", Limit: 0.02, Observed: 0.03}}},
		{name: "disagree", a: []reports.ThresholdResult{rate}, b: []reports.ThresholdResult{whole},
			want: []reports.ThresholdResult{{Name: rate.Name, Metric: "errors.rate", Op: "<", Limit: 0.01, Pass: true}}, ok: true,
			warn: "a.json and b.json carry different thresholds; evaluating those of a.json"},
		{name: "no data", a: []reports.ThresholdResult{{Name: "x.p99 < 1ms", Metric: "x.p99", Op: "<", Limit: 0.001, Observed: 0.0005, Pass: true}},
			want: []reports.ThresholdResult{{Name: "x.p99 < 1ms", Metric: "x.p99", Op: "<", Limit: 0.001, NoData: true}}},
		{name: "bad op", a: []reports.ThresholdResult{{Name: "n", Metric: "errors.rate", Op: "=~"}},
			errMatch: `a.json: threshold "n" has unknown comparison "=~"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := []*reports.Run{{Thresholds: tc.a}, {Thresholds: tc.b}}
			got, ok, warn, err := Reevaluate(runs, names, lookup)
			if tc.errMatch != "" {
				if err == nil || err.Error() != tc.errMatch {
					t.Fatalf("err = %v, want %q", err, tc.errMatch)
				}
				return
			}
			if err != nil || ok != tc.ok || warn != tc.warn || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Reevaluate = %+v, %v, %q, %v\nwant %+v, %v, %q", got, ok, warn, err, tc.want, tc.ok, tc.warn)
			}
		})
	}
}
