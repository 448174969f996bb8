package scenario

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestSubstituteEnv: ${env.NAME} takes the variable, :- its default when
// unset or empty; a name that is not one, a variable unset without a
// default and an unclosed reference are errors naming the reference;
// $${env. is literal; any other ${…} is left as written.
func TestSubstituteEnv(t *testing.T) {
	vars := map[string]string{"RATE": "300/s", "EMPTY": "", "HOST": "127.0.0.2"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for _, tt := range []struct {
		in, want, problem string
	}{
		{"${env.RATE}", "300/s", ""},
		{"${env.HOST}:9000", "127.0.0.2:9000", ""},
		{"${env.MISSING:-200/s}", "200/s", ""},
		{"${env.EMPTY:-x}", "x", ""},
		{"${env.RATE:-x}", "300/s", ""},
		{"a ${env.HOST} b ${env.RATE}", "a 127.0.0.2 b 300/s", ""},
		{"${env.MISSING:-}", "", ""},
		{"$${env.RATE}", "${env.RATE}", ""},
		{"exec ./srv --port ${PORT}", "exec ./srv --port ${PORT}", ""},
		{"${env.MISSING}", "", "MISSING is not set in the environment (give a default: ${env.MISSING:-VALUE})"},
		{"${env.EMPTY}", "", "EMPTY is not set"},
		{"${env.9X}", "", `"9X" is not a variable name`},
		{"${env.}", "", "the empty name is not a variable name"},
		{"${env.RATE", "", "without its closing }"},
	} {
		got, problem := substituteEnv(tt.in, lookup)
		if tt.problem != "" {
			if !strings.Contains(problem, tt.problem) {
				t.Errorf("substituteEnv(%q): problem %q, want one containing %q", tt.in, problem, tt.problem)
			}
			continue
		}
		if problem != "" || got != tt.want {
			t.Errorf("substituteEnv(%q) = %q (%q), want %q", tt.in, got, problem, tt.want)
		}
	}
}

// TestScenarioEnv: a whole scenario takes its target, rate and duration
// from the environment; a plain value is typed as what it became, a
// quoted one stays a string; an unset variable is an error at its line.
func TestScenarioEnv(t *testing.T) {
	const text = `name: env
protocol: udp-lobby
target: ${env.LB_TARGET:-127.0.0.1:9000}
seed: ${env.LB_SEED:-7}
load:
  rate: ${env.LB_RATE:-50}/s
  duration: ${env.LB_DUR}
flows: [{name: f, steps: [list_rooms]}]
`
	t.Setenv("LB_TARGET", "127.0.0.3:9100")
	t.Setenv("LB_DUR", "3s")
	p, err := Parse("env.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if p.Target != "127.0.0.3:9100" || p.Seed != 7 || p.Load.Duration != 3*time.Second || p.Load.Start != 50 {
		t.Errorf("target %q, seed %d, duration %v, rate %v: want the environment's and the defaults", p.Target, p.Seed, p.Load.Duration, p.Load.Start)
	}
	t.Setenv("LB_DUR", "")
	_, err = Parse("env.yaml", []byte(text))
	if err == nil || !strings.Contains(err.Error(), "env.yaml:7: ${env.LB_DUR}: LB_DUR is not set") {
		t.Errorf("LB_DUR empty: %v, want the error at line 7", err)
	}
}

// TestExpandEnvTypes: a plain value is typed as the value it became, a
// quoted one stays a string; keys are not substituted.
func TestExpandEnvTypes(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: ${env.N:-7}\nb: \"${env.N:-7}\"\nc: ${env.N:-}\n${env.N:-k}: 1\n"), &doc); err != nil {
		t.Fatal(err)
	}
	d := &decoder{file: "t.yaml"}
	if !d.expandEnv(&doc, func(string) (string, bool) { return "", false }) {
		t.Fatal(d.errs)
	}
	m := doc.Content[0].Content
	for i, want := range []struct{ value, tag string }{{"7", "!!int"}, {"7", "!!str"}, {"", "!!null"}, {"${env.N:-k}", "!!str"}} {
		n := m[2*i+1]
		if i == 3 {
			n = m[2*i]
		}
		if n.Value != want.value || n.Tag != want.tag {
			t.Errorf("node %d: %q %s, want %q %s", i, n.Value, n.Tag, want.value, want.tag)
		}
	}
}

// FuzzSubstituteEnv: substitution never panics, and with every variable
// unset and no reference left it is the identity.
func FuzzSubstituteEnv(f *testing.F) {
	for _, s := range []string{"${env.A}", "${env.A:-b}", "$${env.A}", "${x}", "${env.", "a${env.B:-${env.C}}"} {
		f.Add(s)
	}
	none := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, s string) {
		out, problem := substituteEnv(s, none)
		if problem == "" && !strings.Contains(s, "${env.") && out != s {
			t.Errorf("substituteEnv(%q) = %q without a reference", s, out)
		}
	})
}
