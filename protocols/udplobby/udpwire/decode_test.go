package udpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// raw builds a datagram with an explicit header and payload; payloadSize
// and originalSize default to len(payload) unless ps/os are >= 0.
func raw(p Profile, pt PacketType, mt MsgType, payload []byte, ps, orig int) []byte {
	h := Header{PacketType: pt, Type: mt, Seq: 0x0102, TickID: 0x0A0B0C0D,
		PayloadSize: uint16(len(payload)), OriginalSize: uint16(len(payload))}
	if ps >= 0 {
		h.PayloadSize = uint16(ps)
	}
	if orig >= 0 {
		h.OriginalSize = uint16(orig)
	}
	return AppendRaw(nil, p, h, payload)
}

func roomBytes(rooms ...Room) []byte { return MakeRoomList(nil, rooms).Bytes() }

func listPayload(count int, entries []byte) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(count)), entries...)
}

// lobbySystemList builds a room list in the Lobby System layout (udp-lobby.md §5): u32 roomCount, then
// u32 roomId, u16 port, u8 state, u32 playerCount, u32 maxPlayers.
func lobbySystemList(rooms ...Room) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(rooms)))
	for _, r := range rooms {
		b = binary.BigEndian.AppendUint32(b, r.ID)
		b = binary.BigEndian.AppendUint16(b, r.Port)
		b = append(b, byte(r.State))
		b = binary.BigEndian.AppendUint32(b, uint32(r.Players))
		b = binary.BigEndian.AppendUint32(b, uint32(r.MaxPlayers))
	}
	return b
}

// padded13 builds a room list whose entries are padded to 13 bytes.
func padded13(rooms ...Room) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(rooms)))
	for _, r := range rooms {
		b = appendRoom(b, r)
		b = append(b, 0, 0)
	}
	return b
}

func decodeErr(t *testing.T, d Decoder, b []byte) *Error {
	t.Helper()
	var m Message
	err := d.Decode(b, &m)
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *Error", err, err)
	}
	if msg := e.Error(); !strings.Contains(msg, string(e.Rule)) {
		t.Errorf("Error() %q does not name rule %s", msg, e.Rule)
	}
	return e
}

