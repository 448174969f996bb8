package scenario

import (
	"fmt"
	"strings"
	"testing"
)

// reusedSteps is a scenario whose first flow anchors a list of n steps that
// each of flows further flows reuses by alias.
func reusedSteps(n, flows int) string {
	var b strings.Builder
	b.WriteString("protocol: udp-lobby\nload: {rate: 10/s, duration: 2s}\nflows:\n  - steps: &s [")
	b.WriteString(strings.TrimSuffix(strings.Repeat("list_rooms, ", n), ", "))
	b.WriteString("]\n")
	for range flows {
		b.WriteString("  - steps: *s\n")
	}
	return b.String()
}

// laughs nests aliases ten deep, each level ten of the one below: 10^10
// nodes expanded from a few hundred bytes.
func laughs() string {
	var b strings.Builder
	b.WriteString("l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "l%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	return b.String()
}

// TestAliasExpansionBounded: aliases may not expand a scenario past
// maxExpandedNodes, nor refer to the value they are in. The document is
// refused before it is decoded (the one error is the expansion's: none of
// the decoder's, such as the unknown keys of laughs), at the alias that
// crossed the bound; a scenario with aliases under it still loads whole.
func TestAliasExpansionBounded(t *testing.T) {
	tests := []struct {
		name, yaml string
		err        string // "" valid
		alias      string // text on the error's line
		steps      int    // valid: steps of the plan, aliases expanded
	}{
		{"steps reused past the bound", reusedSteps(600, 1000), "takes the scenario over 524288 YAML nodes", "*s", 0},
		{"nested aliases", laughs(), "alias *a4 (111111 nodes) takes the scenario over 524288", "*a4", 0},
		{"alias in its own value", "protocol: udp-lobby\nflows: &f [{steps: *f}]\n", "alias *f is inside the value of &f", "*f", 0},
		{"steps reused under the bound", reusedSteps(50, 9), "", "", 50 * 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("t.yaml", []byte(tc.yaml))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, f := range p.Flows {
					n += len(f.Steps)
				}
				if n != tc.steps {
					t.Fatalf("%d steps, want %d", n, tc.steps)
				}
				return
			}
			es, ok := err.(Errors)
			if !ok || len(es) != 1 {
				t.Fatalf("err = %v, want the one expansion error", err)
			}
			if !strings.Contains(es[0].Msg, tc.err) {
				t.Fatalf("err = %v, want one containing %q", es[0], tc.err)
			}
			lines := strings.Split(tc.yaml, "\n")
			if es[0].Line < 1 || es[0].Line > len(lines) || !strings.Contains(lines[es[0].Line-1], tc.alias) {
				t.Fatalf("err at line %d, want the line of an alias %s", es[0].Line, tc.alias)
			}
			if !strings.HasPrefix(es[0].Error(), fmt.Sprintf("t.yaml:%d: ", es[0].Line)) {
				t.Fatalf("err %q does not start with file:line", es[0].Error())
			}
		})
	}
}
