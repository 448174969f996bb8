package levcases

import (
	"errors"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// The other half of the ack bit order: how the server reads the client's
// ack fields.

func init() {
	addCase(&conformance.Case{
		ID: "leviathan/4/6", Protocol: ProtoLeviathan, Section: secLevAcks, Level: conformance.Should,
		Desc:        "the server reads ack fields in the engine's bit order: a Critical reply acked by bit 0 of an Ln ack field starting at its PKT_ID is not resent",
		Requirement: "Ack bits: bit b (least significant first) of ack byte i acknowledges packet StartAck + 8*i + b … the engine and its tests use no +1",
		Run: func(t *conformance.T) error {
			s, err := t.OpenUDP()
			if err != nil {
				return err
			}
			defer s.Close()
			b := lv.AppendNormalHeader(nil, lv.FirstPacketID, 0, nil, 1)
			b = lv.AppendRequestHeader(b, 1, lv.ReqConnect)
			b = lv.Connect{CheckValue: lv.CheckValue}.Append(b)
			if err := s.Send(t.Env.Addr, b, "Connect #1"); err != nil {
				return err
			}
			var p lv.Packet
			var replyID uint32
			deadline := time.Now().Add(t.Env.Timeout)
			for replyID == 0 {
				r, err := s.Recv(t.Env.Addr, time.Until(deadline))
				if errors.Is(err, conformance.ErrSilence) {
					return conformance.Skipf("Connect(42) not answered (leviathan/2/1)")
				}
				if err != nil {
					return err
				}
				if lv.Decode(&p, r, lv.Lenient) != nil || p.EmbeddedAckOnly() {
					continue
				}
				for _, m := range p.Messages {
					if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResConnect && m.ResponseTo == 1 {
						replyID = p.ID
					}
				}
			}
			// Ack it in an Ln packet only (no La): StartAck = its id, bit 0.
			ack := lv.AppendNormalHeader(nil, lv.FirstPacketID+1, replyID, []byte{1}, 1)
			ack = lv.AppendRequestHeader(ack, 2, lv.ReqSecurity)
			ack = lv.SecurityRequest{SecureType: lv.SecureTypeNone}.Append(ack)
			if err := s.Send(t.Env.Addr, ack, "Security #2, acking the reply in engine order"); err != nil {
				return err
			}
			resent := 0
			var ids []uint32
			deadline = time.Now().Add(2500 * time.Millisecond) // the engine resends after 1 s
			for time.Now().Before(deadline) {
				r, err := s.Recv(t.Env.Addr, time.Until(deadline))
				if errors.Is(err, conformance.ErrSilence) {
					break
				}
				if err != nil {
					return err
				}
				if lv.Decode(&p, r, lv.Lenient) != nil || p.EmbeddedAckOnly() || p.Type != lv.TypeNormal {
					continue
				}
				ids = append(ids, p.ID)
				for _, m := range p.Messages {
					if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResConnect && m.ResponseTo == 1 {
						resent++
					}
				}
			}
			// Leave cleanly: ack what came and close.
			la, _ := lv.AppendAckOnly(nil, ids[:min(len(ids), 4)])
			s.Send(t.Env.Addr, la, "ack")
			bye := append(lv.AppendNormalHeader(nil, lv.FirstPacketID+2, 0, nil, 1), lv.AppendResponseHeader(nil, 3, lv.ResCloseConnection, 0)...)
			s.Send(t.Env.Addr, bye, "CloseConnection")
			t.Notef("meaningful only when the server resends unacked replies (leviathan/4/3)")
			if resent > 0 {
				return conformance.Warnf("no resend of an acked reply", "Response Connect resent %d times after the client acked PKT_ID %d with StartAck %d, bits 01: the server does not read the engine's bit order (under the seed's +1 that bit acks %d)", resent, replyID, replyID, replyID+1)
			}
			return nil
		},
	})
}