// TestDecodeRules has one row per way of breaking a rule; every rule in
// Rules must be covered by at least one row (checked at the end).
func TestDecodeRules(t *testing.T) {
	good := Room{ID: 1, Players: 1, MaxPlayers: 4, Port: 8081, State: Waiting}
	r3 := []Room{good, {ID: 2, Players: 0, MaxPlayers: 2, Port: 8082, State: Playing}, {ID: 3, Players: 2, MaxPlayers: 2, Port: 8083, State: Finished}}
	server := Decoder{Dir: ClientToServer, Channel: ChannelLobby}
	client := Decoder{Dir: ServerToClient, Channel: ChannelLobby}
	inst := Decoder{Dir: ServerToClient, Channel: ChannelInstance}
	type row struct {
		name   string
		d      Decoder // Profile is set per profile
		b      func(p Profile) []byte
		rule   RuleID
		diag   string
		index  int // expected Error.Index, -1 for none
		noHead bool
	}
	S, C := ClientToServer, ServerToClient
	rows := []row{
		{"empty datagram", server, func(p Profile) []byte { return nil }, RuleShort, "", -1, true},
		{"header only, no CRC", server, func(p Profile) []byte { b := AppendListRooms(nil, p, 1); return b[:len(b)-4] }, RuleShort, "", -1, true},
		{"payloadSize larger than payload", client, func(p Profile) []byte { return raw(p, C, LobbyJoinSuccess, []byte{0, 0, 0, 1, 0, 80}, 7, 7) }, RuleLength, "", -1, false},
		{"payloadSize smaller than payload", client, func(p Profile) []byte { return raw(p, C, LobbyJoinSuccess, []byte{0, 0, 0, 1, 0, 80}, 5, 5) }, RuleLength, "", -1, false},
		{"trailing byte after CRC", server, func(p Profile) []byte { return append(AppendListRooms(nil, p, 1), 0) }, RuleLength, "", -1, false},
		{"CRC flipped", server, func(p Profile) []byte { b := AppendListRooms(nil, p, 1); b[len(b)-1] ^= 0x80; return b }, RuleCRC, "", -1, false},
		{"CRC little-endian", server, func(p Profile) []byte {
			b := AppendJoinRoom(nil, p, 1, 5)
			c := b[len(b)-4:]
			c[0], c[1], c[2], c[3] = c[3], c[2], c[1], c[0]
			return b
		}, RuleCRC, "", -1, false},
		{"originalSize differs", server, func(p Profile) []byte { return raw(p, S, LobbyJoinRoom, []byte{0, 0, 0, 1}, -1, 0) }, RuleOriginalSize, "", -1, false},
		{"originalSize 0 with payload", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, listPayload(0, nil), -1, 0) }, RuleOriginalSize, "", -1, false},
		{"packetType 0", server, func(p Profile) []byte { return raw(p, 0, LobbyListRooms, nil, -1, -1) }, RulePacketType, "", -1, false},
		{"packetType 3", Decoder{}, func(p Profile) []byte { return raw(p, 3, LobbyListRooms, nil, -1, -1) }, RulePacketType, "", -1, false},
		{"server receives S→C", server, func(p Profile) []byte { return AppendJoinFailed(nil, p, 1) }, RuleDirection, "", -1, false},
		{"client receives C→S", client, func(p Profile) []byte { return AppendListRooms(nil, p, 1) }, RuleDirection, "", -1, false},
		{"instance client receives C→S", inst, func(p Profile) []byte { return AppendPing(nil, p, 1, 5) }, RuleDirection, "", -1, false},
		{"LIST_ROOMS carried S→C", Decoder{}, func(p Profile) []byte { return raw(p, C, LobbyListRooms, nil, -1, -1) }, RuleTypeDirection, "", -1, false},
		{"ROOM_LIST carried C→S", Decoder{}, func(p Profile) []byte { return raw(p, S, LobbyRoomList, listPayload(0, nil), -1, -1) }, RuleTypeDirection, "", -1, false},
		{"PONG carried C→S", Decoder{}, func(p Profile) []byte { return raw(p, S, ServerPong, []byte{0, 0, 0, 1}, -1, -1) }, RuleInstDirection, "", -1, false},
		{"unknown 0x47", server, func(p Profile) []byte { return raw(p, S, 0x47, nil, -1, -1) }, RuleTypeUnknown, "", -1, false},
		{"unknown 0x00", Decoder{}, func(p Profile) []byte { return raw(p, S, 0, nil, -1, -1) }, RuleTypeUnknown, "", -1, false},
		{"instance HELLO on lobby socket", server, func(p Profile) []byte { return raw(p, S, ClientHello, nil, -1, -1) }, RuleTypeUnknown, "", -1, false},
		{"lobby JOIN_SUCCESS on instance socket", inst, func(p Profile) []byte { return AppendJoinSuccess(nil, p, 1, 1, 8081) }, RuleInstTypeUnknown, "", -1, false},
		{"unknown 0x14 on instance socket", inst, func(p Profile) []byte { return raw(p, C, 0x14, nil, -1, -1) }, RuleInstTypeUnknown, "", -1, false},
		{"LIST_ROOMS with payload", server, func(p Profile) []byte { return raw(p, S, LobbyListRooms, []byte{0}, -1, -1) }, RulePayloadSize, "", -1, false},
		{"JOIN_ROOM short payload", server, func(p Profile) []byte { return raw(p, S, LobbyJoinRoom, []byte{0, 0, 1}, -1, -1) }, RulePayloadSize, "", -1, false},
		{"JOIN_ROOM long payload", server, func(p Profile) []byte { return raw(p, S, LobbyJoinRoom, []byte{0, 0, 0, 1, 0}, -1, -1) }, RulePayloadSize, "", -1, false},
		{"ROOM_CREATED without port", client, func(p Profile) []byte { return raw(p, C, LobbyRoomCreated, []byte{0, 0, 0, 1}, -1, -1) }, RulePayloadSize, "", -1, false},
		{"JOIN_FAILED with payload", client, func(p Profile) []byte { return raw(p, C, LobbyJoinFailed, []byte{1}, -1, -1) }, RulePayloadSize, "", -1, false},
		{"ROOM_LIST empty payload", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, nil, -1, -1) }, RulePayloadSize, "", -1, false},
		{"ROOM_LIST 1-byte payload", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, []byte{0}, -1, -1) }, RulePayloadSize, "", -1, false},
		{"PONG u8 payload", inst, func(p Profile) []byte { return raw(p, C, ServerPong, []byte{1}, -1, -1) }, RuleInstPayload, "", -1, false},
		{"COUNTDOWN_TICK u32 payload", inst, func(p Profile) []byte { return raw(p, C, ServerCountdownTick, []byte{0, 0, 0, 3}, -1, -1) }, RuleInstPayload, "", -1, false},
		{"HELLO with payload", inst, func(p Profile) []byte { return raw(p, C, ServerHello, []byte{0}, -1, -1) }, RuleInstPayload, "", -1, false},
		{"roomCount too high", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, listPayload(2, roomBytes(good)), -1, -1) }, RuleRoomListCount, "", -1, false},
		{"roomCount too low", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, listPayload(0, roomBytes(good)), -1, -1) }, RuleRoomListCount, "", -1, false},
		{"entries ragged", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, listPayload(1, roomBytes(good)[:10]), -1, -1) }, RuleRoomListCount, "", -1, false},
		{"Lobby System layout, 0 rooms", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, lobbySystemList(), -1, -1) }, RuleRoomListCount, DiagLobbySystem, -1, false},
		{"Lobby System layout, 1 room", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, lobbySystemList(good), -1, -1) }, RuleRoomListCount, DiagLobbySystem, -1, false},
		{"Lobby System layout, 3 rooms", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, lobbySystemList(r3...), -1, -1) }, RuleRoomListCount, DiagLobbySystem, -1, false},
		{"13-byte padded, 1 room", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, padded13(good), -1, -1) }, RuleRoomListCount, DiagPadded13, -1, false},
		{"13-byte padded, 3 rooms", client, func(p Profile) []byte { return raw(p, C, LobbyRoomList, padded13(r3...), -1, -1) }, RuleRoomListCount, DiagPadded13, -1, false},
		{"list entry roomId 0", client, func(p Profile) []byte {
			return raw(p, C, LobbyRoomList, listPayload(2, roomBytes(good, Room{ID: 0, MaxPlayers: 4, Port: 9})), -1, -1)
		}, RuleRoomID, "", 1, false},
		{"ROOM_CREATED roomId 0", client, func(p Profile) []byte { return AppendRoomCreated(nil, p, 1, 0, 8081) }, RuleRoomID, "", -1, false},
		{"JOIN_SUCCESS roomId 0", client, func(p Profile) []byte { return AppendJoinSuccess(nil, p, 1, 0, 8081) }, RuleRoomID, "", -1, false},
		{"JOIN_SUCCESS port 0", client, func(p Profile) []byte { return AppendJoinSuccess(nil, p, 1, 3, 0) }, RuleRoomPort, "", -1, false},
		{"ROOM_CREATED port 0", client, func(p Profile) []byte { return AppendRoomCreated(nil, p, 1, 3, 0) }, RuleRoomPort, "", -1, false},
		{"list entry port 0", client, func(p Profile) []byte {
			return raw(p, C, LobbyRoomList, listPayload(1, roomBytes(Room{ID: 5, MaxPlayers: 4})), -1, -1)
		}, RuleRoomPort, "", 0, false},
		{"list entry state 4", client, func(p Profile) []byte {
			return raw(p, C, LobbyRoomList, listPayload(3, roomBytes(good, good, Room{ID: 5, MaxPlayers: 4, Port: 1, State: 4})), -1, -1)
		}, RuleRoomState, "", 2, false},
		{"list entry state 0xFF", client, func(p Profile) []byte {
			return raw(p, C, LobbyRoomList, listPayload(1, roomBytes(Room{ID: 5, MaxPlayers: 4, Port: 1, State: 0xFF})), -1, -1)
		}, RuleRoomState, "", 0, false},
		{"list entry 5 of 4 players", client, func(p Profile) []byte {
			return raw(p, C, LobbyRoomList, listPayload(1, roomBytes(Room{ID: 5, Players: 5, MaxPlayers: 4, Port: 1})), -1, -1)
		}, RuleRoomPlayers, "", 0, false},
	}
	covered := map[RuleID]bool{}
	for _, p := range profiles {
		for _, tt := range rows {
			d := tt.d
			d.Profile = p
			e := decodeErr(t, d, tt.b(p))
			if e == nil {
				t.Errorf("%v %s: decoded, want %s", p, tt.name, tt.rule)
				continue
			}
			covered[e.Rule] = true
			if e.Rule != tt.rule || e.Diagnosis != tt.diag || e.Index != tt.index || e.HaveHeader == tt.noHead {
				t.Errorf("%v %s: got rule %s diag %q index %d header %v, want %s %q %d %v\n  %v",
					p, tt.name, e.Rule, e.Diagnosis, e.Index, e.HaveHeader, tt.rule, tt.diag, tt.index, !tt.noHead, e)
			}
			if e.HaveHeader && e.Header.Seq == 0 {
				t.Errorf("%v %s: header not reported: %+v", p, tt.name, e.Header)
			}
		}
	}
	// rtype17-only rules.
	r17 := func(name string, rule RuleID, mutate func(b []byte) []byte) {
		b := mutate(AppendListRooms(nil, ProfileRType17, 7))
		e := decodeErr(t, Decoder{Profile: ProfileRType17}, b)
		if e == nil || e.Rule != rule {
			t.Errorf("rtype17 %s: got %v, want %s", name, e, rule)
			return
		}
		covered[e.Rule] = true
	}
	r17("magic", RuleMagic, func(b []byte) []byte { b[0] = 0xA4; return b })
	r17("spec packet", RuleMagic, func([]byte) []byte { b, _ := AppendRoomList(nil, ProfileSpec, 1, []Room{good}); return b })
	r17("version 0", RuleVersion, func(b []byte) []byte { b[4] = 0; return b })
	r17("version 2", RuleVersion, func(b []byte) []byte { b[4] = 2; return b })
	r17("version 0x81 compressed", RuleCompressed, func([]byte) []byte {
		return AppendRaw(nil, ProfileRType17, Header{PacketType: 2, Type: LobbyRoomList, Compressed: true, Seq: 1, PayloadSize: 3, OriginalSize: 13}, []byte{1, 2, 3})
	})
	r17("compressed, sizes equal", RuleCompressed, func([]byte) []byte {
		return AppendRaw(nil, ProfileRType17, Header{PacketType: 1, Type: LobbyListRooms, Compressed: true, Seq: 1}, nil)
	})
	for _, r := range Rules {
		if !covered[r.ID] {
			t.Errorf("rule %s is not exercised by any row", r.ID)
		}
	}
}

