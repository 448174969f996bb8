package udpwire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
)

// sample is one message of every type with recognisable field values.
type sample struct {
	name string
	m    Message
	size int // expected total size in the spec profile (udp-lobby.md §4-10)
}

func sampleRooms() []Room {
	return []Room{
		{ID: 1, Players: 0, MaxPlayers: 4, Port: 8081, State: Waiting},
		{ID: 2, Players: 3, MaxPlayers: 4, Port: 8082, State: Countdown},
		{ID: 0x01020304, Players: 4, MaxPlayers: 4, Port: 0xFFFF, State: Playing},
		{ID: 0xFFFFFFFF, Players: 2, MaxPlayers: 0xFFFF, Port: 9000, State: Finished},
	}
}

func samples() []sample {
	msg := func(t MsgType, seq uint16) Message {
		return Message{Header: Header{PacketType: t.Dir(), Type: t, Seq: seq}}
	}
	with := func(m Message, f func(*Message)) Message { f(&m); return m }
	return []sample{
		{"LOBBY_LIST_ROOMS", msg(LobbyListRooms, 1), 12},
		{"LOBBY_ROOM_LIST_empty", msg(LobbyRoomList, 2), 14},
		{"LOBBY_ROOM_LIST_1", with(msg(LobbyRoomList, 3), func(m *Message) { m.Rooms = MakeRoomList(nil, sampleRooms()[:1]) }), 14 + 11},
		{"LOBBY_ROOM_LIST_4", with(msg(LobbyRoomList, 0xFFFF), func(m *Message) { m.Rooms = MakeRoomList(nil, sampleRooms()) }), 14 + 44},
		{"LOBBY_CREATE_ROOM", msg(LobbyCreateRoom, 4), 12},
		{"LOBBY_ROOM_CREATED", with(msg(LobbyRoomCreated, 5), func(m *Message) { m.RoomID, m.Port = 7, 8088 }), 18},
		{"LOBBY_JOIN_ROOM", with(msg(LobbyJoinRoom, 6), func(m *Message) { m.RoomID = 42 }), 16},
		{"LOBBY_JOIN_ROOM_id0", with(msg(LobbyJoinRoom, 6), func(m *Message) { m.RoomID = 0 }), 16},
		{"LOBBY_JOIN_SUCCESS", with(msg(LobbyJoinSuccess, 0x1234), func(m *Message) { m.RoomID, m.Port = 7, 8088 }), 18},
		{"LOBBY_JOIN_FAILED", msg(LobbyJoinFailed, 8), 12},
		{"CLIENT_HELLO", msg(ClientHello, 10), 12},
		{"CLIENT_JOIN_REQUEST", msg(ClientJoinRequest, 11), 12},
		{"CLIENT_READY", msg(ClientReady, 12), 12},
		{"CLIENT_PING", with(msg(ClientPing, 13), func(m *Message) { m.Value = 0xDEADBEEF }), 16},
		{"CLIENT_DISCONNECT", with(msg(ClientDisconnect, 14), func(m *Message) { m.Value = 3 }), 13},
		{"SERVER_HELLO", msg(ServerHello, 10), 12},
		{"SERVER_JOIN_ACCEPT", msg(ServerJoinAccept, 11), 12},
		{"SERVER_JOIN_DENY", msg(ServerJoinDeny, 11), 12},
		{"SERVER_PONG", with(msg(ServerPong, 13), func(m *Message) { m.Value = 0xDEADBEEF }), 16},
		{"SERVER_GAME_START", msg(ServerGameStart, 15), 12},
		{"SERVER_GAME_END", with(msg(ServerGameEnd, 16), func(m *Message) { m.Value = 2 }), 16},
		{"SERVER_DISCONNECT", with(msg(ServerDisconnect, 17), func(m *Message) { m.Value = 0xFF }), 13},
		{"SERVER_PLAYER_DISCONNECTED", with(msg(ServerPlayerDisconnected, 18), func(m *Message) { m.Value = 99 }), 16},
		{"SERVER_ALL_READY", msg(ServerAllReady, 19), 12},
		{"SERVER_COUNTDOWN_TICK", with(msg(ServerCountdownTick, 20), func(m *Message) { m.Value = 3 }), 13},
	}
}

var profiles = []Profile{ProfileSpec, ProfileRType17}

