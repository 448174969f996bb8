package udpcases

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/script"
)

// The channels of udp-lobby's catalog (udpscript, which this package may
// not import: it reads the client's options): the lobby's, and the game
// instance a LOBBY_ROOM_CREATED or LOBBY_JOIN_SUCCESS routes to.
const (
	chanLobby    = "lobby"
	chanInstance = "instance"
)

// scriptConn is a user case's transport: one paced, logged socket of the
// case, to the lobby and, once a reply routed it there, to the game
// instance.
type scriptConn struct {
	t    *conformance.T
	s    *conformance.UDPSocket
	inst netip.AddrPort // the instance, once routed
	last netip.AddrPort // where the last datagram went: replies come from it
}

// scriptTransport is the group's ScriptTransport.
func scriptTransport(t *conformance.T) (conformance.ScriptConn, error) {
	s, err := t.OpenUDP()
	if err != nil {
		return nil, err
	}
	return &scriptConn{t: t, s: s, last: t.Env.Addr}, nil
}

func (c *scriptConn) Send(channel string, b []byte) (time.Time, error) {
	dst := c.t.Env.Addr
	if channel == chanInstance {
		if !c.inst.IsValid() {
			return time.Time{}, errors.New("no game instance yet: a LOBBY_ROOM_CREATED or LOBBY_JOIN_SUCCESS names its port")
		}
		dst = c.inst
	}
	c.last = dst
	err := c.s.Send(dst, b, channel)
	return time.Now(), err
}

// Recv reads the next datagram from the target's host: the instance's
// when it came from the instance's port, else the lobby's.
func (c *scriptConn) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	d := time.Until(deadline)
	if d <= 0 {
		return "", nil, time.Now(), os.ErrDeadlineExceeded
	}
	b, src, err := c.s.RecvFrom(c.last, d)
	at := time.Now()
	switch {
	case errors.Is(err, conformance.ErrSilence):
		return "", nil, at, fmt.Errorf("%w: %v", os.ErrDeadlineExceeded, err)
	case err != nil:
		return "", nil, at, err
	case c.inst.IsValid() && src == c.inst:
		return chanInstance, b, at, nil
	}
	return chanLobby, b, at, nil
}

// Route opens the instance channel at the port a reply named, on the
// lobby's host (or where it says, if --allow-redirect allows it).
func (c *scriptConn) Route(r script.Route) error {
	dst := r.Addr
	if !dst.IsValid() {
		dst = netip.AddrPortFrom(c.t.Env.Addr.Addr(), r.Port)
	}
	dst, err := c.t.Env.Follow(dst)
	if err != nil {
		return err
	}
	c.inst = dst
	return nil
}

func (c *scriptConn) Close() error {
	c.s.Close()
	return nil
}