// TestJoinRoomZeroDecodes documents the decision that a JOIN_ROOM for room 0
// is well formed (the server answers JOIN_FAILED), unlike replies naming room 0.
func TestJoinRoomZeroDecodes(t *testing.T) {
	for _, p := range profiles {
		var m Message
		if err := (Decoder{Profile: p, Dir: ClientToServer, Channel: ChannelLobby}).Decode(AppendJoinRoom(nil, p, 3, 0), &m); err != nil || m.RoomID != 0 || m.Type != LobbyJoinRoom {
			t.Errorf("%v: JOIN_ROOM(0) = %+v, %v", p, m, err)
		}
	}
}

// TestTruncation cuts every sample at every length: the decoder must say
// U-SHORT below header+CRC and U-LENGTH from there on.
func TestTruncation(t *testing.T) {
	for _, p := range profiles {
		for _, s := range samples() {
			b := mustAppend(t, p, &s.m)
			for n := 0; n < len(b); n++ {
				e := decodeErr(t, Decoder{Profile: p}, b[:n])
				want := RuleLength
				if n < p.Overhead() {
					want = RuleShort
				}
				if e == nil || e.Rule != want {
					t.Errorf("%v %s cut to %d: %v, want %s", p, s.name, n, e, want)
				}
			}
		}
	}
}

