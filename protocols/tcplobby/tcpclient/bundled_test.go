package tcpclient

import (
	"bytes"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/bundled"
	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/scenario"
)

// sentFrames plays p's one flow, as one session, against a reference
// lobby through a recording relay, and returns the frames it sent.
func sentFrames(t *testing.T, p *scenario.Plan) [][]byte {
	t.Helper()
	relay := faultproxy.Relay(t, "tcp", referenceServer(t), faultproxy.Options{Record: true})
	r := runSessions(t, p, relay.Addr(), 1)
	if r.errs[0] != nil {
		t.Fatalf("%s: %v", p.Name, r.errs[0])
	}
	if v := r.violations(); len(v) != 0 {
		t.Errorf("%s: violations %v", p.Name, v)
	}
	return frames(t, bytes.Join(relay.Sent(), nil))
}

// TestBundledScripted: every flow of every bundled tcp-lobby scenario,
// played by one session, sends the same frames, byte for byte (length
// prefixes too), as its script in scenarios/testdata/scripted.
func TestBundledScripted(t *testing.T) {
	bundled.Each(t, tcpwire.ProtocolName, "frames", sentFrames)
}
