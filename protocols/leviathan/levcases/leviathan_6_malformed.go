package levcases

import (
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// Malformed packets on an authenticated connection: each is dropped, and
// neither the connection nor the server dies. PKT_IDs of the malformed packets are far
// from the session's own, so their acks (if any) do not disturb it.

func init() {
	corpus := []struct {
		desc string
		rule lv.Rule
		b    []byte
	}{
		{"bad magic (packet type 0x4C6F)", lv.RuleBadType, append([]byte{0x4c, 0x6f}, lv.AppendNormalHeader(nil, 900001, 0, nil, 0)[2:]...)},
		{"truncated ack field (4 ack bytes announced, 2 present)", lv.RuleAckTruncated, lv.AppendNormalHeader(nil, 900002, 1001, []byte{1, 0, 0, 1}, 0)[:13]},
		{"ack byte count 0 with StartAck != 0", lv.RuleAckCount, lv.AppendNormalHeader(nil, 900003, 1001, nil, 0)},
		{"ack byte count 5 (> 4)", lv.RuleAckCount, lv.AppendNormalHeader(nil, 900004, 1001, []byte{1, 0, 0, 0, 1}, 0)},
		{"trailing bytes after the last message", lv.RuleTrailing, append(lv.AppendNormalHeader(nil, 900005, 0, nil, 0), 0xde, 0xad, 0xbe)},
	}
	for i, m := range corpus {
		addCase(&conformance.Case{
			ID: fmt.Sprintf("leviathan/6/%d", i+1), Protocol: ProtoLeviathan, Section: secLevMalformed, Level: conformance.Must,
			Phase: conformance.PhaseDestructive, Rule: string(m.rule),
			Desc:        m.desc + ": the connection keeps answering Echo and the server stays up",
			Requirement: "malformed packets (bad magic, truncated ack field, ack count 0 and > 4, trailing bytes) dropped without killing the connection or the server",
			Run: func(t *conformance.T) error {
				c, err := levAuthed(t)
				if err != nil {
					return err
				}
				defer c.close()
				if err := c.d.WriteRaw(m.b); err != nil {
					return err
				}
				n, r, err := c.request(lv.ReqEcho, nil, lv.ResNone)
				if err == nil && r.ResponseType() == lv.ResNone {
					return nil
				}
				if err != nil && !errors.Is(err, conformance.ErrSilence) {
					return err
				}
				// Is it the connection or the whole server?
				fresh, ferr := levDial(t, levconn.Config{})
				if ferr != nil {
					return ferr
				}
				defer fresh.Close()
				if herr := fresh.handshake(); herr != nil {
					t.TargetDown("no handshake answered after a malformed packet (" + m.desc + ")")
					return conformance.Failf("the server still up", "a new connection's handshake failed after the malformed packet: %v", herr)
				}
				return conformance.Failf("Response None to Echo #"+fmt.Sprint(n), "the connection stopped answering after the malformed packet (got %v, %v)", r, err)
			},
		})
	}
}
