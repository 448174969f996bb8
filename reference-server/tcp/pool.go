package tcp

import (
	"errors"
	"net/netip"
)

// InstancePool hands out UDP game instances for started rooms.
type InstancePool interface {
	// Allocate reserves a new UDP game instance for a started TCP room of n players and
	// returns the address clients should send CLIENT_HELLO to.
	Allocate(n int) (netip.AddrPort, error)
}

// Releaser is optionally implemented by an InstancePool. The server calls
// Release with an address Allocate returned when the room it was allocated
// for is cancelled before GAME_START could be sent (a player left while the
// pool was allocating, or the server is shutting down), so the instance need
// not wait for its idle cleanup.
type Releaser interface {
	Release(addr netip.AddrPort)
}

// StaticPool is an InstancePool that always returns Addr. It suits a TCP-only
// server in front of one externally run game server, and tests.
type StaticPool struct {
	Addr netip.AddrPort
}

// Allocate returns p.Addr, or an error when it is not valid.
func (p StaticPool) Allocate(int) (netip.AddrPort, error) {
	if !p.Addr.IsValid() {
		return netip.AddrPort{}, errors.New("tcp: StaticPool has no address")
	}
	return p.Addr, nil
}

var _ InstancePool = StaticPool{}
