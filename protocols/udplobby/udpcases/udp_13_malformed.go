package udpcases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §13 Error handling: malformed packets are silently dropped, and
// the server keeps serving. Every group sends its corpus (one socket per
// datagram, so a reply names the datagram that caused it), then a liveness
// check; replies that arrive until the check is answered (plus a grace of a
// few round trips) are failures, and a check left unanswered from two
// source addresses means the server crashed or hung.

const reqDropped = "Invalid packets are silently dropped … if (size < PacketHeader::kSize) { return; // Too small } if (!PacketHeader::verifyCrc(data, size)) { return; // CRC mismatch }"

func init() {
	groups := []struct {
		n      int
		desc   string
		req    string
		rule   string
		level  conformance.Level
		corpus func(p udpwire.Profile) []datagram
	}{
		{1, "requests truncated at every offset (0 … length-1) get no reply", reqDropped, string(udpwire.RuleShort) + ", " + string(udpwire.RuleLength), conformance.Must, corpusTruncated},
		{2, "requests with one flipped bit in the CRC trailer get no reply", "Always verify CRC32 before processing (§14): if (!PacketHeader::verifyCrc(data, size)) { … return; }", string(udpwire.RuleCRC), conformance.Must, corpusCRCFlip},
		{3, "requests with one flipped bit in the header (CRC left as it was) get no reply", "Always verify CRC32 before processing (§14)", string(udpwire.RuleCRC), conformance.Must, corpusHeaderFlip},
		{4, "requests with one flipped bit in the payload (CRC left as it was) get no reply", "Always verify CRC32 before processing (§14)", string(udpwire.RuleCRC), conformance.Must, corpusPayloadFlip},
		{5, "requests whose payloadSize disagrees with the datagram or the message type get no reply", "if (size != expectedSize) { // Malformed packet } (§14)", string(udpwire.RuleLength) + ", " + string(udpwire.RulePayloadSize), conformance.Must, corpusPayloadSize},
		{6, "oversized datagrams (1 KiB payload, 8 KiB junk, a 65507-byte datagram) get no reply", "if (size != expectedSize) { // Malformed packet } (§14)", string(udpwire.RulePayloadSize), conformance.Must, corpusOversized},
		{7, "wrong direction: requests sent as server→client, invalid packetType, replies sent to the lobby, get no reply", "Malformed packets (short, bad CRC, length or payloadSize wrong, unknown type, wrong direction) are dropped silently (udp-lobby.md §13)", string(udpwire.RuleDirection) + ", " + string(udpwire.RuleTypeDirection), conformance.Must, corpusDirection},
		{8, "unknown message types (and game-instance messages sent to the lobby) get no reply", "Malformed packets (… unknown type …) are dropped silently (udp-lobby.md §13)", string(udpwire.RuleTypeUnknown), conformance.Must, corpusUnknown},
		{9, "random bytes get no reply", reqDropped, "", conformance.Must, corpusRandom},
		{10, "originalSize ≠ payloadSize on an uncompressed request (or the LZ4 flag) gets no reply", "originalSize: Size before compression (same if not compressed); the documents do not say what a server does otherwise", string(udpwire.RuleOriginalSize), conformance.Should, corpusOriginalSize},
	}
	for _, g := range groups {
		addCase(&conformance.Case{
			ID: fmt.Sprintf("udp-lobby/13/%d", g.n), Protocol: ProtoUDP, Section: secMalformed, Rule: g.rule, Level: g.level,
			Phase: conformance.PhaseDestructive, Desc: g.desc, Requirement: g.req,
			Run: func(t *conformance.T) error { return malformedGroup(t, g.corpus(headerProfile(t.Env))) },
		})
	}
}

// datagram is one malformed datagram and what it is.
type datagram struct {
	note string
	b    []byte
}

