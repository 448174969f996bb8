package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// UnreachableError says the target did not answer the probe made before the
// run; the CLI exits 3 on it.
type UnreachableError struct {
	Target string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("target %s unreachable: %v", e.Target, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// DefaultProbeTimeout bounds the reachability probe.
const DefaultProbeTimeout = 2 * time.Second

// Probe checks that a server answers at addr before anything else is sent:
// for udp-lobby, a LOBBY_LIST_ROOMS must draw a datagram back (any datagram:
// judging it is the run's job), re-sent a few times within timeout; for
// tcp-lobby, a connection must be accepted; for leviathan, an ICMP port
// unreachable (connection refused) after a datagram is the only negative
// answer a connectionless protocol gives. A failed probe returns an
// *UnreachableError.
func Probe(ctx context.Context, proto scenario.Protocol, profile string, addr netip.AddrPort, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	if proto == scenario.Leviathan {
		// Only a refusal is an answer, and it comes back within a round
		// trip: waiting longer for silence learns nothing.
		timeout = min(timeout, 500*time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(err error) error { return &UnreachableError{Target: addr.String(), Err: err} }
	switch proto {
	case scenario.TCPLobby:
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr.String())
		if err != nil {
			return fail(err)
		}
		return c.Close()
	case scenario.UDPLobby, scenario.Leviathan:
	default:
		return fmt.Errorf("engine: no probe for protocol %q", proto)
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	var pkt []byte
	if proto == scenario.UDPLobby {
		p, err := udplobby.ParseProfile(profile)
		if err != nil { // "auto" or empty: any reply will do
			p = udplobby.ProfileSpec
		}
		pkt = udplobby.AppendListRooms(nil, p, 0xFFFE)
	} else {
		pkt = []byte{0} // a datagram no Leviathan endpoint accepts; only "refused" counts
	}
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64<<10)
	tries := 3
	for i := 0; i < tries; i++ {
		if _, err := c.Write(pkt); err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return fail(errors.New("connection refused (nothing listens on that UDP port)"))
			}
			return fail(err)
		}
		deadline, _ := ctx.Deadline()
		c.SetReadDeadline(time.Now().Add(time.Until(deadline) / time.Duration(tries-i)))
		_, err := c.Read(buf)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.ECONNREFUSED):
			return fail(errors.New("connection refused (nothing listens on that UDP port)"))
		case ctx.Err() != nil && proto == scenario.Leviathan:
			return nil // silence is all a healthy endpoint owes a junk datagram
		case ctx.Err() != nil:
			return fail(fmt.Errorf("no reply to LOBBY_LIST_ROOMS within %v", timeout))
		}
	}
	if proto == scenario.Leviathan {
		return nil
	}
	return fail(fmt.Errorf("no reply to LOBBY_LIST_ROOMS within %v", timeout))
}
