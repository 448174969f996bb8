package result

import (
	"math"
	"reflect"
	"testing"
)

// TestEvaluate judges each threshold by its comparison; a metric the run
// did not produce fails as NoData with Observed 0, and NaN passes none.
func TestEvaluate(t *testing.T) {
	th := func(name, metric, op string, limit float64) Threshold {
		return Threshold{Name: name, Metric: metric, Op: op, Limit: limit}
	}
	ts := []Threshold{
		th("join.p99 < 20ms", "join.p99", "<", 0.020),    // 0.019: pass
		th("errors.rate < 1%", "errors.rate", "<", 0.01), // 0.01: fail (not strictly below)
		th("violations == 0", "violations", "==", 0),     // missing: fail, never a silent pass
		th("join.count >= 10", "join.count", ">=", 10),   // 10: pass
		th("join.count != 10", "join.count", "!=", 10),   // 10: fail
		th("join.count <= 9", "join.count", "<=", 9),     // 10: fail
		th("join.count > 9", "join.count", ">", 9),       // 10: pass
		th("join.count =~ 10", "join.count", "=~", 10),   // no such comparison: fail
	}
	metrics := map[string]float64{"join.p99": 0.019, "errors.rate": 0.01, "join.count": 10}
	res, ok := Evaluate(ts, func(m string) (float64, bool) { v, found := metrics[m]; return v, found })
	if ok {
		t.Error("Evaluate ok = true with failures")
	}
	want := []struct{ pass, noData bool }{{true, false}, {false, false}, {false, true}, {true, false}, {false, false}, {false, false}, {true, false}, {false, false}}
	if len(res) != len(want) {
		t.Fatalf("%d verdicts for %d thresholds", len(res), len(want))
	}
	for i, w := range want {
		r := res[i]
		if r.Pass != w.pass || r.NoData != w.noData || r.Name != ts[i].Name || r.Metric != ts[i].Metric || r.Op != ts[i].Op || r.Limit != ts[i].Limit || r.Step != "" {
			t.Errorf("%s: %+v, want pass %v no data %v", ts[i].Name, r, w.pass, w.noData)
		}
	}
	if res[2].Observed != 0 {
		t.Errorf("missing metric observed = %v, want 0 (JSON has no NaN)", res[2].Observed)
	}
	if res[0].Observed != 0.019 {
		t.Errorf("observed = %v, want 0.019", res[0].Observed)
	}
	if _, ok := Evaluate(ts[:1], func(string) (float64, bool) { return 0.001, true }); !ok {
		t.Error("all passing: ok = false")
	}
	if _, ok := Evaluate(ts[:1], func(string) (float64, bool) { return math.NaN(), true }); ok {
		t.Error("NaN value passed")
	}
	if res, ok := Evaluate(nil, nil); !ok || res == nil || len(res) != 0 {
		t.Errorf("no thresholds = %#v, %v; want an empty list (JSON []) and ok", res, ok)
	}
}

// TestReevaluate judges merged shards by the thresholds they carry: the
// stored naming (metric whole or split into step and statistic) is kept,
// the verdict is the merged figure's, shards that disagree are named, and
// a stored comparison that is not one is an error naming its file.
func TestReevaluate(t *testing.T) {
	whole := ThresholdResult{Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.02, Observed: 0.001, Pass: true}
	split := ThresholdResult{Name: "join p99 < 20ms", Metric: "p99", Step: "join", Op: "<", Limit: 0.02, Observed: 0.001, Pass: true}
	rate := ThresholdResult{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01}
	lookup := func(m string) (float64, bool) {
		v, ok := map[string]float64{"join.p99": 0.03, "errors.rate": 0}[m]
		return v, ok
	}
	names := []string{"a.json", "b.json"}
	for _, tc := range []struct {
		name     string
		a, b     []ThresholdResult
		want     []ThresholdResult
		ok       bool
		warn     string
		errMatch string
	}{
		{name: "none", want: []ThresholdResult{}, ok: true},
		{name: "whole", a: []ThresholdResult{whole, rate}, b: []ThresholdResult{whole, rate},
			want: []ThresholdResult{{Name: whole.Name, Metric: "join.p99", Op: "<", Limit: 0.02, Observed: 0.03}, {Name: rate.Name, Metric: "errors.rate", Op: "<", Limit: 0.01, Pass: true}}},
		{name: "split, from the second shard", b: []ThresholdResult{split},
			want: []ThresholdResult{{Name: split.Name, Metric: "p99", Step: "join", Op: "<", Limit: 0.02, Observed: 0.03}}},
		{name: "disagree", a: []ThresholdResult{rate}, b: []ThresholdResult{whole},
			want: []ThresholdResult{{Name: rate.Name, Metric: "errors.rate", Op: "<", Limit: 0.01, Pass: true}}, ok: true,
			warn: "a.json and b.json carry different thresholds; evaluating those of a.json"},
		{name: "no data", a: []ThresholdResult{{Name: "x.p99 < 1ms", Metric: "x.p99", Op: "<", Limit: 0.001, Observed: 0.0005, Pass: true}},
			want: []ThresholdResult{{Name: "x.p99 < 1ms", Metric: "x.p99", Op: "<", Limit: 0.001, NoData: true}}},
		{name: "bad op", a: []ThresholdResult{{Name: "n", Metric: "errors.rate", Op: "=~"}},
			errMatch: `a.json: threshold "n" has unknown comparison "=~"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := []*Run{{Thresholds: tc.a}, {Thresholds: tc.b}}
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

// TestEvaluateThresholds judges a run by its own figures (RunMetrics) and
// stores the verdicts in it.
func TestEvaluateThresholds(t *testing.T) {
	ts := []Threshold{
		{Name: "join.p99 < 10ms", Metric: "join.p99", Op: "<", Limit: 0.010},
		{Name: "violations == 0", Metric: "violations", Op: "==", Limit: 0},
		{Name: "join.p50 < 10ms", Metric: "join.p50", Op: "<", Limit: 0.010},
	}
	run := NewRun()
	run.Totals.Violations = 1
	run.Steps = []Series{{Name: "join", Requests: 1, Successes: 1, Latency: Latency{Count: 1, P99US: 5000}}}
	if EvaluateThresholds(run, ts) {
		t.Error("all passed")
	}
	want := []bool{true, false, true}
	if len(run.Thresholds) != len(want) {
		t.Fatalf("%d verdicts stored, want %d", len(run.Thresholds), len(want))
	}
	for i, r := range run.Thresholds {
		if r.Pass != want[i] || r.Name != ts[i].Name {
			t.Errorf("%d: %+v, want pass %v", i, r, want[i])
		}
	}
}

// TestThresholdOf rebuilds the threshold of a stored verdict, its metric
// whole whether stored whole or split.
func TestThresholdOf(t *testing.T) {
	for _, tc := range []struct {
		in   ThresholdResult
		want Threshold
	}{
		{ThresholdResult{Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.02, Observed: 1, Pass: true},
			Threshold{Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.02}},
		{ThresholdResult{Name: "join p99 < 20ms", Step: "join", Metric: "p99", Op: "<=", Limit: 0.02},
			Threshold{Name: "join p99 < 20ms", Metric: "join.p99", Op: "<=", Limit: 0.02}},
	} {
		if got, err := ThresholdOf(tc.in); err != nil || got != tc.want {
			t.Errorf("ThresholdOf(%+v) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ThresholdOf(ThresholdResult{Name: "n", Op: "=~"}); err == nil {
		t.Error("an unknown comparison was read")
	}
}
