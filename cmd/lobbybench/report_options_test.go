package main

import (
	"slices"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestCompareOptionsGates checks the gates report compare's flags make,
// nothing compared, and the refusals of a bad value naming the flag.
func TestCompareOptionsGates(t *testing.T) {
	p99 := func(max float64, floor int64) result.Gate {
		return result.Gate{Metric: result.GateP99IncreasePct, Max: max, MinDeltaUS: floor}
	}
	errRate := result.Gate{Metric: result.GateErrorRateIncreasePP, Max: 0.5}
	viol := result.Gate{Metric: result.GateNewViolations}
	fail := result.Gate{Metric: result.GateNewlyFailingCases}
	tests := []struct {
		name  string
		args  []string
		want  []result.Gate
		error string
	}{
		{"defaults", nil, []result.Gate{p99(10, 0), errRate, viol, fail}, ""},
		{"p50 on, a floor", []string{"--max-p50-increase", "20%", "--min-delta", "1ms"}, []result.Gate{p99(10, 1000), {Metric: result.GateP50IncreasePct, Max: 20, MinDeltaUS: 1000}, errRate, viol, fail}, ""},
		{"all off", []string{"--max-p99-increase", "off", "--max-error-rate-increase", "off", "--fail-on-new-violations=false", "--fail-on-new-failures=false"}, nil, ""},
		{"negative floor", []string{"--min-delta", "-1ms"}, nil, "--min-delta -1ms must not be negative"},
		{"a bad format", []string{"--format", "xml"}, nil, `--format "xml": want table or json`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := parseOptions(t, addCompareFlags, tc.args...)
			if got := errText(c.check([]string{"base.json", "new.json"})); got != tc.error {
				t.Fatalf("error %q, want %q", got, tc.error)
			}
			if tc.error != "" {
				return
			}
			if got := c.gates(); !slices.Equal(got, tc.want) {
				t.Errorf("gates %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCompareOptionsCapacityGate checks --max-capacity-drop: not given,
// the searches' own gate; a percentage; off, 100 %.
func TestCompareOptionsCapacityGate(t *testing.T) {
	b, n := &result.Capacity{}, &result.Capacity{}
	own := result.CapacityDropGate(b, n)
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{nil, own.Max},
		{[]string{"--max-capacity-drop", "15"}, 15},
		{[]string{"--max-capacity-drop", "off"}, 100},
	} {
		c, _, _ := parseOptions(t, addCompareFlags, tc.args...)
		if g := c.capacityGate(b, n); g.Metric != own.Metric || g.Max != tc.want {
			t.Errorf("%q: gate %+v, want %s max %v", tc.args, g, own.Metric, tc.want)
		}
	}
}
