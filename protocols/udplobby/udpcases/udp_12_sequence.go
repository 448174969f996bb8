package udpcases

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §12 Sequence numbers.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/12/1", Protocol: ProtoUDP, Section: secSequence, Rule: "U-SEQ", Level: conformance.Must,
		Desc:        "every lobby reply echoes the request's sequenceId (including 0 and 0xFFFF)",
		Requirement: "// Echo client's sequence in response: auto packet = buildRoomListPacket(rooms, hdr.sequence);",
		Run:         udpSequenceEcho,
	})
}

func udpSequenceEcho(t *conformance.T) error {
	rs, err := replies(t)
	if err != nil {
		return err
	}
	type check struct {
		name string
		x    *exchange
	}
	var checks []check
	for _, x := range rs.all() {
		checks = append(checks, check(x))
	}
	prof := headerProfile(t.Env)
	for _, seq := range []uint16{0, 0xFFFF} {
		s, err := t.OpenUDP()
		if err != nil {
			return err
		}
		req := udpwire.AppendListRooms(nil, prof, seq)
		if err := s.Send(t.Env.Addr, req, fmt.Sprintf("LOBBY_LIST_ROOMS seq %d", seq)); err != nil {
			s.Close()
			return err
		}
		name := fmt.Sprintf("LOBBY_LIST_ROOMS seq %d", seq)
		m, err := recvMessage(t, s, t.Env.Addr, name)
		s.Close()
		if err != nil {
			continue // a lost reply is udp-lobby/4/1's business, junk udp-lobby/3/5's
		}
		checks = append(checks, check{name, &exchange{seq: seq, req: req, reply: m}})
	}
	if len(checks) == 0 {
		return conformance.Skipf("no lobby reply to look at")
	}
	var bad []string
	for _, p := range checks {
		if p.x.reply.seq != p.x.seq {
			bad = append(bad, fmt.Sprintf("%s: sent %d (0x%04x), reply %v carries %d (0x%04x)", p.name, p.x.seq, p.x.seq, p.x.reply.typ, p.x.reply.seq, p.x.reply.seq))
		}
	}
	if len(bad) > 0 {
		return conformance.Fail("the request's sequenceId in every reply", strings.Join(bad, "; "))
	}
	t.Notef("%d replies checked", len(checks))
	return nil
}
