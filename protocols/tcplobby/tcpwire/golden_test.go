package tcpwire

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
)

// TestGolden checks every packet type's frame bytes against testdata/*.hex
// and its payload size against Appendix A.
func TestGolden(t *testing.T) {
	seen := map[Type]bool{}
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			seen[s.msg.Type()] = true
			frame := AppendFrame(nil, s.msg)
			p := frame[HeaderSize:]
			if len(p) != s.appendixA || s.msg.Size() != s.appendixA {
				t.Fatalf("payload %d bytes, Size() %d, Appendix A says %d", len(p), s.msg.Size(), s.appendixA)
			}
			if got := binary.LittleEndian.Uint32(frame); int(got) != len(p) {
				t.Fatalf("length prefix %d, payload %d", got, len(p))
			}
			if Type(p[0]) != s.msg.Type() {
				t.Fatalf("type byte 0x%02x, want %v", p[0], s.msg.Type())
			}
			got := "# " + s.msg.Type().String() + " frame (u32 LE length + payload)\n" + dump(frame)
			golden.Check(t, filepath.Join("testdata", s.name+".hex"), []byte(got))
			// Decoding the golden bytes gives back the message.
			m := New(s.msg.Type())
			if err := DecodeInto(unhex(got)[HeaderSize:], m); err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if !reflect.DeepEqual(m, s.msg) {
				t.Errorf("decoded %+v\nwant    %+v", m, s.msg)
			}
		})
	}
	for _, ty := range Types {
		if !seen[ty] {
			t.Errorf("no golden sample for %v", ty)
		}
	}
}

// TestAppendixASizes checks the size constants against the seed's table.
func TestAppendixASizes(t *testing.T) {
	fixed := map[Type]int{ // Appendix A, fixed-size packets
		TypeListRoomsReq: 1, TypeCreateRoomReq: 65, TypeCreateRoomAck: 13, TypeJoinRoomReq: 37,
		TypeConnectReq: 33, TypeConnectAck: 10, TypePlayerJoin: 43, TypeReadyReq: 1,
		TypePlayerReady: 10, TypeStartReq: 1, TypeCountdown: 2, TypeGameStart: 220,
		TypeDisconnect: 1, TypePlayerLeft: 9,
	}
	for _, ty := range Types {
		n, ok := ty.FixedSize()
		want, wantOK := fixed[ty]
		if ok != wantOK || n != want {
			t.Errorf("%v: FixedSize() = %d, %v; want %d, %v", ty, n, ok, want, wantOK)
		}
		if New(ty) == nil || New(ty).Type() != ty {
			t.Errorf("New(%v) wrong", ty)
		}
	}
	if len(Types) != 18 {
		t.Errorf("%d types, want 18", len(Types))
	}
	var pi PlayerInfo
	if n := len(appendPlayer(nil, &pi)); n != 42 {
		t.Errorf("PlayerInfo %d bytes, want 42", n)
	}
	var ri RoomInfo
	if n := len(appendRoom(nil, &ri)); n != 39 {
		t.Errorf("RoomInfo %d bytes, want 39", n)
	}
	if n := len(Marshal(&GameStart{})) - 1; n != 219 {
		t.Errorf("GameStartInfo %d bytes, want 219", n)
	}
	for _, c := range []struct {
		m    Message
		want int
	}{
		{&ListRoomsAck{}, 2}, {&JoinRoomAck{}, 11}, {&RoomUpdate{}, 2},
	} {
		if n := len(Marshal(c.m)); n != c.want {
			t.Errorf("%v header %d bytes, want %d", c.m.Type(), n, c.want)
		}
	}
}

// TestAppendixB1 is tcp-lobby.md §B, example B.1, byte for byte.
func TestAppendixB1(t *testing.T) {
	want := unhex(`
41 00 00 00
03                              # Type: CREATE_ROOM_REQ
4D 79 52 6F 6F 6D 00 00        # RoomName: "MyRoom" + null padding
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
50 6C 61 79 65 72 31 00        # PlayerName: "Player1" + null padding
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00`)
	m := &CreateRoomReq{RoomName: MakeName("MyRoom"), PlayerName: MakeName("Player1")}
	if got := AppendFrame(nil, m); !bytes.Equal(got, want) {
		t.Fatalf("got\n%swant\n%s", dump(got), dump(want))
	}
	fr := NewFrameReader(bytes.NewReader(want), 0)
	p, err := fr.Next()
	if err != nil {
		t.Fatal(err)
	}
	var d CreateRoomReq
	if err := DecodeInto(p, &d); err != nil {
		t.Fatal(err)
	}
	if d.RoomName.String() != "MyRoom" || d.PlayerName.String() != "Player1" {
		t.Fatalf("decoded %q %q", d.RoomName, d.PlayerName)
	}
}

