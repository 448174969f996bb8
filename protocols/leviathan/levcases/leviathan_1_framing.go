package levcases

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/lobbybench/lobbybench/conformance"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// leviathan.md §1 framing and sizes, on every datagram of the group's shared
// session (lev-flow fixture).

func init() {
	addCase(&conformance.Case{
		ID: "leviathan/1/1", Protocol: ProtoLeviathan, Section: secLevFraming, Level: conformance.Must,
		Desc:        "every datagram the server sends is an Ln or La packet that decodes (lenient, as the engine reads)",
		Requirement: "One packet per UDP datagram, at most 65507 bytes … Normal packet, type 0x4C6E (\"Ln\") … Ack-only packet, type 0x4C61 (\"La\")",
		Run:         runLev1_1,
	})
	addCase(&conformance.Case{
		ID: "leviathan/1/2", Protocol: ProtoLeviathan, Section: secLevFraming, Level: conformance.Should,
		Rule:        "L-ACK-COUNT, L-ACK-ZERO-TAIL, L-LA-COUNT, L-TRAILING, L-MSG-NUM-ZERO",
		Desc:        "every datagram also decodes strictly: 1-4 ack bytes without a zero last byte, La Count 1-4, no trailing bytes, MessageNumber ≠ 0, defined enum values",
		Requirement: "The engine sends at most 4 ack bytes (32 ids) and drops trailing zero bytes … The packet format page says Count is 1 to 4 … bytes after the last decodable message are ignored",
		Run:         runLev1_2,
	})
	addCase(&conformance.Case{
		ID: "leviathan/1/3", Protocol: ProtoLeviathan, Section: secLevFraming, Level: conformance.Must,
		Desc:        "PKT_IDs are never 0 and grow by one per Ln datagram sent, resends included",
		Requirement: "PKT_ID grows by one for every datagram sent, resends included. The engine's first id is 1001 (the packet format page says 1; 0 is invalid either way)",
		Run:         runLev1_3,
	})
	addCase(&conformance.Case{
		ID: "leviathan/1/4", Protocol: ProtoLeviathan, Section: secLevFraming, Level: conformance.Should,
		Desc:        "the server's MessageNumbers start at 1 and increase (shared by requests and responses; a resend keeps its number)",
		Requirement: "MessageNumber: one counter per connection and direction, shared by requests and responses, starting at 1. A resend keeps its MessageNumber",
		Run:         runLev1_4,
	})
}

func runLev1_1(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	var p lv.Packet
	for i, b := range f.raw {
		if err := lv.Decode(&p, b, lv.Lenient); err != nil {
			return conformance.Failf("a decodable Ln/La packet", "datagram %d (% x): %v", i+1, head(b), err)
		}
	}
	if len(f.raw) == 0 {
		return conformance.Skipf("no datagram received")
	}
	t.Notef("%d datagrams checked", len(f.raw))
	return nil
}

func runLev1_2(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	var p lv.Packet
	for i, b := range f.raw {
		if err := lv.Decode(&p, b, lv.Strict); err != nil {
			var le *lv.Error
			if errors.As(err, &le) && le.Rule == lv.RuleTrailing && p.EmbeddedAckOnly() {
				continue // the engine's Ln-in-front-of-La defect: leviathan/Q/1 reports it
			}
			return conformance.Warnf("strictly well-formed packets", "datagram %d (% x): %v", i+1, head(b), err)
		}
	}
	return nil
}

func runLev1_3(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	var ids []uint32
	var p lv.Packet
	var lns [][]byte
	for _, b := range f.raw {
		if lv.Decode(&p, b, lv.Lenient) == nil && p.EmbeddedAckOnly() || staleCopy(lns, b) {
			continue // a stale Ln in front of an La section: leviathan/Q/1 owns it
		}
		lns = append(lns, b)
		if len(b) >= 6 && lv.PacketType(binary.BigEndian.Uint16(b)) == lv.TypeNormal {
			ids = append(ids, binary.BigEndian.Uint32(b[2:]))
		}
	}
	if len(ids) == 0 {
		return conformance.Skipf("no Ln datagram received")
	}
	t.Notef("first PKT_ID %d (engine 1001, seed 1)", ids[0])
	for i, id := range ids {
		if id == 0 {
			return conformance.Failf("PKT_ID != 0", "Ln datagram %d has PKT_ID 0", i+1)
		}
		// Loopback may still drop; a gap is not a failure, a step back is.
		if i > 0 && id <= ids[i-1] {
			return conformance.Failf("increasing PKT_IDs", "PKT_ID %d after %d", id, ids[i-1])
		}
	}
	return nil
}

func runLev1_4(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	if len(f.msgs) == 0 {
		return conformance.Skipf("no message received")
	}
	if f.msgs[0].Number != 1 {
		return conformance.Warnf("first MessageNumber 1", "first message %v", f.msgs[0])
	}
	for i := 1; i < len(f.msgs); i++ {
		if f.msgs[i].Number <= f.msgs[i-1].Number {
			return conformance.Warnf("increasing MessageNumbers", "%v after %v", f.msgs[i], f.msgs[i-1])
		}
	}
	return nil
}

// head returns at most the first 32 bytes of b, for messages.
func head(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

// staleCopy reports whether b starts with one of the earlier Ln datagrams
// and carries more after it: the engine's ack-only datagram, whose stale
// Ln bytes may not decode with the La after them (leviathan/Q/1 owns it).
func staleCopy(earlier [][]byte, b []byte) bool {
	for _, e := range earlier {
		if len(b) > len(e) && bytes.Equal(b[:len(e)], e) {
			return true
		}
	}
	return false
}