func malformedGroup(t *conformance.T, corpus []datagram) error {
	// One reader per socket, blocked until the group is over, so that a
	// reply arriving at any time before then is seen.
	got := make([][]byte, len(corpus))
	var wg sync.WaitGroup
	socks := make([]*conformance.UDPSocket, 0, len(corpus))
	defer func() {
		for _, s := range socks {
			s.Close()
		}
	}()
	for i, d := range corpus {
		s, err := t.OpenUDP()
		if err != nil {
			return err
		}
		socks = append(socks, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 65536)
			n, src, err := s.Conn().ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			got[i] = append([]byte(nil), buf[:n]...)
			t.LogRecv(s.Local(), netip.AddrPortFrom(src.Addr().Unmap(), src.Port()).String(), got[i], "reply to "+d.note)
		}()
		if err := s.Send(t.Env.Addr, d.b, d.note); err != nil {
			return fmt.Errorf("send %s: %w", d.note, err)
		}
	}
	stop := func() {
		for _, s := range socks {
			s.Conn().SetReadDeadline(time.Now())
		}
		wg.Wait()
	}
	rtt, err := alive(t)
	if err != nil && !errors.Is(err, conformance.ErrSilence) {
		stop()
		return err // interrupted, or the suite's own trouble
	}
	if err != nil {
		stop()
		t.TargetDown(fmt.Sprintf("no answer to LOBBY_LIST_ROOMS after %d malformed datagrams", len(corpus)))
		return conformance.Failf("the lobby still answers LOBBY_LIST_ROOMS after the group",
			"no reply from two source addresses after %d malformed datagrams: the server crashed or hangs (%v)", len(corpus), err)
	}
	grace := 4 * rtt
	if grace < 100*time.Millisecond {
		grace = 100 * time.Millisecond
	}
	if grace > t.Env.Timeout {
		grace = t.Env.Timeout
	}
	err = t.Sleep(grace)
	stop()
	if err != nil {
		return err
	}
	var bad []string
	answered := 0
	for i, b := range got {
		if b == nil {
			continue
		}
		answered++
		if len(bad) < 8 {
			m, ok := parseRaw(b, headerProfile(t.Env))
			what := fmt.Sprintf("%d bytes", len(b))
			if ok {
				what = m.typ.String()
			}
			bad = append(bad, fmt.Sprintf("%s → %s", corpus[i].note, what))
		}
	}
	if answered > 0 {
		more := ""
		if answered > len(bad) {
			more = fmt.Sprintf("; … %d more", answered-len(bad))
		}
		return conformance.Failf("no reply to any malformed datagram", "%d of %d answered: %s%s", answered, len(corpus), strings.Join(bad, "; "), more)
	}
	t.Notef("%d datagrams, none answered; liveness check answered in %v", len(corpus), rtt.Round(time.Microsecond))
	return nil
}

// baseRequests returns one well-formed request of each type; JOIN targets
// a room id that does not exist, so that a server that wrongly accepts a
// damaged JOIN answers JOIN_FAILED rather than seating anyone.
func baseRequests(p udpwire.Profile) []datagram {
	return []datagram{
		{"LOBBY_LIST_ROOMS", udpwire.AppendListRooms(nil, p, 0x1301)},
		{"LOBBY_CREATE_ROOM", udpwire.AppendCreateRoom(nil, p, 0x1302)},
		{"LOBBY_JOIN_ROOM", udpwire.AppendJoinRoom(nil, p, 0x1303, 0x7FFFFFF1)},
	}
}

func corpusTruncated(p udpwire.Profile) []datagram {
	var out []datagram
	for _, r := range baseRequests(p) {
		for i := 0; i < len(r.b); i++ {
			out = append(out, datagram{fmt.Sprintf("%s truncated to %d of %d bytes", r.note, i, len(r.b)), r.b[:i:i]})
		}
	}
	return out
}

func flip(b []byte, bit int) []byte {
	c := append([]byte(nil), b...)
	c[bit/8] ^= 0x80 >> (bit % 8)
	return c
}

func corpusCRCFlip(p udpwire.Profile) []datagram {
	var out []datagram
	for _, r := range baseRequests(p) {
		end := len(r.b) - udpwire.CRCLen
		for _, bit := range []int{0, 7, 8, 15, 16, 23, 24, 31} {
			out = append(out, datagram{fmt.Sprintf("%s with CRC bit %d flipped", r.note, bit), flip(r.b, end*8+bit)})
		}
	}
	return out
}

func corpusHeaderFlip(p udpwire.Profile) []datagram {
	var out []datagram
	join := baseRequests(p)[2]
	for bit := 0; bit < p.HeaderLen()*8; bit++ {
		out = append(out, datagram{fmt.Sprintf("LOBBY_JOIN_ROOM with header bit %d (byte %d) flipped", bit, bit/8), flip(join.b, bit)})
	}
	if p == udpwire.ProfileRType17 {
		// Valid CRC, wrong magic or version.
		b := append([]byte(nil), join.b...)
		b[0] ^= 0xFF
		out = append(out, datagram{"LOBBY_JOIN_ROOM with a wrong magic (CRC recomputed)", recrc(b)})
		b = append([]byte(nil), join.b...)
		b[4] = 2
		out = append(out, datagram{"LOBBY_JOIN_ROOM with version 2 (CRC recomputed)", recrc(b)})
	}
	return out
}

