package levcases

import (
	"errors"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// The engine's known defects (leviathan.md
// §Q Engine defects): warnings with an explanation, never failures.

func init() {
	addCase(&conformance.Case{
		ID: "leviathan/Q/1", Protocol: ProtoLeviathan, Section: secLevQuirks, Level: conformance.Should,
		Desc:        "ack-only datagrams are clean La packets, not the previous Ln packet with the La section appended",
		Requirement: "its ack-only datagram carries the previous Ln packet's bytes in front of the La section (an engine defect)",
		Run: func(t *conformance.T) error {
			a, err := levAcksFixture(t)
			if err != nil {
				return err
			}
			if a.embedded > 0 {
				return conformance.Warnf("clean La packets", "%d ack-only datagrams were an Ln packet followed by an La section: the engine's defect. A peer that reads only the first packet re-reads the stale Ln (a duplicate it must suppress) and may miss the acks", a.embedded)
			}
			return nil
		},
	})
	addCase(&conformance.Case{
		ID: "leviathan/Q/2", Protocol: ProtoLeviathan, Section: secLevQuirks, Level: conformance.Should,
		Desc:        "after the client's CloseConnection the connection is released: requests on it are no longer answered",
		Requirement: "CloseConnection is never actually sent (an engine defect): the engine closes without telling its peer; a server must at least honour the client's CloseConnection",
		Run: func(t *conformance.T) error {
			c, err := levAuthed(t)
			if err != nil {
				return err
			}
			defer c.Close()
			c.d.SendResponse(0, lv.ResCloseConnection, 0, nil)
			if err := c.pump(300 * time.Millisecond); err != nil {
				return err
			}
			c.d.SendRequest(2, lv.ReqEcho, nil)
			m, err := c.await(func(m *lv.Message) bool { return m.Kind == lv.KindResponse }, t.Env.Timeout)
			if errors.Is(err, conformance.ErrSilence) {
				return nil
			}
			if err != nil {
				return err
			}
			return conformance.Warnf("no reply after CloseConnection", "%v: the connection outlived the client's CloseConnection", m)
		},
	})
}