func mustAppend(t testing.TB, p Profile, m *Message) []byte {
	t.Helper()
	b, err := Append(nil, p, m)
	if err != nil {
		t.Fatalf("Append(%v, %v): %v", p, m.Type, err)
	}
	return b
}

// TestSamplesCoverEveryType makes sure the golden set has every message.
func TestSamplesCoverEveryType(t *testing.T) {
	seen := map[MsgType]bool{}
	for _, s := range samples() {
		seen[s.m.Type] = true
	}
	for _, mt := range MsgTypes {
		if !seen[mt] {
			t.Errorf("no sample for %v", mt)
		}
	}
	if len(MsgTypes) != 7+15 {
		t.Errorf("MsgTypes has %d types, want 22", len(MsgTypes))
	}
}

// TestGolden encodes every sample in both profiles, checks its size against
// the packet formats of udp-lobby.md (entries of 11 bytes) and the bytes against
// testdata/<profile>.golden.
func TestGolden(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.String(), func(t *testing.T) {
			var out strings.Builder
			for _, s := range samples() {
				b := mustAppend(t, p, &s.m)
				if want := s.size + p.HeaderLen() - 8; len(b) != want {
					t.Errorf("%s: %d bytes, want %d", s.name, len(b), want)
				}
				fmt.Fprintf(&out, "%-28s %3d %s\n", s.name, len(b), hex.EncodeToString(b))
			}
			golden.Check(t, filepath.Join("testdata", p.String()+".golden"), []byte(out.String()))
		})
	}
}

