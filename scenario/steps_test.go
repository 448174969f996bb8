package scenario_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// TestRegisterStepKinds: a protocol's step kinds that clash, with a
// shared kind or one another, and a rate_probe request not among its
// kinds, panic at registration (and register nothing: a protocol of its
// own kinds would stay in this binary's registry, and so is the toy's
// test, protocols/toyecho/say_test.go).
func TestRegisterStepKinds(t *testing.T) {
	name := fmt.Sprintf("steps-proto-%d", time.Now().UnixNano())
	poke := scenario.StepSpec{Kind: "poke_" + scenario.StepKind(name[len(name)-6:]), Request: true}
	for _, tc := range []struct {
		name  string
		steps []scenario.StepSpec
		probe scenario.StepKind
		panic string
	}{
		{"a shared kind's name", []scenario.StepSpec{poke, {Kind: scenario.Think}}, poke.Kind, "named twice"},
		{"an alias twice", []scenario.StepSpec{poke, {Kind: "other", Aliases: []string{string(poke.Kind)}}}, poke.Kind, "named twice"},
		{"probe request not its own", []scenario.StepSpec{poke}, "list_rooms", "unknown step kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			func() {
				defer func() {
					if r := recover(); r != nil {
						got = fmt.Sprint(r)
					}
				}()
				scenario.RegisterProtocol(scenario.ProtocolSpec{Name: scenario.ProtocolName(name),
					Transport: "udp", Steps: tc.steps, ProbeRequests: []scenario.StepKind{tc.probe}})
			}()
			if got == "" || !strings.Contains(got, tc.panic) {
				t.Fatalf("panic %q, want %q", got, tc.panic)
			}
			if _, ok := scenario.LookupProtocol(scenario.ProtocolName(name)); ok {
				t.Fatal("a refused protocol was registered")
			}
		})
	}
}
