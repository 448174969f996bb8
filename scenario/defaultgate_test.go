package scenario

import (
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestDefaultErrorGate: a plan's conditions end with the default gates
// unless the scenario gives an overall error threshold (both) or one on
// cut_silent (the silent gate), says default_error_gate: false, or
// --no-default-gate is given; a bad value is an error at its line.
func TestDefaultErrorGate(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		noGate  bool // --no-default-gate
		want    []string
		wantErr string
	}{
		{"no thresholds", "", false, []string{result.DefaultErrorGate.Name, result.DefaultSilentGate.Name}, ""},
		{"a latency threshold", "thresholds: [join.p99 < 50ms]\n", false, []string{"join.p99 < 50ms", result.DefaultErrorGate.Name, result.DefaultSilentGate.Name}, ""},
		{"a step's error rate", "thresholds: [join.error_rate < 1%]\n", false, []string{"join.error_rate < 1%", result.DefaultErrorGate.Name, result.DefaultSilentGate.Name}, ""},
		{"its own errors.rate", "thresholds: [errors.rate < 5%]\n", false, []string{"errors.rate < 5%"}, ""},
		{"its own errors.count", "thresholds: [errors.count == 0]\n", false, []string{"errors.count == 0"}, ""},
		{"its own cut_silent.count", "thresholds: [cut_silent.count == 0]\n", false, []string{"cut_silent.count == 0", result.DefaultErrorGate.Name}, ""},
		{"turned off", "default_error_gate: false\nthresholds: [join.p99 < 50ms]\n", false, []string{"join.p99 < 50ms"}, ""},
		{"said on", "default_error_gate: true\n", false, []string{result.DefaultErrorGate.Name, result.DefaultSilentGate.Name}, ""},
		{"--no-default-gate", "", true, nil, ""},
		{"a bad value", "default_error_gate: off\n", false, nil, `s.yaml:9: default_error_gate: unknown value "off" (want one of true, false)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.yaml", []byte(minimal+tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Apply(Overrides{NoDefaultGate: tt.noGate}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range p.Conditions() {
				got = append(got, c.Name)
				if c.Default != (c.Name == result.DefaultErrorGate.Name || c.Name == result.DefaultSilentGate.Name) {
					t.Errorf("%q: default %v", c.Name, c.Default)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("conditions %q, want %q", got, tt.want)
			}
		})
	}
}