// TestKnownVectors checks bytes computed independently of this package
// (Python zlib.crc32 for the CRC) so a wrong CRC or field order in both the
// encoder and the golden files cannot go unnoticed.
func TestKnownVectors(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"spec LIST_ROOMS seq 1", AppendListRooms(nil, ProfileSpec, 1), "0140000100000000" + "d0e3833e"},
		{"spec JOIN_SUCCESS seq 0x1234 room 7 port 8088", AppendJoinSuccess(nil, ProfileSpec, 0x1234, 7, 8088),
			"0245123400060006" + "000000071f98" + "ceec9bf2"},
		{"rtype17 JOIN_ROOM seq 9 room 42", AppendJoinRoom(nil, ProfileRType17, 9, 42),
			"a35fc81d01" + "01440009" + "00000000" + "00040004" + "0000002a" + "01d83b2e"},
	}
	for _, tt := range tests {
		if got := hex.EncodeToString(tt.got); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// TestTypedHelpersMatchAppend checks the hot-path helpers produce the same
// bytes as the general encoder.
func TestTypedHelpersMatchAppend(t *testing.T) {
	rooms := sampleRooms()
	for _, p := range profiles {
		seq := uint16(0xBEEF)
		m := func(mt MsgType, f func(*Message)) []byte {
			x := Message{Header: Header{Type: mt, Seq: seq}}
			if f != nil {
				f(&x)
			}
			return mustAppend(t, p, &x)
		}
		list, err := AppendRoomList(nil, p, seq, rooms)
		if err != nil {
			t.Fatal(err)
		}
		hello, err := AppendEmpty(nil, p, ClientHello, seq)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name      string
			got, want []byte
		}{
			{"ListRooms", AppendListRooms(nil, p, seq), m(LobbyListRooms, nil)},
			{"CreateRoom", AppendCreateRoom(nil, p, seq), m(LobbyCreateRoom, nil)},
			{"JoinRoom", AppendJoinRoom(nil, p, seq, 77), m(LobbyJoinRoom, func(x *Message) { x.RoomID = 77 })},
			{"RoomCreated", AppendRoomCreated(nil, p, seq, 5, 8085), m(LobbyRoomCreated, func(x *Message) { x.RoomID, x.Port = 5, 8085 })},
			{"JoinSuccess", AppendJoinSuccess(nil, p, seq, 5, 8085), m(LobbyJoinSuccess, func(x *Message) { x.RoomID, x.Port = 5, 8085 })},
			{"JoinFailed", AppendJoinFailed(nil, p, seq), m(LobbyJoinFailed, nil)},
			{"RoomList", list, m(LobbyRoomList, func(x *Message) { x.Rooms = MakeRoomList(nil, rooms) })},
			{"Ping", AppendPing(nil, p, seq, 123), m(ClientPing, func(x *Message) { x.Value = 123 })},
			{"Pong", AppendPong(nil, p, seq, 123), m(ServerPong, func(x *Message) { x.Value = 123 })},
			{"Empty(CLIENT_HELLO)", hello, m(ClientHello, nil)},
			{"Raw(JOIN_ROOM)", AppendRaw(nil, p, Header{PacketType: 1, Type: LobbyJoinRoom, Seq: seq, PayloadSize: 4, OriginalSize: 4}, []byte{0, 0, 0, 77}),
				m(LobbyJoinRoom, func(x *Message) { x.RoomID = 77 })},
		}
		for _, tt := range tests {
			if !bytes.Equal(tt.got, tt.want) {
				t.Errorf("%v %s:\n got %x\nwant %x", p, tt.name, tt.got, tt.want)
			}
		}
		// Appending keeps what dst already holds.
		pre := []byte("xyz")
		if got := AppendListRooms(pre, p, seq); !bytes.Equal(got[:3], []byte("xyz")) || !bytes.Equal(got[3:], AppendListRooms(nil, p, seq)) {
			t.Errorf("%v: AppendListRooms does not append: %x", p, got)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	big := make([]Room, MaxRooms+1)
	if _, err := AppendRoomList(nil, ProfileSpec, 0, big); !errors.Is(err, ErrTooManyRooms) {
		t.Errorf("AppendRoomList(%d rooms) = %v, want ErrTooManyRooms", len(big), err)
	}
	if b, err := AppendRoomList(nil, ProfileSpec, 0, big[:MaxRooms]); err != nil || len(b) != 12+2+11*MaxRooms || len(b)-12 > MaxPayload+4 {
		t.Errorf("AppendRoomList(MaxRooms) = %d bytes, %v", len(b), err)
	}
	if _, err := AppendEmpty(nil, ProfileSpec, LobbyJoinRoom, 0); err == nil {
		t.Error("AppendEmpty(JOIN_ROOM) succeeded")
	}
	tests := []struct {
		name string
		p    Profile
		m    Message
	}{
		{"invalid profile", Profile(9), Message{Header: Header{Type: LobbyListRooms}}},
		{"unknown type", ProfileSpec, Message{Header: Header{Type: 0x47}}},
		{"compressed", ProfileRType17, Message{Header: Header{Type: LobbyListRooms, Compressed: true}}},
		{"u8 overflow", ProfileSpec, Message{Header: Header{Type: ServerCountdownTick}, Value: 256}},
		{"ragged room list", ProfileSpec, Message{Header: Header{Type: LobbyRoomList}, Rooms: RoomList{raw: make([]byte, 12)}}},
		{"too many rooms", ProfileSpec, Message{Header: Header{Type: LobbyRoomList}, Rooms: MakeRoomList(nil, big)}},
	}
	for _, tt := range tests {
		dst := []byte{1, 2}
		got, err := Append(dst, tt.p, &tt.m)
		if err == nil {
			t.Errorf("%s: Append succeeded", tt.name)
		}
		if !bytes.Equal(got, dst) {
			t.Errorf("%s: dst changed on error: %x", tt.name, got)
		}
	}
}

// TestDecodeSamples decodes every golden sample with the decoder a real
// receiver would use, and checks decode(encode(x)) == x and that
// re-encoding reproduces the bytes.
func TestDecodeSamples(t *testing.T) {
	for _, p := range profiles {
		for _, s := range samples() {
			b := mustAppend(t, p, &s.m)
			d := Decoder{Profile: p, Dir: s.m.Type.Dir(), Channel: s.m.Type.Channel()}
			var got Message
			if err := d.Decode(b, &got); err != nil {
				t.Errorf("%v %s: %v", p, s.name, err)
				continue
			}
			want := s.m
			n, _ := s.m.Type.PayloadLen()
			if s.m.Type == LobbyRoomList {
				n = 2 + len(s.m.Rooms.raw)
			}
			want.PayloadSize, want.OriginalSize = uint16(n), uint16(n)
			if want.Rooms.raw == nil {
				want.Rooms.raw = got.Rooms.raw[:0:0] // compare contents only
			}
			if !equalMsg(got, want) {
				t.Errorf("%v %s: decoded\n %+v\nwant\n %+v", p, s.name, got, want)
			}
			if re := mustAppend(t, p, &got); !bytes.Equal(re, b) {
				t.Errorf("%v %s: re-encode\n %x\nwant\n %x", p, s.name, re, b)
			}
		}
	}
}

func equalMsg(a, b Message) bool {
	return a.Header == b.Header && a.RoomID == b.RoomID && a.Port == b.Port && a.Value == b.Value &&
		bytes.Equal(a.Rooms.raw, b.Rooms.raw)
}

func TestRoomListAccessors(t *testing.T) {
	rooms := sampleRooms()
	b, err := AppendRoomList(nil, ProfileSpec, 1, rooms)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := (Decoder{Dir: ServerToClient, Channel: ChannelLobby}).Decode(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Rooms.Len() != len(rooms) {
		t.Fatalf("Len = %d, want %d", m.Rooms.Len(), len(rooms))
	}
	for i, r := range rooms {
		if got := m.Rooms.At(i); got != r {
			t.Errorf("At(%d) = %+v, want %+v", i, got, r)
		}
	}
	if got := m.Rooms.AppendRooms(nil); !reflect.DeepEqual(got, rooms) {
		t.Errorf("AppendRooms = %+v", got)
	}
	if !bytes.Equal(m.Rooms.Bytes(), b[8+2:len(b)-4]) {
		t.Error("Bytes does not alias the entries")
	}
	var zero RoomList
	if zero.Len() != 0 || len(zero.AppendRooms(nil)) != 0 {
		t.Error("zero RoomList is not empty")
	}
}

// randMessage returns a random valid message of type mt.
func randMessage(r *rand.Rand, mt MsgType, p Profile) Message {
	m := Message{Header: Header{PacketType: mt.Dir(), Type: mt, Seq: uint16(r.Uint32())}}
	if p == ProfileRType17 {
		m.TickID = r.Uint32()
	}
	switch msgTable[mt].kind {
	case kindRoomID:
		m.RoomID = r.Uint32()
	case kindRoomRef:
		m.RoomID, m.Port = 1+r.Uint32N(0xFFFFFFFF), uint16(1+r.IntN(0xFFFF))
	case kindU32:
		m.Value = r.Uint32()
	case kindU8:
		m.Value = uint32(r.IntN(256))
	case kindList:
		n := r.IntN(40)
		if r.IntN(50) == 0 {
			n = MaxRooms
		}
		rooms := make([]Room, n)
		for i := range rooms {
			mx := uint16(r.Uint32())
			rooms[i] = Room{ID: 1 + r.Uint32N(0xFFFFFFFF), MaxPlayers: mx, Players: uint16(r.IntN(int(mx) + 1)),
				Port: uint16(1 + r.IntN(0xFFFF)), State: RoomState(r.IntN(4))}
		}
		m.Rooms = MakeRoomList(nil, rooms)
	}
	return m
}

// TestRoundTripRandom is the seeded property test: for random valid
// messages of every type in both profiles, decode(encode(x)) == x and
// encode(decode(b)) == b.
func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		p := profiles[r.IntN(2)]
		mt := MsgTypes[r.IntN(len(MsgTypes))]
		m := randMessage(r, mt, p)
		b := mustAppend(t, p, &m)
		var got Message
		if err := (Decoder{Profile: p, Dir: mt.Dir()}).Decode(b, &got); err != nil {
			t.Fatalf("%v %v: %v", p, mt, err)
		}
		if got.RoomID != m.RoomID || got.Port != m.Port || got.Value != m.Value ||
			!bytes.Equal(got.Rooms.raw, m.Rooms.raw) || got.Seq != m.Seq || got.TickID != m.TickID ||
			got.Type != m.Type || got.PacketType != m.PacketType {
			t.Fatalf("%v %v: decoded %+v, want %+v", p, mt, got, m)
		}
		if re := mustAppend(t, p, &got); !bytes.Equal(re, b) {
			t.Fatalf("%v %v: re-encode differs", p, mt)
		}
		if g, ok := GuessProfile(b); !ok || g != p {
			t.Fatalf("%v %v: GuessProfile = %v, %v", p, mt, g, ok)
		}
	}
}

func TestGuessProfile(t *testing.T) {
	for _, p := range profiles {
		for _, s := range samples() {
			b := mustAppend(t, p, &s.m)
			if g, ok := GuessProfile(b); !ok || g != p {
				t.Errorf("%v %s: GuessProfile = %v, %v", p, s.name, g, ok)
			}
			b[len(b)-1] ^= 1
			if g, ok := GuessProfile(b); ok {
				t.Errorf("%v %s with bad CRC: GuessProfile = %v, true", p, s.name, g)
			}
		}
	}
	for _, b := range [][]byte{nil, {1}, make([]byte, 12), make([]byte, 21), []byte("hello, lobby server!")} {
		if g, ok := GuessProfile(b); ok {
			t.Errorf("GuessProfile(%x) = %v, true", b, g)
		}
	}
	// A compressed rtype17 packet is still rtype17: the guess looks at framing only.
	b := AppendRaw(nil, ProfileRType17, Header{PacketType: 2, Type: LobbyRoomList, Compressed: true, PayloadSize: 3, OriginalSize: 30}, []byte{1, 2, 3})
	if g, ok := GuessProfile(b); !ok || g != ProfileRType17 {
		t.Errorf("GuessProfile(compressed rtype17) = %v, %v", g, ok)
	}
}

func TestProfile(t *testing.T) {
	tests := []struct {
		name     string
		p        Profile
		hdr, ovh int
	}{
		{"spec", ProfileSpec, 8, 12},
		{"rtype17", ProfileRType17, 17, 21},
	}
	for _, tt := range tests {
		p, err := ParseProfile(tt.name)
		if err != nil || p != tt.p {
			t.Errorf("ParseProfile(%q) = %v, %v", tt.name, p, err)
		}
		if p.String() != tt.name || p.HeaderLen() != tt.hdr || p.Overhead() != tt.ovh || p.PacketLen(6) != tt.ovh+6 || !p.Valid() {
			t.Errorf("%v: String %q HeaderLen %d Overhead %d", p, p.String(), p.HeaderLen(), p.Overhead())
		}
		var f Profile
		if err := f.Set(tt.name); err != nil || f != tt.p {
			t.Errorf("Set(%q) = %v, %v", tt.name, f, err)
		}
	}
	for _, bad := range []string{"", "Spec", "rtype", "17"} {
		if _, err := ParseProfile(bad); err == nil {
			t.Errorf("ParseProfile(%q) succeeded", bad)
		}
	}
	if Profile(7).HeaderLen() != 0 || Profile(7).Valid() || Profile(7).String() != "Profile(7)" {
		t.Error("unknown profile not reported as such")
	}
	if _, err := DecodeHeader(make([]byte, 40), Profile(7)); err == nil {
		t.Error("DecodeHeader with invalid profile succeeded")
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Waiting.String(), "Waiting"},
		{Countdown.String(), "Countdown"},
		{Playing.String(), "Playing"},
		{Finished.String(), "Finished"},
		{RoomState(4).String(), "RoomState(4)"},
		{LobbyJoinRoom.String(), "LOBBY_JOIN_ROOM"},
		{ServerCountdownTick.String(), "SERVER_COUNTDOWN_TICK"},
		{MsgType(0x47).String(), "MsgType(0x47)"},
		{ClientToServer.String(), "C→S"},
		{PacketType(3).String(), "PacketType(0x03)"},
		{ChannelInstance.String(), "instance"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if RoomState(4).Valid() || !Finished.Valid() {
		t.Error("RoomState.Valid wrong")
	}
}

// TestLengthFits: a lobby's datagram fits, also with a broken CRC;
// random bytes and a datagram cut short do not.
func TestLengthFits(t *testing.T) {
	for _, p := range profiles {
		good := AppendListRooms(nil, p, 7)
		badCRC := append([]byte(nil), good...)
		badCRC[len(badCRC)-1] ^= 0xff
		for _, tc := range []struct {
			name string
			b    []byte
			want bool
		}{
			{"framed", good, true},
			{"CRC broken", badCRC, true},
			{"cut short", good[:len(good)-1], false},
			{"random bytes", []byte{0xde, 0xad, 0xbe, 0xef, 0x13, 0x37, 0x42, 0x99, 1, 2, 3, 4, 5, 6, 7, 8}, false},
			{"empty", nil, false},
		} {
			if got := LengthFits(tc.b); got != tc.want {
				t.Errorf("%v, %s: LengthFits(% x) = %v, want %v", p, tc.name, tc.b, got, tc.want)
			}
		}
	}
}

// TestEvent: the six unsolicited instance messages are events, and every
// event is a server's instance message.
func TestEvent(t *testing.T) {
	n := 0
	for v := 0; v < 256; v++ {
		m := MsgType(v)
		if !m.Event() {
			continue
		}
		n++
		if m.Channel() != ChannelInstance || m.Dir() != ServerToClient {
			t.Errorf("%v is an event but not a server's instance message", m)
		}
	}
	if n != 6 {
		t.Errorf("%d events, want 6", n)
	}
}
