package udpclient

import (
	"context"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// occupancy counts the rooms a lobby lists, for the capacity search's
// drain check: ListRooms on a socket of its own, in the plan's header
// profile.
var occupancy = &simclient.Occupancy{Counted: "rooms listed", Count: countRooms}

// countRooms counts the rooms the lobby at addr lists (ListRooms: up to
// three tries, each waiting timeout/3 for the LOBBY_ROOM_LIST).
func countRooms(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) (int, error) {
	o, _ := opts.(Options)
	l, err := ListRooms(ctx, addr, o.HeaderProfile, 0xFFF1, timeout)
	return len(l.Rooms), err
}
