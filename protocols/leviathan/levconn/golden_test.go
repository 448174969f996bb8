package levconn

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// TestGoldenExchange scripts a handshake between two engines on a virtual
// clock, losing chosen datagrams, and compares every datagram byte for
// byte with testdata/exchange.golden (refresh with -update). It pins PKT_ID
// and MessageNumber sequencing, piggybacked and La acks, the resend of a
// lost Critical message and the duplicate suppressed after a lost ack.
func TestGoldenExchange(t *testing.T) {
	cfg := Config{}
	a, b := newConn(t, cfg), newConn(t, cfg)
	var out bytes.Buffer
	now := t0
	n := 0
	// lose lists the datagram numbers (1-based, both directions) dropped.
	lose := map[int]bool{3: true, 6: true}
	deliver := func(from, to string, src, dst *Conn) {
		for dg := src.Poll(now); dg != nil; dg = src.Poll(now) {
			n++
			var p levwire.Packet
			levwire.Decode(&p, dg, levwire.Strict)
			desc := p.Type.String()
			if p.Type == levwire.TypeNormal {
				desc += fmt.Sprintf(" #%d", p.ID)
				if p.StartAck != 0 {
					desc += fmt.Sprintf(" acks %v", p.AckedIDs(nil, levwire.AckEngine))
				}
				for _, m := range p.Messages {
					desc += " [" + m.String() + "]"
				}
			} else {
				desc += fmt.Sprintf(" %v", p.AckIDs)
			}
			lost := ""
			if lose[n] {
				lost = " LOST"
			}
			fmt.Fprintf(&out, "%2d +%5dms %s % x  %s%s\n", n, now.Sub(t0).Milliseconds(), from, dg, desc, lost)
			if !lose[n] {
				dst.Receive(now, dg)
				for _, e := range dst.Events() {
					if e.Kind == EventMessage || e.Kind == EventDuplicate {
						fmt.Fprintf(&out, "             %s event %v %v\n", to, e.Kind, e.Msg)
					} else {
						fmt.Fprintf(&out, "             %s event %v #%d (%d transmissions)\n", to, e.Kind, e.Number, e.Transmissions)
					}
					// B answers every new request, as an endpoint would.
					if dst == b && e.Kind == EventMessage && e.Msg.Kind == levwire.KindRequest {
						b.SendResponse(now, Critical, levwire.ResNone, e.Msg.Number, nil)
					}
				}
			}
		}
	}
	step := func(d time.Duration) {
		now = now.Add(d)
		for _, c := range []struct {
			name string
			c    *Conn
		}{{"A", a}, {"B", b}} {
			c.c.Tick(now)
			for _, e := range c.c.Events() {
				fmt.Fprintf(&out, "             %s event %v #%d (%d transmissions)\n", c.name, e.Kind, e.Number, e.Transmissions)
			}
		}
		deliver("A→B", "B", a, b)
		deliver("B→A", "A", b, a)
		deliver("A→B", "B", a, b)
	}
	// 1 A Connect; 2 B's reply acks 1001 (piggybacked).
	a.SendRequest(now, Critical, levwire.ReqConnect, connect())
	step(0)
	// 3 A Security (acking B's 1001) is LOST; A resends it after LostAfter
	// with a new PKT_ID; B replies. B's reply 6 is LOST too: its ack of
	// A's 1004 comes back to B's pending list and goes out in an La
	// packet, and B resends the reply.
	a.SendRequest(now, Critical, levwire.ReqSecurity, levwire.SecurityRequest{SecureType: 1}.Append(nil))
	step(ms(1))
	for i := 0; i < 30; i++ {
		step(ms(100))
	}
	golden.Check(t, filepath.Join("testdata", "exchange.golden"), out.Bytes())
}
