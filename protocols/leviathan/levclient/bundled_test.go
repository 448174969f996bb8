package levclient

import (
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/bundled"
	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/scenario"
)

// sentMessages plays p's one flow, as one session, against a reference
// server through a recording relay, without the scenario's impairment
// (a loss makes resends, not other messages), and returns the messages
// it sent, first transmissions only.
func sentMessages(t *testing.T, p *scenario.Plan) [][]byte {
	t.Helper()
	one := *p
	one.Impairment = scenario.Impairment{}
	relay := faultproxy.Relay(t, "udp", startServer(t, nil).Addr(), faultproxy.Options{Record: true})
	run, err := playThrough(t, &one, relay.Addr())
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	if len(run.Violations) != 0 {
		t.Errorf("%s: violations %+v", p.Name, run.Violations)
	}
	msgs, inOrder := messages(relay.Sent())
	if !inOrder {
		t.Errorf("%s: the client's Ln packets do not take PKT_IDs one by one", p.Name)
	}
	return msgs
}

// TestBundledScripted: every flow of every bundled Leviathan scenario,
// played by one session, sends the same messages, byte for byte, in Ln
// packets numbered one by one, as its script in
// scenarios/testdata/scripted.
func TestBundledScripted(t *testing.T) {
	bundled.Each(t, lv.ProtocolName, "messages", sentMessages)
}
