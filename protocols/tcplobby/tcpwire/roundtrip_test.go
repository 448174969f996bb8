package tcpwire

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"unicode/utf8"
)

var nameAlphabet = []string{"a", "Z", "0", " ", "é", "✓", "🚀", "ß", "-", "\xff"}

func randString(r *rand.Rand, maxParts int) string {
	var b []byte
	for range r.IntN(maxParts + 1) {
		b = append(b, nameAlphabet[r.IntN(len(nameAlphabet))]...)
	}
	return string(b)
}

func randPlayer(r *rand.Rand, slot uint8) PlayerInfo {
	return PlayerInfo{Number: slot, Hash: r.Uint64(), Name: MakeName(randString(r, 40)), Ready: r.IntN(2) == 1}
}

// randMessage returns a random valid message of type t.
func randMessage(r *rand.Rand, t Type) Message {
	m := New(t)
	switch m := m.(type) {
	case *ListRoomsAck:
		m.Count = uint8(r.IntN(MaxRooms + 1))
		for i := range int(m.Count) {
			m.Rooms[i] = RoomInfo{ID: r.Uint32(), Name: MakeName(randString(r, 40)),
				PlayerCount: uint8(r.UintN(256)), MaxPlayers: uint8(r.UintN(256)), InGame: r.IntN(2) == 1}
		}
	case *CreateRoomReq:
		m.RoomName, m.PlayerName = MakeName(randString(r, 40)), MakeName(randString(r, 40))
	case *CreateRoomAck:
		m.RoomID, m.PlayerHash = r.Uint32(), r.Uint64()
	case *JoinRoomReq:
		m.RoomID, m.PlayerName = r.Uint32(), MakeName(randString(r, 40))
	case *JoinRoomAck:
		m.Status, m.PlayerHash, m.Count = JoinStatus(r.IntN(4)), r.Uint64(), uint8(r.IntN(MaxPlayers+1))
		for i := range int(m.Count) {
			m.Players[i] = randPlayer(r, uint8(1+r.IntN(4)))
		}
	case *RoomUpdate:
		m.Count = uint8(r.IntN(MaxPlayers + 1))
		for i := range int(m.Count) {
			m.Players[i] = randPlayer(r, uint8(1+r.IntN(4)))
		}
	case *ConnectReq:
		m.PlayerName = MakeName(randString(r, 40))
	case *ConnectAck:
		m.Success, m.PlayerHash = r.IntN(2) == 1, r.Uint64()
	case *PlayerJoin:
		m.Player = randPlayer(r, uint8(1+r.IntN(4)))
	case *PlayerReady:
		m.PlayerHash, m.Ready = r.Uint64(), r.IntN(2) == 1
	case *GameStart:
		m.ServerIP, m.UDPPort, m.PlayerCount = MakeIP(randString(r, 20)), uint16(r.UintN(65536)), uint8(r.IntN(5))
		for i := range int(m.PlayerCount) {
			m.Players[i] = randPlayer(r, uint8(i+1))
		}
		for i := range m.Spawn {
			m.Spawn[i] = [2]float32{r.Float32()*2000 - 1000, r.Float32() * 1000}
		}
	case *PlayerLeft:
		m.PlayerHash = r.Uint64()
	case *Countdown:
		m.Seconds = uint8(r.UintN(256))
	case *ErrorMsg:
		s := randString(r, 50)
		if !utf8.ValidString(s) {
			s = ""
		}
		*m = *NewErrorMsg(ErrorCode(r.UintN(256)), s)
	}
	return m
}

// TestRoundTrip is the property decode(encode(x)) == x, and that the frame
// reader returns what AppendFrame wrote, over random valid messages.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, ty := range Types {
		for range 300 {
			m := randMessage(r, ty)
			p := Marshal(m)
			if len(p) != m.Size() {
				t.Fatalf("%v: Marshal %d bytes, Size %d", ty, len(p), m.Size())
			}
			got := New(ty)
			if err := DecodeInto(p, got); err != nil {
				t.Fatalf("%v: %v\n%s", ty, err, dump(p))
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("%v: round trip\ngot  %+v\nwant %+v", ty, got, m)
			}
			if !bytes.Equal(Marshal(got), p) {
				t.Fatalf("%v: re-encode differs", ty)
			}
			fp, err := NewFrameReader(bytes.NewReader(AppendFrame(nil, m)), 0).Next()
			if err != nil || !bytes.Equal(fp, p) {
				t.Fatalf("%v: frame: %v", ty, err)
			}
		}
	}
}

// TestDecodeReuse checks that decoding into a reused struct leaves nothing
// of the previous, longer message behind.
func TestDecodeReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	long := randMessage(r, TypeListRoomsAck).(*ListRoomsAck)
	long.Count = 16
	var m ListRoomsAck
	if err := DecodeInto(Marshal(long), &m); err != nil {
		t.Fatal(err)
	}
	short := &ListRoomsAck{Count: 1, Rooms: [16]RoomInfo{room(5, "x", 1, false)}}
	if err := DecodeInto(Marshal(short), &m); err != nil || !reflect.DeepEqual(&m, short) {
		t.Fatalf("reuse: %v %+v", err, m)
	}
}

func TestMakeNameProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		s := randString(r, 40)
		n := MakeName(s)
		got := n.String()
		if n[NameSize-1] != 0 || len(got) > NameSize-1 {
			t.Fatalf("%q: unterminated or too long", s)
		}
		if !bytes.HasPrefix([]byte(s), []byte(got)) {
			t.Fatalf("%q: %q is not a prefix", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("%q: truncation split a rune: %q", s, got)
		}
		if utf8.ValidString(s) && len(s) > len(got) && len(got) < NameSize-1-3 {
			t.Fatalf("%q: cut too much: %q", s, got)
		}
	}
}
