package tcpwire

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

func benchMessages() map[string]Message {
	r := rand.New(rand.NewPCG(7, 8))
	list := randMessage(r, TypeListRoomsAck).(*ListRoomsAck)
	list.Count = MaxRooms
	for i := range list.Rooms {
		list.Rooms[i] = room(uint32(i+1), "a room name of some length", 2, false)
	}
	jra := &JoinRoomAck{Status: JoinSuccess, PlayerHash: 42, Count: 4}
	gs := &GameStart{ServerIP: MakeIP("127.0.0.1"), UDPPort: 7778, PlayerCount: 4}
	for i := range 4 {
		jra.Players[i] = player(uint8(i+1), "Player", i%2 == 0)
		gs.Players[i] = jra.Players[i]
	}
	return map[string]Message{
		"ListRoomsAck16": list,
		"JoinRoomAck4":   jra,
		"ReadyReq":       &ReadyReq{},
		"PlayerReady":    &PlayerReady{PlayerHash: 42, Ready: true},
		"GameStart":      gs,
	}
}

var benchOrder = []string{"ListRoomsAck16", "JoinRoomAck4", "ReadyReq", "PlayerReady", "GameStart"}

func BenchmarkEncode(b *testing.B) {
	msgs := benchMessages()
	for _, name := range benchOrder {
		m := msgs[name]
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(m.Size() + HeaderSize))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendFrame(buf[:0], m)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	msgs := benchMessages()
	for _, name := range benchOrder {
		m := msgs[name]
		p := Marshal(m)
		dst := New(m.Type())
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				if err := dst.DecodeOpts(p, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFrameReader reads a stream of mixed frames and decodes each into
// reused structs, as a server loop would.
func BenchmarkFrameReader(b *testing.B) {
	msgs := benchMessages()
	var s []byte
	for _, name := range benchOrder {
		s = AppendFrame(s, msgs[name])
	}
	r := bytes.NewReader(s)
	fr := NewFrameReader(r, 0)
	dst := map[Type]Message{}
	for _, t := range Types {
		dst[t] = New(t)
	}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(s)
		for {
			p, err := fr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := dst[Type(p[0])].DecodeOpts(p, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
