package udpclient

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// Listing is what ListRooms saw: the rooms, and where the list came from.
type Listing struct {
	Rooms []udpwire.Room
	// From is the address the LOBBY_ROOM_LIST came from: the lobby's, or
	// another port of its host (a lobby that replies from another socket
	// still lists its rooms).
	From netip.AddrPort
}

// ListRooms asks the udp-lobby at addr for its rooms on a socket of its
// own, outside any run's figures: LOBBY_LIST_ROOMS with sequence seq, up
// to three tries, each waiting timeout/3 for a LOBBY_ROOM_LIST from the
// lobby's host (any port). profile is the header profile ("" or unknown:
// spec). When no list came, the error says what did: nothing at all, or
// how many datagrams and the first one's source, length and bytes, and
// why it was not a room list.
//
// The recovery drill's room check and the capacity search's drain check
// both list rooms through it, so both read a lobby the same way.
func ListRooms(ctx context.Context, addr netip.AddrPort, profile string, seq uint16, timeout time.Duration) (Listing, error) {
	prof := profileOrSpec(profile)
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	c, err := net.ListenUDP("udp", nil)
	if err != nil {
		return Listing{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	dec := udpwire.Decoder{Profile: prof, Dir: udpwire.ServerToClient}
	buf := make([]byte, 64<<10)
	var m udpwire.Message
	var other strayReplies
	for try := 0; try < 3 && ctx.Err() == nil; try++ {
		if _, err := c.WriteToUDPAddrPort(udpwire.AppendListRooms(nil, prof, seq), addr); err != nil {
			return Listing{}, fmt.Errorf("LOBBY_LIST_ROOMS: %w", err)
		}
		c.SetReadDeadline(time.Now().Add(timeout / 3))
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			if from.Addr() != addr.Addr() {
				other.add(from, buf[:n], "not from the lobby's host")
				continue
			}
			if err := dec.Decode(buf[:n], &m); err != nil {
				other.add(from, buf[:n], err.Error())
				continue
			}
			if m.Type != udpwire.LobbyRoomList {
				other.add(from, buf[:n], m.Type.String()+", not LOBBY_ROOM_LIST")
				continue
			}
			return Listing{Rooms: m.Rooms.AppendRooms(nil), From: from}, nil
		}
	}
	return Listing{}, fmt.Errorf("no LOBBY_ROOM_LIST from %v within %v%s", addr, timeout, other.text())
}

// strayReplies remembers what came that was not a room list, so an error
// never says "nothing came" when something did.
type strayReplies struct {
	n     int
	from  netip.AddrPort
	bytes []byte
	why   string
}

func (s *strayReplies) add(from netip.AddrPort, b []byte, why string) {
	s.n++
	if s.n == 1 {
		s.from, s.bytes, s.why = from, append([]byte(nil), b[:min(len(b), 16)]...), why
		if len(b) > 16 {
			s.why += fmt.Sprintf("; %d bytes", len(b))
		}
	}
}

func (s *strayReplies) text() string {
	if s.n == 0 {
		return ": nothing came"
	}
	return fmt.Sprintf(": %s came, the first from %v: % x (%s)", words.Count(s.n, "other datagram"), s.from, s.bytes, s.why)
}

// profileOrSpec is the header profile named profile, or the spec's when
// profile is empty, "auto" or unknown: what lobbybench's own looks at a
// lobby (the room listing, the drill's instance probe) speak.
func profileOrSpec(profile string) udpwire.Profile {
	prof, err := udpwire.ParseProfile(profile)
	if err != nil || !prof.Valid() {
		return udpwire.ProfileSpec
	}
	return prof
}