func corpusPayloadFlip(p udpwire.Profile) []datagram {
	var out []datagram
	join := baseRequests(p)[2]
	hl := p.HeaderLen()
	for bit := 0; bit < 32; bit++ {
		out = append(out, datagram{fmt.Sprintf("LOBBY_JOIN_ROOM with roomId bit %d flipped", bit), flip(join.b, hl*8+bit)})
	}
	return out
}

// recrc rewrites the CRC trailer of b (a copy) to match its content.
func recrc(b []byte) []byte {
	c := append([]byte(nil), b...)
	end := len(c) - udpwire.CRCLen
	binary.BigEndian.PutUint32(c[end:], crc32.ChecksumIEEE(c[:end]))
	return c
}

// raw builds a datagram with the given header fields and payload and a
// matching CRC (udplobby.AppendRaw).
func raw(p udpwire.Profile, pt udpwire.PacketType, typ udpwire.MsgType, psize, osize uint16, payload []byte) []byte {
	return udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: pt, Type: typ, Seq: 0x1310, PayloadSize: psize, OriginalSize: osize}, payload)
}

func corpusPayloadSize(p udpwire.Profile) []datagram {
	c2s := udpwire.ClientToServer
	id := []byte{0x7F, 0xFF, 0xFF, 0xF1}
	out := []datagram{
		{"LOBBY_JOIN_ROOM with payloadSize 3 (datagram carries 4)", raw(p, c2s, udpwire.LobbyJoinRoom, 3, 3, id)},
		{"LOBBY_JOIN_ROOM with payloadSize 5 (datagram carries 4)", raw(p, c2s, udpwire.LobbyJoinRoom, 5, 5, id)},
		{"LOBBY_JOIN_ROOM with payloadSize 0 (datagram carries 4)", raw(p, c2s, udpwire.LobbyJoinRoom, 0, 0, id)},
		{"LOBBY_JOIN_ROOM with payloadSize 0xFFFF (datagram carries 4)", raw(p, c2s, udpwire.LobbyJoinRoom, 0xFFFF, 0xFFFF, id)},
		{"LOBBY_LIST_ROOMS with payloadSize 1 (datagram carries 0)", raw(p, c2s, udpwire.LobbyListRooms, 1, 1, nil)},
		{"LOBBY_LIST_ROOMS with payloadSize 4 (datagram carries 0)", raw(p, c2s, udpwire.LobbyListRooms, 4, 4, nil)},
		{"LOBBY_LIST_ROOMS with a 4-byte payload (sizes consistent, wrong for the type)", raw(p, c2s, udpwire.LobbyListRooms, 4, 4, id)},
		{"LOBBY_CREATE_ROOM with a 1-byte payload (sizes consistent)", raw(p, c2s, udpwire.LobbyCreateRoom, 1, 1, []byte{1})},
		{"LOBBY_JOIN_ROOM with a 2-byte payload (sizes consistent)", raw(p, c2s, udpwire.LobbyJoinRoom, 2, 2, id[:2])},
		{"LOBBY_JOIN_ROOM with an 8-byte payload (sizes consistent)", raw(p, c2s, udpwire.LobbyJoinRoom, 8, 8, append(append([]byte(nil), id...), id...))},
		{"LOBBY_JOIN_ROOM with no payload (sizes consistent)", raw(p, c2s, udpwire.LobbyJoinRoom, 0, 0, nil)},
	}
	// A well-framed JOIN followed by trailing bytes: the datagram is longer
	// than header + payloadSize + 4.
	j := udpwire.AppendJoinRoom(nil, p, 0x1311, 0x7FFFFFF1)
	out = append(out, datagram{"LOBBY_JOIN_ROOM followed by 4 trailing bytes", append(j, 0xDE, 0xAD, 0xBE, 0xEF)})
	return out
}

func corpusOversized(p udpwire.Profile) []datagram {
	rng := rand.New(rand.NewPCG(13, 6))
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	kib := make([]byte, 1024)
	maxLen := 65507 - p.Overhead() // the largest IPv4 UDP payload
	big := make([]byte, maxLen)
	c2s := udpwire.ClientToServer
	return []datagram{
		{"LOBBY_LIST_ROOMS with a 1024-byte payload (sizes consistent, CRC right)", raw(p, c2s, udpwire.LobbyListRooms, 1024, 1024, kib)},
		{"LOBBY_JOIN_ROOM with a 1024-byte payload (sizes consistent, CRC right)", raw(p, c2s, udpwire.LobbyJoinRoom, 1024, 1024, kib)},
		{"8192 random bytes", junk},
		{fmt.Sprintf("LOBBY_LIST_ROOMS of 65507 bytes (payloadSize %d, CRC right)", maxLen), raw(p, c2s, udpwire.LobbyListRooms, uint16(maxLen), uint16(maxLen), big)},
	}
}

