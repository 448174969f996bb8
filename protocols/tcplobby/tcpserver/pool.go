package tcpserver

import (
	"errors"
	"net/netip"
)

// InstancePool hands out UDP game instances for started rooms: the server
// asks it once per room, when the countdown has run out, for the address
// GAME_START carries. The UDP side owns an instance's lifetime: it is never
// told when the TCP room ends (players arrive with CLIENT_HELLO or it idles
// out).
type InstancePool interface {
	// Allocate reserves a new UDP game instance for a started TCP room of n
	// players (1-4) and returns the address clients should send
	// CLIENT_HELLO to. It is called without any server lock held, from a
	// timer goroutine, possibly for several rooms at once: it must be safe
	// for concurrent use, and it may block briefly (bind a socket).
	//
	// The address must be valid with a non-zero port, and its IP (unmapped,
	// zone dropped) must print in at most 15 bytes, as GameStartInfo.ServerIP
	// is char[16]: any IPv4 address fits, long IPv6 ones do not. An
	// unspecified IP (0.0.0.0 or ::), for an instance bound to every
	// interface, is replaced per client by the local address of that
	// client's TCP connection, so the instance socket's LocalAddr can be
	// returned as is. On an error (say, the instance limit is reached) every
	// member gets ERROR_MSG 0x06 "no game instance available: <err>", and
	// the room returns to waiting, ready states kept, so the host may START
	// again.
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
