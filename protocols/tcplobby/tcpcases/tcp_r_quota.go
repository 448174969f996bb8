package tcpcases

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// One source must not deny the TCP lobby to everyone: rooms and
// connections per address. The RFC (tcp-lobby.md) states no quota, so these warn.

// tcpConnBound bounds the connections tcp-lobby/R/4 opens from one address.
const tcpConnBound = 64

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/R/3", Protocol: ProtoTCP, Section: secTCPRobust, Level: conformance.Should, Phase: conformance.PhasePool,
		Desc:        "one source address cannot take every room: rooms created from one address until RoomID 0, then one from another address",
		Requirement: "MAX_ROOMS = 16 (tcp-lobby.md §3.2); one source must not deny the lobby to everyone",
		Run:         tcpRoomsOneAddress,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/R/4", Protocol: ProtoTCP, Section: secTCPRobust, Level: conformance.Should, Phase: conformance.PhasePool,
		Desc:        fmt.Sprintf("one source address cannot hold every connection: up to %d connections from one address, each asked LIST_ROOMS", tcpConnBound),
		Requirement: "one source must not deny the lobby to everyone: TCP connections per IP",
		Run:         tcpConnsOneAddress,
	})
}

// otherSource returns a pool address other than a (a itself when the pool
// has no other).
func otherSource(t *conformance.T, a netip.Addr) (netip.Addr, error) {
	for range len(t.Env.Sources.Addrs()) + 1 {
		b, err := t.Env.Sources.Acquire(t.Ctx)
		if err != nil || b != a {
			return b, err
		}
	}
	return a, nil
}

func tcpRoomsOneAddress(t *conformance.T) error {
	existing, err := tcpRoomCount(t)
	if err != nil {
		return err
	}
	one, err := t.Env.Sources.Acquire(t.Ctx)
	if err != nil {
		return err
	}
	var hosts []*tcpClient
	defer func() { releaseTCPRooms(t, hosts, existing) }()
	got, refused := 0, false
	for i := 0; i <= tcpwire.MaxRooms-existing; i++ {
		if i > 0 {
			if err := t.Env.Sources.Take(t.Ctx, one); err != nil {
				return err
			}
		}
		h, err := dialTCPFrom(t, one)
		if err != nil {
			t.Notef("connection #%d from %v refused: %v", i+1, one, err)
			refused = true
			break
		}
		hosts = append(hosts, h)
		ack, err := h.create()
		if err != nil {
			return conformance.Precondition(fmt.Sprintf("create room #%d from %v", i+1, one), err)
		}
		if ack.RoomID == 0 {
			refused = true
			break
		}
		got++
	}
	if got == 0 {
		return conformance.Skipf("no free room to take: %d rooms listed before, and %v got RoomID 0 at once", existing, one)
	}
	t.Notef("%v obtained %d rooms (%d listed before, MAX_ROOMS %d)", one, got, existing, tcpwire.MaxRooms)
	if !refused {
		return conformance.Warnf("a per-address limit on rooms, below MAX_ROOMS",
			"%v obtained %d rooms without a refusal, every free room and more (the limit itself is tcp-lobby/5.1/7's)", one, got)
	}
	other, err := otherSource(t, one)
	if err != nil {
		return err
	}
	if other == one {
		return conformance.Skipf("one source address only: cannot tell a per-address limit from a full lobby")
	}
	c, err := dialTCPFrom(t, other)
	if err != nil {
		return fmt.Errorf("connect from %v: %w", other, err)
	}
	hosts = append(hosts, c)
	ack, err := c.create()
	if err != nil {
		return conformance.Precondition(fmt.Sprintf("create a room from %v", other), err)
	}
	if ack.RoomID == 0 {
		return conformance.Warnf("a per-address limit on rooms, below MAX_ROOMS",
			"%v obtained %d rooms, then RoomID 0, and %v got RoomID 0 too: one address took every free room (%d listed before)", one, got, other, existing)
	}
	t.Notef("then %v got RoomID 0 while %v could still create one: a per-address limit of %d rooms", one, other, got)
	return nil
}

// served reports whether c answers LIST_ROOMS_REQ with LIST_ROOMS_ACK.
func (c *tcpClient) served() (bool, error) {
	_, err := c.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, conformance.ErrSilence), errors.Is(err, errClosed):
		return false, nil
	}
	var v *conformance.VerifyError
	if errors.As(err, &v) {
		return false, nil
	}
	return false, err
}

func tcpConnsOneAddress(t *conformance.T) error {
	one, err := t.Env.Sources.Acquire(t.Ctx)
	if err != nil {
		return err
	}
	var conns []*tcpClient
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	held := 0
	why := ""
	for i := 0; i < tcpConnBound; i++ {
		if i > 0 {
			if err := t.Env.Sources.Take(t.Ctx, one); err != nil {
				return err
			}
		}
		c, err := dialTCPFrom(t, one)
		if err != nil {
			why = fmt.Sprintf("connection #%d refused: %v", i+1, err)
			break
		}
		conns = append(conns, c)
		ok, err := c.served()
		if err != nil {
			return err
		}
		if !ok {
			why = fmt.Sprintf("connection #%d not served (LIST_ROOMS_REQ unanswered or closed)", i+1)
			break
		}
		held++
	}
	if why == "" {
		return conformance.Warnf(fmt.Sprintf("a per-address connection limit below %d", tcpConnBound),
			"%v held %d connections, every one served: no per-address limit observed (the suite opens no more)", one, held)
	}
	t.Notef("%v held %d served connections; %s", one, held, why)
	other, err := otherSource(t, one)
	if err != nil {
		return err
	}
	if other == one {
		return conformance.Skipf("one source address only: cannot tell a per-address limit from a full lobby")
	}
	c, err := dialTCPFrom(t, other)
	ok := false
	if err == nil {
		conns = append(conns, c)
		if ok, err = c.served(); err != nil {
			return err
		}
	}
	if !ok {
		return conformance.Warnf("a per-address connection limit, below the server's total",
			"%v held %d connections, then %s, and %v was not served either: one address took every connection", one, held, why, other)
	}
	return nil
}
