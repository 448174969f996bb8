package tcpclient

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// occupancy counts the rooms a lobby lists, for the capacity search's
// drain check.
var occupancy = &simclient.Occupancy{Counted: "rooms listed", Count: countRooms}

// countRooms counts the rooms the lobby at addr lists, on a connection of
// its own: one LIST_ROOMS_REQ, the first LIST_ROOMS_ACK within timeout.
// The protocol lists at most tcplobby.MaxRooms, so a count at that cap is
// "at least".
func countRooms(ctx context.Context, addr netip.AddrPort, _ scenario.Options, timeout time.Duration) (int, error) {
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
	if err := tcpwire.NewFrameWriter(conn).WriteMessage(&tcpwire.ListRoomsReq{}); err != nil {
		return 0, err
	}
	fr := tcpwire.NewFrameReader(conn, 0)
	for range 64 {
		p, err := fr.Next()
		if err != nil {
			return 0, fmt.Errorf("no LIST_ROOMS_ACK from %v within %v: %w", addr, timeout, err)
		}
		if len(p) == 0 || tcpwire.Type(p[0]) != tcpwire.TypeListRoomsAck {
			continue
		}
		var ack tcpwire.ListRoomsAck
		if err := ack.DecodeOpts(p, tcpwire.Options{}); err != nil {
			return 0, err
		}
		return int(ack.Count), nil
	}
	return 0, fmt.Errorf("no LIST_ROOMS_ACK from %v among 64 frames", addr)
}
