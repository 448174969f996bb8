package udpclient

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/bundled"
	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
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
	srv, inst := instanceRelay(t)
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

// instanceRelay starts the reference server on 127.0.0.2 with a pool of
// one instance port Q, and a recording relay on 127.0.0.1:Q in front of
// it. Q is free on both addresses, below the ephemeral range and given to
// no other play (quietport): the server binds it only at the create, and
// a port of the ephemeral range was once taken in between by a socket of
// a test beside it (the create was answered LOBBY_JOIN_FAILED).
func instanceRelay(t *testing.T) (*udpserver.Server, *faultproxy.Proxy) {
	t.Helper()
	q := uint16(quietport.Pick(t, "udp", 1, netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")))
	srv := referenceServer(t, func(c *udpserver.Config) {
		c.Addr, c.BasePort, c.MaxInstances = "127.0.0.2:0", int(q), 1
		// The game starts 3 s after everyone is ready, well after
		// full-match's pings (50 ms at bundled.Pace, more under the race
		// detector with every play at once): the script waits for it
		// after them, as the built-in step does (a script cannot note
		// that it came early).
		c.CountdownInterval = time.Second
	})
	inst := faultproxy.Relay(t, "udp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), q),
		faultproxy.Options{Record: true, Listen: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), q)})
	return srv, inst
}

// pingSeries masks what differs by nature between two plays of the same
// flow, a CLIENT_PING's clientTime, after checking it against the
// series' schedule. clientTime is a clock: the microseconds since the
// ping series began (ClientTime, the built-in step's and the script's
// alike), read when each ping is sent, so two plays' values differ by
// however long their sends and the server's replies took. What both must
// keep is the series: ping k goes no earlier than k intervals after the
// series began (the built-in step's schedule, the script's thinks), so
// its clientTime is at least k × interval, and the values rise. The
// datagrams are returned with clientTime 0, decoded and encoded again,
// their CRC with them; sequence ids and lengths are kept, and datagrams
// that do not decode (broken on purpose) are returned as they are.
func pingSeries(t *testing.T, prof udpwire.Profile, interval time.Duration, ds [][]byte) [][]byte {
	t.Helper()
	out := make([][]byte, len(ds))
	k, prev := 0, uint32(0)
	for i, b := range ds {
		var m udpwire.Message
		out[i] = b
		if err := (udpwire.Decoder{Profile: prof}).Decode(b, &m); err != nil || m.Type != udpwire.ClientPing {
			continue // a malformed datagram (malformed-mix's garbage) is compared as it is
		}
		if least := uint32(k) * uint32(interval/time.Microsecond); m.Value < least || m.Value < prev {
			t.Errorf("ping %d: clientTime %d µs, want at least %d (%d × %v) and no less than ping %d's %d", k, m.Value, least, k, interval, k-1, prev)
		}
		k, prev = k+1, m.Value
		m.Value = 0
		var err error
		if out[i], err = udpwire.Append(nil, prof, &m); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// resendsFolded drops each datagram that repeats the one before it byte
// for byte: a retry (it keeps its sequence id, TestRetriesKeepSequence),
// which one play makes and the other not when a reply is late on a busy
// machine (CI once saw the built-in play send an instance 2 datagrams and
// the script 3). What differs then is timing, not what is sent.
func resendsFolded(ds [][]byte) [][]byte {
	var out [][]byte
	for i, d := range ds {
		if i > 0 && bytes.Equal(d, ds[i-1]) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// pingInterval is the interval of flow f's ping series; f has at most one
// (pingSeries checks one series a play).
func pingInterval(t *testing.T, f *scenario.Flow) time.Duration {
	var iv []time.Duration
	for _, st := range f.Steps {
		if st.Kind == Ping {
			iv = append(iv, st.Params.(stepkit.Series).Interval)
		}
	}
	if len(iv) > 1 {
		t.Fatalf("flow %s has %d ping steps: pingSeries checks one series", f.Name, len(iv))
	}
	if len(iv) == 0 {
		return 0
	}
	return iv[0]
}

// TestBundledScripted: every flow of every bundled udp-lobby scenario,
// played by one session, sends the lobby and the instance the same
// datagrams, byte for byte, as its script in scenarios/testdata/scripted
// (but for a ping's clientTime, a clock: pingSeries checks it);
// bundled.Unscripted names the flows with none.
func TestBundledScripted(t *testing.T) {
	t.Parallel() // waits on its plays; compares bytes (TestMain)
	pairs := bundled.Pairs(t, udpwire.ProtocolName)
	if len(pairs) < 9 {
		t.Errorf("%d bundled udp-lobby flows with a script, want the 9 there are", len(pairs))
	}
	for _, pair := range pairs {
		t.Run(pair.Key, func(t *testing.T) {
			t.Parallel()
			// The two plays side by side (soak's player pings for 1 s).
			var a, b recorded
			t.Run("play", func(t *testing.T) {
				t.Run("built-in", func(t *testing.T) { t.Parallel(); a = playRecorded(t, pair.BuiltIn) })
				t.Run("scripted", func(t *testing.T) { t.Parallel(); b = playRecorded(t, pair.Scripted) })
			})
			if t.Failed() {
				return
			}
			prof := udpwire.ProfileSpec // the reference server's, which an auto client takes too
			iv := pingInterval(t, &pair.BuiltIn.Flows[0])
			bundled.Compare(t, "lobby datagrams", pingSeries(t, prof, iv, resendsFolded(a.lobby)), pingSeries(t, prof, iv, resendsFolded(b.lobby)))
			if len(a.instance)+len(b.instance) > 0 {
				bundled.Compare(t, "instance datagrams", pingSeries(t, prof, iv, resendsFolded(a.instance)), pingSeries(t, prof, iv, resendsFolded(b.instance)))
			}
		})
	}
}
