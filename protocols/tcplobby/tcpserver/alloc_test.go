package tcpserver

import (
	"bytes"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// TestRequestAllocs: a request costs one allocation, its reply frame
// (broadcasts: one frame shared by every member).
func TestRequestAllocs(t *testing.T) {
	s, err := Listen(testConfig(&fakePool{addr: gameAddr}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newConn(s, a)
	drain := func() {
		for len(c.out) > 0 {
			<-c.out
		}
	}
	// A room with 16 rooms' worth of listing to encode.
	create := tcpwire.Marshal(&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("r"), PlayerName: tcpwire.MakeName("p")})
	if !s.handle(c, create) {
		t.Fatal("create refused")
	}
	drain()
	tests := []struct {
		name    string
		payload []byte
		want    float64
	}{
		{"LIST_ROOMS_REQ", tcpwire.Marshal(&tcpwire.ListRoomsReq{}), 1},
		{"READY_REQ (PLAYER_READY + ROOM_UPDATE)", tcpwire.Marshal(&tcpwire.ReadyReq{}), 2},
		{"JOIN_ROOM_REQ of one's own room", tcpwire.Marshal(&tcpwire.JoinRoomReq{RoomID: c.room.id, PlayerName: tcpwire.MakeName("p")}), 1},
		{"JOIN_ROOM_REQ of a missing room", tcpwire.Marshal(&tcpwire.JoinRoomReq{RoomID: 999, PlayerName: tcpwire.MakeName("p")}), 1},
		{"CONNECT_REQ", tcpwire.Marshal(&tcpwire.ConnectReq{PlayerName: tcpwire.MakeName("somebody")}), 1},
	}
	for _, tt := range tests {
		got := memfig.Allocs(100, func() {
			s.handle(c, tt.payload)
			drain()
		})
		if got != tt.want {
			t.Errorf("%s: %v allocs per request, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCleanNameMatchesMakeName: the allocation-free normalisation equals
// the codec's MakeName of the bytes before the NUL, for random names with
// multi-byte runes and junk.
func TestCleanNameMatchesMakeName(t *testing.T) {
	alphabet := []byte{'a', 0, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0x80, 0xff}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var n tcpwire.Name
		for i := range n {
			n[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(2) == 0 { // often unterminated
			for i := range n {
				if n[i] == 0 {
					n[i] = 'b'
				}
			}
		}
		end := bytes.IndexByte(n[:], 0)
		if end < 0 {
			end = len(n)
		}
		want := tcpwire.MakeName(string(n[:end]))
		got, ok := cleanName(n)
		if got != want || ok != (want[0] != 0) {
			t.Fatalf("cleanName(%q) = %q, %v; want %q", n[:], got[:], ok, want[:])
		}
	}
}