func corpusDirection(p udpwire.Profile) []datagram {
	var out []datagram
	id := []byte{0x7F, 0xFF, 0xFF, 0xF1}
	reqs := []struct {
		t       udpwire.MsgType
		payload []byte
	}{{udpwire.LobbyListRooms, nil}, {udpwire.LobbyCreateRoom, nil}, {udpwire.LobbyJoinRoom, id}}
	for _, r := range reqs {
		for _, pt := range []udpwire.PacketType{udpwire.ServerToClient, 0x00, 0x03, 0xFF} {
			n := uint16(len(r.payload))
			out = append(out, datagram{fmt.Sprintf("%v with packetType 0x%02x", r.t, uint8(pt)), raw(p, pt, r.t, n, n, r.payload)})
		}
	}
	ref := []byte{0x00, 0x00, 0x00, 0x01, 0x1F, 0x91}
	replies := []struct {
		t       udpwire.MsgType
		payload []byte
	}{{udpwire.LobbyRoomList, []byte{0, 0}}, {udpwire.LobbyRoomCreated, ref}, {udpwire.LobbyJoinSuccess, ref}, {udpwire.LobbyJoinFailed, nil}}
	for _, r := range replies {
		for _, pt := range []udpwire.PacketType{udpwire.ServerToClient, udpwire.ClientToServer} {
			n := uint16(len(r.payload))
			out = append(out, datagram{fmt.Sprintf("%v (a reply) sent to the lobby with packetType 0x%02x", r.t, uint8(pt)), raw(p, pt, r.t, n, n, r.payload)})
		}
	}
	return out
}

func corpusUnknown(p udpwire.Profile) []datagram {
	var out []datagram
	for _, mt := range []udpwire.MsgType{0x00, 0x3F, 0x47, 0x4F, 0x80, 0xFF} {
		out = append(out, datagram{fmt.Sprintf("messageType 0x%02x", uint8(mt)), raw(p, udpwire.ClientToServer, mt, 0, 0, nil)})
		out = append(out, datagram{fmt.Sprintf("messageType 0x%02x with a 4-byte payload", uint8(mt)), raw(p, udpwire.ClientToServer, mt, 4, 4, []byte{0, 0, 0, 1})})
	}
	hello, _ := udpwire.AppendEmpty(nil, p, udpwire.ClientHello, 0x1312)
	join, _ := udpwire.AppendEmpty(nil, p, udpwire.ClientJoinRequest, 0x1313)
	out = append(out,
		datagram{"CLIENT_HELLO (a game-instance message) sent to the lobby", hello},
		datagram{"CLIENT_JOIN_REQUEST (a game-instance message) sent to the lobby", join},
		datagram{"CLIENT_PING (a game-instance message) sent to the lobby", udpwire.AppendPing(nil, p, 0x1314, 42)},
	)
	return out
}

func corpusRandom(p udpwire.Profile) []datagram {
	rng := rand.New(rand.NewPCG(2026, 13))
	var out []datagram
	for len(out) < 32 {
		b := make([]byte, 1+rng.IntN(80))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if _, ok := udpwire.GuessProfile(b); ok {
			continue // astronomically unlikely: a valid frame
		}
		out = append(out, datagram{fmt.Sprintf("%d random bytes", len(b)), b})
	}
	return out
}

func corpusOriginalSize(p udpwire.Profile) []datagram {
	c2s := udpwire.ClientToServer
	id := []byte{0x7F, 0xFF, 0xFF, 0xF1}
	out := []datagram{
		{"LOBBY_LIST_ROOMS with originalSize 1", raw(p, c2s, udpwire.LobbyListRooms, 0, 1, nil)},
		{"LOBBY_JOIN_ROOM with originalSize 0", raw(p, c2s, udpwire.LobbyJoinRoom, 4, 0, id)},
		{"LOBBY_JOIN_ROOM with originalSize 8", raw(p, c2s, udpwire.LobbyJoinRoom, 4, 8, id)},
	}
	if p == udpwire.ProfileRType17 {
		b := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: c2s, Type: udpwire.LobbyJoinRoom, Seq: 0x1315, Compressed: true, PayloadSize: 4, OriginalSize: 4}, id)
		out = append(out, datagram{"LOBBY_JOIN_ROOM with the LZ4 flag set (payload not compressed)", b})
	}
	return out
}
