package scenario

import (
	"strings"
	"testing"
)

// TestStepAliases: one name per action across protocols (list_rooms,
// create_room, disconnect), the older names (tcp-lobby's list and create,
// leviathan's close) still accepted
// with the name written kept as the label; a parameter one protocol's step
// takes and another's does not is refused there.
func TestStepAliases(t *testing.T) {
	const head = "load: {clients: 1, duration: 1s}\nflows:\n  - steps: "
	tests := []struct {
		name, yaml string
		kinds      []StepKind
		labels     []string
		err        string
	}{
		{"tcp canonical", "protocol: tcp-lobby\n" + head + "[connect, list_rooms, {create_room: r1}]\n",
			[]StepKind{StepKind("connect"), StepKind("list_rooms"), StepKind("create_room")}, []string{"connect", "list_rooms", "create_room"}, ""},
		{"tcp old names", "protocol: tcp-lobby\n" + head + "[connect, list, {create: r1}]\n",
			[]StepKind{StepKind("connect"), StepKind("list_rooms"), StepKind("create_room")}, []string{"connect", "list", "create"}, ""},
		{"tcp rate probe request by old name", "protocol: tcp-lobby\n" + head + "[connect, {rate_probe: {from: 10/s, to: 20/s, over: 1s, request: list}}]\n",
			[]StepKind{StepKind("connect"), RateProbe}, []string{"connect", "rate_probe"}, ""},
		{"udp create_room takes no name", "protocol: udp-lobby\n" + head + "[{create_room: {name: r1}}]\n",
			nil, nil, `unknown key "name"`},
		{"udp create_room shorthand refused", "protocol: udp-lobby\n" + head + "[{create_room: r1}]\n",
			nil, nil, "takes no single value"},
		{"udp old tcp name", "protocol: udp-lobby\n" + head + "[list]\n",
			[]StepKind{StepKind("list_rooms")}, []string{"list"}, ""},
		{"leviathan old close", "protocol: leviathan\n" + head + "[connect, close]\n",
			[]StepKind{StepKind("connect"), StepKind("disconnect")}, []string{"connect", "close"}, ""},
		{"leviathan disconnect", "protocol: leviathan\n" + head + "[connect, disconnect]\n",
			[]StepKind{StepKind("connect"), StepKind("disconnect")}, []string{"connect", "disconnect"}, ""},
		{"leviathan does not list rooms", "protocol: leviathan\n" + head + "[list]\n",
			nil, nil, `step "list" is not a leviathan step`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("t.yaml", []byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			steps := p.Flows[0].Steps
			if len(steps) != len(tc.kinds) {
				t.Fatalf("%d steps, want %d", len(steps), len(tc.kinds))
			}
			for i, st := range steps {
				if st.Kind != tc.kinds[i] || st.Label != tc.labels[i] {
					t.Errorf("step %d = %s labelled %s, want %s labelled %s", i, st.Kind, st.Label, tc.kinds[i], tc.labels[i])
				}
			}
			if rp := steps[len(steps)-1]; rp.Kind == RateProbe && rp.Probe.Request != StepKind("list_rooms") {
				t.Errorf("rate probe request %s, want %s", rp.Probe.Request, StepKind("list_rooms"))
			}
		})
	}
}
