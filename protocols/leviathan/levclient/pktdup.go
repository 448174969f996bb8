package levclient

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// seenLn is how many of the last Ln datagrams a connection remembers to
// tell a byte-for-byte copy (RulePktDup). A copy sent twice
// arrives right behind its original, so a short window does; every
// Leviathan client carries it.
const seenLn = 16

// lnSeen remembers the last seenLn Ln datagrams received on a connection,
// each as its PKT_ID and the CRC-32 of its bytes, so that one sent twice
// is recognised: a resend takes a new PKT_ID (leviathan.md §1.1), so the
// same PKT_ID and bytes again is the server (or its proxy) sending one
// datagram twice.
type lnSeen struct {
	keys [seenLn]uint64 // PKT_ID<<32 | CRC-32; 0: empty (PKT_ID 0 is never remembered)
	next int
}

// copyOf records Ln datagram b and reports whether it repeats one
// remembered, byte for byte. Datagrams that are no Ln packet are not
// remembered.
func (s *lnSeen) copyOf(b []byte) (id uint32, dup bool) {
	if len(b) < 6 || lv.PacketType(binary.BigEndian.Uint16(b)) != lv.TypeNormal {
		return 0, false
	}
	id = binary.BigEndian.Uint32(b[2:])
	if id == 0 {
		return 0, false
	}
	key := uint64(id)<<32 | uint64(crc32.ChecksumIEEE(b))
	for _, k := range s.keys {
		if k == key {
			return id, true
		}
	}
	s.keys[s.next] = key
	s.next = (s.next + 1) % seenLn
	return id, false
}

// received judges a datagram as it is read from the socket, before the
// scenario's impairment (whose copies are the harness's own): a
// byte-for-byte copy of an Ln datagram already received is
// RulePktDup, unless it is the engine's ack-only datagram
// (the previous Ln packet with an La section after it, sent twice:
// leviathan.md §Q, owned by leviathan/Q/1).
func (l *link) received(b []byte) {
	l.io.Received(len(b))
	id, dup := l.seen.copyOf(b)
	if !dup {
		return
	}
	var p lv.Packet
	if lv.Decode(&p, b, lv.Lenient) != nil || p.EmbeddedAckOnly() {
		return
	}
	l.rec.Violation(RulePktDup, time.Now(), b, nil, fmt.Sprintf("Ln PKT_ID %d received twice, byte for byte (%d bytes): a resend takes a new PKT_ID", id, len(b)))
}
