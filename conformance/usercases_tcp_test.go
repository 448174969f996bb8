package conformance

import (
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
)

const exampleTCPCases = "../scenarios/cases/tcp-lobby.yaml"

// TestUserCasesTCP: the tcp-lobby example case passes against the
// reference server, each frame in its wire log, and fails through a proxy
// that cuts CONNECT_ACK short, naming the rule and the bytes.
func TestUserCasesTCP(t *testing.T) {
	srv := startRef(t)
	up := srv.Addr(tcpwire.ProtocolName).String()
	cut := tcpFault{filter: func(p []byte) []byte {
		if len(p) > 1 && tcpwire.Type(p[0]) == tcpwire.TypeConnectAck {
			return p[:len(p)-1]
		}
		return p
	}}
	for _, tc := range []struct {
		name, target, verdict string
		want                  []string
	}{
		{"reference", up, result.VerdictPass, nil},
		{"CONNECT_ACK cut short", startTCPProxy(t, up, cut), result.VerdictFail, []string{"CONNECT_ACK", "broken", "received: 11 01"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := userCfg(t, exampleTCPCases, Config{Target: tc.target, Protocol: protoTCP})
			cfg.Patterns = []string{"mytcp"}
			rep := runSuite(t, cfg)
			c := caseByID(rep, "mytcp/1")
			if c.Verdict != tc.verdict {
				logReport(t, rep)
				t.Fatalf("mytcp/1: %s, want %s", c.Verdict, tc.verdict)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Expected+" "+c.Actual, w) {
					t.Errorf("mytcp/1 says %q / %q, lacking %q", c.Expected, c.Actual, w)
				}
			}
			if len(c.Wire) < 2 {
				t.Errorf("wire log of %d entries", len(c.Wire))
			}
		})
	}
}