// TestBitFlips flips every bit of every sample: the decoder must reject each
// one, with U-LENGTH for the payloadSize field, U-MAGIC/U-VERSION for the
// rtype17 magic and version bits 0-6, and U-CRC everywhere else (header,
// payload, version bit 7 and the CRC itself).
func TestBitFlips(t *testing.T) {
	for _, p := range profiles {
		hl := p.HeaderLen()
		for _, s := range samples() {
			orig := mustAppend(t, p, &s.m)
			for i := 0; i < len(orig)*8; i++ {
				b := append([]byte(nil), orig...)
				b[i/8] ^= 1 << (i % 8)
				want := RuleCRC
				switch off := i / 8; {
				case p == ProfileRType17 && off < 4:
					want = RuleMagic
				case p == ProfileRType17 && off == 4 && i%8 != 7:
					want = RuleVersion
				case off == hl-4 || off == hl-3:
					want = RuleLength
				}
				e := decodeErr(t, Decoder{Profile: p}, b)
				if e == nil || e.Rule != want {
					t.Fatalf("%v %s bit %d flipped: %v, want %s", p, s.name, i, e, want)
				}
			}
		}
	}
}

// TestDecodeHeaderMatchesDecode: framing errors come from DecodeHeader alone.
func TestDecodeHeader(t *testing.T) {
	for _, p := range profiles {
		b := AppendRaw(nil, p, Header{PacketType: 1, Type: 0x99, Seq: 5, TickID: 6, PayloadSize: 1, OriginalSize: 1}, []byte{7})
		h, err := DecodeHeader(b, p)
		want := Header{PacketType: 1, Type: 0x99, Seq: 5, PayloadSize: 1, OriginalSize: 1}
		if p == ProfileRType17 {
			want.TickID = 6
		}
		if err != nil || h != want {
			t.Errorf("%v: DecodeHeader = %+v, %v; want %+v", p, h, err, want)
		}
	}
}

