package capacity

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/wire/tcplobby"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// UDPRooms counts the rooms a udp-lobby lists at addr, asked on a socket
// of its own (as the recovery drill's room check does): up to three
// tries, each waiting timeout/3 for the LOBBY_ROOM_LIST.
func UDPRooms(ctx context.Context, addr netip.AddrPort, profile string, timeout time.Duration) (int, error) {
	prof, err := udplobby.ParseProfile(profile)
	if err != nil || !prof.Valid() {
		prof = udplobby.ProfileSpec
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	c, err := net.ListenUDP("udp", nil)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	dec := udplobby.Decoder{Profile: prof, Dir: udplobby.ServerToClient}
	buf := make([]byte, 64<<10)
	var m udplobby.Message
	for try := 0; try < 3 && ctx.Err() == nil; try++ {
		if _, err := c.WriteToUDPAddrPort(udplobby.AppendListRooms(nil, prof, 0xFFF1), addr); err != nil {
			return 0, err
		}
		c.SetReadDeadline(time.Now().Add(timeout / 3))
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != addr || dec.Decode(buf[:n], &m) != nil || m.Type != udplobby.LobbyRoomList {
				continue
			}
			return len(m.Rooms.AppendRooms(nil)), nil
		}
	}
	return 0, fmt.Errorf("no LOBBY_ROOM_LIST from %v within %v", addr, timeout)
}

// TCPRooms counts the rooms a tcp-lobby lists at addr, on a connection of
// its own: one LIST_ROOMS_REQ, the first LIST_ROOMS_ACK within timeout.
// The protocol lists at most tcplobby.MaxRooms, so a count at that cap is
// "at least".
func TCPRooms(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if err := tcplobby.NewFrameWriter(conn).WriteMessage(&tcplobby.ListRoomsReq{}); err != nil {
		return 0, err
	}
	fr := tcplobby.NewFrameReader(conn, 0)
	for range 64 {
		p, err := fr.Next()
		if err != nil {
			return 0, fmt.Errorf("no LIST_ROOMS_ACK from %v within %v: %w", addr, timeout, err)
		}
		if len(p) == 0 || tcplobby.Type(p[0]) != tcplobby.TypeListRoomsAck {
			continue
		}
		var ack tcplobby.ListRoomsAck
		if err := ack.DecodeOpts(p, tcplobby.Options{}); err != nil {
			return 0, err
		}
		return int(ack.Count), nil
	}
	return 0, fmt.Errorf("no LIST_ROOMS_ACK from %v among 64 frames", addr)
}
