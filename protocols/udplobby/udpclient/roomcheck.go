package udpclient

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// checkRooms is the recovery drill's room check of a udp-lobby target: it
// lists the rooms on a socket of its own and asks each listed room's
// instance (on the lobby's host, at the room's port) CLIENT_HELLO: the
// rooms that do not answer are listed but dead. It tries each datagram up
// to three times within timeout.
func checkRooms(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) *result.RoomCheck {
	o, _ := opts.(Options)
	profile := o.HeaderProfile
	rc := &result.RoomCheck{}
	ctx, cancel := context.WithTimeout(ctx, 2*timeout)
	defer cancel()
	l, err := ListRooms(ctx, addr, profile, 0xFFF0, timeout)
	if err != nil {
		rc.Error = err.Error()
		return rc
	}
	rooms := l.Rooms
	prof := profileOrSpec(profile)
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	c, err := net.ListenUDP("udp", nil)
	if err != nil {
		rc.Error = err.Error()
		return rc
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	dec := udpwire.Decoder{Profile: prof, Dir: udpwire.ServerToClient}
	buf := make([]byte, 64<<10)
	var m udpwire.Message
	rc.Listed = len(rooms)
	if len(rooms) > result.MaxRoomsProbed {
		rooms = rooms[:result.MaxRoomsProbed]
	}
	rc.Probed = len(rooms)
	// The instances: CLIENT_HELLO to each, SERVER_HELLO from its port.
	answered := map[uint16]bool{}
	pending := func() int {
		n := 0
		for _, r := range rooms {
			if !answered[r.Port] {
				n++
			}
		}
		return n
	}
	for try := 0; try < 3 && pending() > 0 && ctx.Err() == nil; try++ {
		for i, r := range rooms {
			if answered[r.Port] {
				continue
			}
			to := netip.AddrPortFrom(addr.Addr(), r.Port)
			hello, _ := udpwire.AppendEmpty(nil, prof, udpwire.ClientHello, uint16(i))
			c.WriteToUDPAddrPort(hello, to) // a refused port shows as no answer
		}
		c.SetReadDeadline(time.Now().Add(timeout / 3))
		for pending() > 0 {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() || ctx.Err() != nil {
					break
				}
				continue // an ICMP refusal of an earlier datagram
			}
			if from.Addr().Unmap() != addr.Addr() || dec.Decode(buf[:n], &m) != nil || m.Type != udpwire.ServerHello {
				continue
			}
			answered[from.Port()] = true
		}
	}
	for _, r := range rooms {
		if answered[r.Port] {
			rc.Answered++
			continue
		}
		rc.Dead = append(rc.Dead, result.DeadRoom{ID: r.ID, Port: r.Port, State: r.State.String(), Players: int(r.Players),
			Detail: fmt.Sprintf("no SERVER_HELLO from %v to CLIENT_HELLO within %s (3 tries)", netip.AddrPortFrom(addr.Addr(), r.Port), timeout)})
	}
	sort.Slice(rc.Dead, func(i, j int) bool { return rc.Dead[i].ID < rc.Dead[j].ID })
	return rc
}
