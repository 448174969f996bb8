package udpclient

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// TestListRooms: a lobby's room list is read whether it comes from the
// lobby's port or another port of its host, and when no list comes the
// error names what did.
func TestListRooms(t *testing.T) {
	rooms := []udpwire.Room{{ID: 7, Port: 9001}, {ID: 8, Port: 9002}}
	list, err := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, 1, rooms)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// reply is what the fake lobby sends back (nil: nothing).
		reply []byte
		// otherPort sends it from a second socket of the same host.
		otherPort bool
		wantRooms int
		wantErr   string // "" no error; otherwise a part of it
	}{
		{name: "list from the lobby's port", reply: list, wantRooms: 2},
		{name: "list from another port", reply: list, otherPort: true, wantRooms: 2},
		{name: "silent", wantErr: "nothing came"},
		{name: "short datagram", reply: []byte{0x01, 0x02}, wantErr: "U-SHORT: datagram shorter"},
		{name: "another message", reply: udpwire.AppendJoinFailed(nil, udpwire.ProfileSpec, 1), wantErr: "LOBBY_JOIN_FAILED, not LOBBY_ROOM_LIST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lobby := listen(t)
			from := lobby
			if tc.otherPort {
				from = listen(t)
			}
			go func() {
				buf := make([]byte, 2048)
				for range 3 { // at most one reply per try
					_, peer, err := lobby.ReadFromUDPAddrPort(buf)
					if err != nil {
						return
					}
					if tc.reply != nil {
						from.WriteToUDPAddrPort(tc.reply, peer)
					}
				}
			}()
			l, err := ListRooms(context.Background(), lobby.LocalAddr().(*net.UDPAddr).AddrPort(), "spec", 0xFFF1, 300*time.Millisecond)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ListRooms: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("ListRooms error = %v, want one containing %q", err, tc.wantErr)
			case tc.wantErr == "" && len(l.Rooms) != tc.wantRooms:
				t.Fatalf("ListRooms = %d rooms, want %d", len(l.Rooms), tc.wantRooms)
			case tc.wantErr == "" && l.From != from.LocalAddr().(*net.UDPAddr).AddrPort():
				t.Fatalf("ListRooms.From = %v, want %v", l.From, from.LocalAddr())
			}
		})
	}
}

func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
