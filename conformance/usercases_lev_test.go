package conformance

import (
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

const exampleLevCases = "../scenarios/cases/leviathan-join.yaml"

// TestUserCasesLeviathan: the Leviathan example cases pass against the
// reference endpoint, each datagram (acks included) in their wire logs,
// and fail against endpoints that break what they check: a Response
// Connect whose CheckValue is 43 breaks the codec's rule (named, with
// the message's bytes), a Response Security of SecureType 2 fails the
// step whose where reads it.
func TestUserCasesLeviathan(t *testing.T) {
	ref := startRefLeviathan(t, nil)
	for _, tc := range []struct {
		name, target string
		verdicts     map[string]string
		want         []string // what mylev/1 says when it fails
	}{
		{"reference", ref.Addr().String(), map[string]string{"mylev/1": result.VerdictPass, "mylev/2": result.VerdictPass}, nil},
		{"Connect answered with CheckValue 43", startFakeLev(t, levFaults{connectValue: 43}).String(),
			map[string]string{"mylev/1": result.VerdictFail, "mylev/2": result.VerdictWarn},
			[]string{"the reply to Request Connect to keep L-", "broken", "received: 12 00 00 00 01 "}},
		{"Security answered with SecureType 2", startFakeLev(t, levFaults{securityType: 2}).String(),
			map[string]string{"mylev/1": result.VerdictFail, "mylev/2": result.VerdictPass},
			[]string{"step", "line 15", "SecureType == 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := userCfg(t, exampleLevCases, Config{Target: tc.target, Protocol: protoLeviathan, Timeout: levSuiteTimeout})
			cfg.Patterns = []string{"mylev"}
			rep := runSuite(t, cfg)
			if len(rep.Cases) != len(tc.verdicts) {
				logReport(t, rep)
				t.Fatalf("%d cases ran, want the file's %d", len(rep.Cases), len(tc.verdicts))
			}
			for id, v := range tc.verdicts {
				c := caseByID(rep, id)
				if c.Verdict != v {
					logReport(t, rep)
					t.Errorf("%s: %s (%s / %s), want %s", id, c.Verdict, c.Expected, c.Actual, v)
				}
				if len(c.Wire) < 2 {
					t.Errorf("%s: wire log of %d entries", id, len(c.Wire))
				}
			}
			c := caseByID(rep, "mylev/1")
			for _, w := range tc.want {
				if !strings.Contains(c.Expected+" "+c.Actual, w) {
					t.Errorf("mylev/1 says %q / %q, lacking %q", c.Expected, c.Actual, w)
				}
			}
		})
	}
}
