package udpclient

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/bundled"
	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// recorded is what one session sent the lobby and its instance.
type recorded struct{ lobby, instance [][]byte }

// playRecorded plays flow f of p, as one session, against a reference
// server through recording relays: one in front of the lobby and one in
// front of the instance port (the server on 127.0.0.2 with a pool of one
// port Q, the relay on 127.0.0.1:Q, the lobby's host as the client sees
// it, so that the instance's traffic passes it too).
func playRecorded(t *testing.T, p *scenario.Plan) recorded {
	t.Helper()
	probe, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	q := probe.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	probe.Close()
	srv := referenceServer(t, func(c *udpserver.Config) {
		c.Addr, c.BasePort, c.MaxInstances = "127.0.0.2:0", int(q), 1
		// The game starts 3 s after everyone is ready, after full-match's
		// pings (500 ms): the script waits for it after them, as the
		// built-in step does (a script cannot note that it came early).
		c.CountdownInterval = time.Second
	})
	inst := faultproxy.Relay(t, "udp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), q),
		faultproxy.Options{Record: true, Listen: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), q)})
	lobby := faultproxy.Relay(t, "udp", srv.Addr(), faultproxy.Options{Record: true})
	one := *p
	one.Options = OptionsOf(p).Embedded() // the instance's port is the relay's, not the scenario's range
	r := runSessions(t, &one, lobby.Addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatalf("%s: %v", p.Name, r.errs[0])
	}
	if v := r.violations(); len(v) != 0 {
		t.Errorf("%s: violations %v", p.Name, v)
	}
	return recorded{lobby.Sent(), inst.Sent()}
}

// normalise rewrites what differs by nature between two plays of the same
// flow: a CLIENT_PING's clientTime, the built-in client's clock (µs since
// its series began), which a script does not read, so it sends 0. The
// datagram is decoded and encoded again, its CRC with it; its sequence id
// and length are kept.
func normalise(t *testing.T, prof udpwire.Profile, b []byte) []byte {
	var m udpwire.Message
	if err := (udpwire.Decoder{Profile: prof}).Decode(b, &m); err != nil {
		t.Fatalf("% x: %v", b, err)
	}
	if m.Type != udpwire.ClientPing {
		return b
	}
	m.Value = 0
	out, err := udpwire.Append(nil, prof, &m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBundledScripted: every flow of every bundled udp-lobby scenario,
// played by one session, sends the lobby and the instance the same
// datagrams, byte for byte, as its script in scenarios/testdata/scripted
// (but for normalise); bundled.Unscripted names the flows with none.
func TestBundledScripted(t *testing.T) {
	pairs := bundled.Pairs(t, udpwire.ProtocolName)
	if len(pairs) < 8 {
		t.Errorf("%d bundled udp-lobby flows with a script, want the 8 there are", len(pairs))
	}
	for _, pair := range pairs {
		t.Run(pair.Key, func(t *testing.T) {
			t.Parallel()
			a, b := playRecorded(t, pair.BuiltIn), playRecorded(t, pair.Scripted)
			prof := udpwire.ProfileSpec // the reference server's, which an auto client takes too
			norm := func(ds [][]byte) [][]byte {
				out := make([][]byte, len(ds))
				for k, d := range ds {
					out[k] = normalise(t, prof, d)
				}
				return out
			}
			bundled.Compare(t, "lobby datagrams", norm(a.lobby), norm(b.lobby))
			if len(a.instance)+len(b.instance) > 0 {
				bundled.Compare(t, "instance datagrams", norm(a.instance), norm(b.instance))
			}
		})
	}
}