// TestAppendixB2 is tcp-lobby.md §B, example B.2: JOIN_ROOM_ACK, success, 2 players.
func TestAppendixB2(t *testing.T) {
	head := unhex(`
06                              # Type: JOIN_ROOM_ACK
00                              # Status: SUCCESS
78 56 34 12 00 00 00 00        # PlayerHash: 0x12345678
02                              # PlayerCount: 2`)
	m := &JoinRoomAck{Status: JoinSuccess, PlayerHash: 0x12345678, Count: 2}
	m.Players[0] = player(1, "Player1", false)
	m.Players[1] = player(2, "Player2", true)
	frame := AppendFrame(nil, m)
	if n := binary.LittleEndian.Uint32(frame); n != 11+2*42 {
		t.Fatalf("length %d, want 95", n)
	}
	p := frame[4:]
	if !bytes.Equal(p[:11], head) {
		t.Fatalf("header\n%swant\n%s", dump(p[:11]), dump(head))
	}
	// Player 1 info, 42 bytes: number, hash LE, name[32], ready.
	p1 := unhex(`01 11 11 11 11 11 11 11 11 50 6C 61 79 65 72 31 00` + " " + hexZeros(24) + ` 00`)
	if !bytes.Equal(p[11:53], p1) {
		t.Fatalf("player 1\n%swant\n%s", dump(p[11:53]), dump(p1))
	}
	if p[11+42] != 2 || p[11+83] != 1 {
		t.Fatalf("player 2 number/ready bytes %d/%d", p[11+42], p[11+83])
	}
	var d JoinRoomAck
	if err := DecodeInto(p, &d); err != nil || !reflect.DeepEqual(&d, m) {
		t.Fatalf("decode: %v %+v", err, d)
	}
}

// TestAppendixB3 is tcp-lobby.md §B, example B.3: GAME_START, 127.0.0.1:7778, 2 players.
func TestAppendixB3(t *testing.T) {
	head := unhex(`
16                              # Type: GAME_START
31 32 37 2E 30 2E 30 2E 31 00  # ServerIP: "127.0.0.1"
00 00 00 00 00 00
62 1E                           # UDPPort: 7778
02                              # PlayerCount: 2`)
	m := &GameStart{ServerIP: MakeIP("127.0.0.1"), UDPPort: 7778, PlayerCount: 2}
	m.Players[0] = player(1, "A", true)
	m.Players[1] = player(2, "B", true)
	m.Spawn = [4][2]float32{{1.5, -2}, {3, 4}}
	p := Marshal(m)
	if len(p) != 220 {
		t.Fatalf("%d bytes, want 220", len(p))
	}
	if !bytes.Equal(p[:20], head) {
		t.Fatalf("header\n%swant\n%s", dump(p[:20]), dump(head))
	}
	// Players 3 and 4 are empty: 84 zero bytes.
	if !bytes.Equal(p[20+84:20+168], make([]byte, 84)) {
		t.Fatalf("empty players not zero")
	}
	// Spawn positions: float32 LE, 1.5 = 00 00 C0 3F, -2 = 00 00 00 C0.
	if !bytes.Equal(p[188:196], unhex("00 00 C0 3F 00 00 00 C0")) {
		t.Fatalf("spawn[0] = % x", p[188:196])
	}
	var d GameStart
	if err := DecodeInto(p, &d); err != nil || !reflect.DeepEqual(&d, m) {
		t.Fatalf("decode: %v %+v", err, d)
	}
	if d.ServerIP.String() != "127.0.0.1" || d.UDPPort != 7778 {
		t.Fatalf("decoded %s:%d", d.ServerIP, d.UDPPort)
	}
}

func hexZeros(n int) string {
	return string(bytes.Repeat([]byte("00 "), n))
}
