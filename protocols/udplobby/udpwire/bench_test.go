package udpwire

import (
	"bytes"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

func benchRooms(n int) []Room {
	rooms := make([]Room, n)
	for i := range rooms {
		rooms[i] = Room{ID: uint32(i + 1), Players: uint16(i % 5), MaxPlayers: 4 + uint16(i%5), Port: uint16(8081 + i), State: RoomState(i % 4)}
	}
	return rooms
}

// TestZeroAllocs pins the allocation-free guarantees the load engine relies
// on: encoding into a buffer with room and decoding any message, room
// lists included, do not allocate.
func TestZeroAllocs(t *testing.T) {
	for _, p := range profiles {
		buf := make([]byte, 0, 2048)
		rooms := benchRooms(100)
		list, _ := AppendRoomList(nil, p, 1, rooms)
		var m Message
		dec := Decoder{Profile: p}
		encs := map[string]func(){
			"AppendListRooms":   func() { buf = AppendListRooms(buf[:0], p, 1) },
			"AppendJoinRoom":    func() { buf = AppendJoinRoom(buf[:0], p, 1, 5) },
			"AppendJoinSuccess": func() { buf = AppendJoinSuccess(buf[:0], p, 1, 5, 8085) },
			"AppendPing":        func() { buf = AppendPing(buf[:0], p, 1, 5) },
			"AppendRoomList":    func() { buf, _ = AppendRoomList(buf[:0], p, 1, rooms) },
			"Append": func() {
				mm := Message{Header: Header{Type: LobbyJoinSuccess}, RoomID: 1, Port: 2}
				buf, _ = Append(buf[:0], p, &mm)
			},
			"Append(list)": func() { m.Type = LobbyRoomList; buf, _ = Append(buf[:0], p, &m) },
		}
		if err := dec.Decode(list, &m); err != nil {
			t.Fatal(err)
		}
		for name, f := range encs {
			if n := memfig.Allocs(100, f); n != 0 {
				t.Errorf("%v %s: %v allocs/op", p, name, n)
			}
		}
		var rbuf []Room
		for _, s := range samples() {
			b := mustAppend(t, p, &s.m)
			if n := memfig.Allocs(100, func() { _ = dec.Decode(b, &m) }); n != 0 {
				t.Errorf("%v Decode %s: %v allocs/op", p, s.name, n)
			}
		}
		rbuf = make([]Room, 0, 100)
		if n := memfig.Allocs(100, func() {
			_ = dec.Decode(list, &m)
			rbuf = m.Rooms.AppendRooms(rbuf[:0])
		}); n != 0 {
			t.Errorf("%v Decode+AppendRooms(100): %v allocs/op", p, n)
		}
		// DecodeRule never allocates, even for a malformed datagram (a
		// server's drop path); Decode's *Error on failure is one allocation.
		bad := bytes.Clone(list)
		bad[len(bad)-1] ^= 1
		for _, b := range [][]byte{nil, list[:5], bad, AppendJoinFailed(nil, p, 1), list} {
			srv := Decoder{Profile: p, Dir: ClientToServer, Channel: ChannelLobby}
			if n := memfig.Allocs(100, func() { _ = srv.DecodeRule(b, &m) }); n != 0 {
				t.Errorf("%v DecodeRule(% x…): %v allocs/op", p, b[:min(len(b), 8)], n)
			}
		}
		if n := memfig.Allocs(100, func() { GuessProfile(list) }); n != 0 {
			t.Errorf("%v GuessProfile: %v allocs/op", p, n)
		}
	}
}

func benchEncode(b *testing.B, f func(dst []byte) []byte) {
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = f(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

func benchDecode(b *testing.B, d Decoder, pkt []byte) {
	var m Message
	if err := d.Decode(pkt, &m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if err := d.Decode(pkt, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	rooms := benchRooms(100)
	for _, p := range profiles {
		b.Run(p.String()+"/ListRooms", func(b *testing.B) {
			benchEncode(b, func(d []byte) []byte { return AppendListRooms(d, p, 1) })
		})
		b.Run(p.String()+"/JoinRoom", func(b *testing.B) {
			benchEncode(b, func(d []byte) []byte { return AppendJoinRoom(d, p, 1, 42) })
		})
		b.Run(p.String()+"/JoinSuccess", func(b *testing.B) {
			benchEncode(b, func(d []byte) []byte { return AppendJoinSuccess(d, p, 1, 42, 8123) })
		})
		b.Run(p.String()+"/Ping", func(b *testing.B) {
			benchEncode(b, func(d []byte) []byte { return AppendPing(d, p, 1, 42) })
		})
		b.Run(p.String()+"/Pong", func(b *testing.B) {
			benchEncode(b, func(d []byte) []byte { return AppendPong(d, p, 1, 42) })
		})
		b.Run(p.String()+"/RoomList100", func(b *testing.B) {
			benchEncode(b, func(d []byte) []byte { d, _ = AppendRoomList(d, p, 1, rooms); return d })
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	rooms := benchRooms(100)
	for _, p := range profiles {
		srv := Decoder{Profile: p, Dir: ClientToServer, Channel: ChannelLobby}
		cli := Decoder{Profile: p, Dir: ServerToClient, Channel: ChannelLobby}
		inst := Decoder{Profile: p, Dir: ServerToClient, Channel: ChannelInstance}
		instSrv := Decoder{Profile: p, Dir: ClientToServer, Channel: ChannelInstance}
		list, _ := AppendRoomList(nil, p, 1, rooms)
		b.Run(p.String()+"/ListRooms", func(b *testing.B) { benchDecode(b, srv, AppendListRooms(nil, p, 1)) })
		b.Run(p.String()+"/JoinRoom", func(b *testing.B) { benchDecode(b, srv, AppendJoinRoom(nil, p, 1, 42)) })
		b.Run(p.String()+"/JoinSuccess", func(b *testing.B) { benchDecode(b, cli, AppendJoinSuccess(nil, p, 1, 42, 8123)) })
		b.Run(p.String()+"/Ping", func(b *testing.B) { benchDecode(b, instSrv, AppendPing(nil, p, 1, 42)) })
		b.Run(p.String()+"/Pong", func(b *testing.B) { benchDecode(b, inst, AppendPong(nil, p, 1, 42)) })
		b.Run(p.String()+"/RoomList100", func(b *testing.B) { benchDecode(b, cli, list) })
		b.Run(p.String()+"/RoomList100+AppendRooms", func(b *testing.B) {
			var m Message
			dst := make([]Room, 0, 100)
			b.ReportAllocs()
			for b.Loop() {
				if err := cli.Decode(list, &m); err != nil {
					b.Fatal(err)
				}
				dst = m.Rooms.AppendRooms(dst[:0])
			}
		})
	}
}

func BenchmarkGuessProfile(b *testing.B) {
	pkt := AppendJoinSuccess(nil, ProfileSpec, 1, 42, 8123)
	b.ReportAllocs()
	for b.Loop() {
		GuessProfile(pkt)
	}
}