func TestRulesTable(t *testing.T) {
	seen := map[RuleID]bool{}
	for _, r := range Rules {
		if seen[r.ID] {
			t.Errorf("duplicate rule %s", r.ID)
		}
		seen[r.ID] = true
		if r.Summary == "" || r.Section == "" || r.ID.Describe() != r.Summary {
			t.Errorf("rule %s incomplete: %+v", r.ID, r)
		}
		if !strings.HasPrefix(string(r.ID), "U-") && !strings.HasPrefix(string(r.ID), "I-") {
			t.Errorf("rule %s lacks a U-/I- prefix", r.ID)
		}
	}
	if RuleID("X-NOPE").Describe() != "" {
		t.Error("Describe of an unknown id is not empty")
	}
}

func TestRuleOf(t *testing.T) {
	var m Message
	err := Decoder{}.Decode([]byte{1, 2, 3}, &m)
	if got := RuleOf(err); got != RuleShort {
		t.Errorf("RuleOf(%v) = %q, want %s", err, got, RuleShort)
	}
	if got := RuleOf(fmt.Errorf("wrapped: %w", err)); got != RuleShort {
		t.Errorf("RuleOf(wrapped) = %q", got)
	}
	if got := RuleOf(nil); got != "" {
		t.Errorf("RuleOf(nil) = %q", got)
	}
	if got := RuleOf(errors.New("x")); got != "" {
		t.Errorf("RuleOf(other) = %q", got)
	}
}
