package toyecho

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/internal/refusals"
)

const section = "toy-echo.md §1 Echo"

// cases are the toy's group of the conformance suite.
var cases = []*conformance.Case{{
	ID: Name + "/1/1", Section: section, Level: conformance.Must,
	Desc:        "a request is answered with its sequence id and payload",
	Requirement: "The server answers a request with a reply carrying the request's sequence id and payload.",
	Run: func(t *conformance.T) error {
		c, err := openSocket(t)
		if err != nil {
			return err
		}
		defer c.Close()
		b, err := exchange(t, c, appendRequest(nil, 7, []byte("conformance")), "request 7")
		if err != nil {
			return conformance.Failf("a reply to request 7", "%v", err)
		}
		seq, payload, ok := parse(b, replyMagic)
		switch {
		case !ok:
			return conformance.Failf("a reply (TOYA…)", "% x", b)
		case seq != 7 || !bytes.Equal(payload, []byte("conformance")):
			return conformance.Failf(`id 7, payload "conformance"`, "id %d, payload %q", seq, payload)
		}
		return nil
	},
}, {
	ID: Name + "/1/2", Section: section, Level: conformance.Should,
	Desc:        "a datagram that is not a request draws no reply",
	Requirement: "The server ignores a datagram that is not a request.",
	Run: func(t *conformance.T) error {
		c, err := openSocket(t)
		if err != nil {
			return err
		}
		defer c.Close()
		if b, err := exchange(t, c, []byte("junk"), "not a request"); err == nil {
			return conformance.Failf("no reply", "% x", b)
		}
		if _, err := exchange(t, c, appendRequest(nil, 8, []byte("x")), "request 8"); err != nil {
			return t.Skip("the server answers no request either: %v", err)
		}
		return nil
	},
}}

// openSocket opens a UDP socket on the case's next source address.
func openSocket(t *conformance.T) (*net.UDPConn, error) {
	a, err := t.Env.Sources.Acquire(t.Ctx)
	if err != nil {
		return nil, err
	}
	return net.ListenUDP("udp", &net.UDPAddr{IP: a.AsSlice()})
}

// exchange sends b to the target and returns the first datagram back
// within the run's timeout, logging both.
func exchange(t *conformance.T, c *net.UDPConn, b []byte, note string) ([]byte, error) {
	local := c.LocalAddr().String()
	t.LogSent(local, t.Env.Addr.String(), b, note)
	if _, err := c.WriteToUDPAddrPort(b, t.Env.Addr); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(t.Ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	c.SetReadDeadline(time.Now().Add(t.Env.Timeout))
	buf := make([]byte, 2048)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		return nil, fmt.Errorf("no reply within %v", t.Env.Timeout)
	}
	t.LogRecv(local, from.String(), buf[:n], "")
	return buf[:n], nil
}

// conformReach is the suite's reachability check: a request must draw a
// reply.
func conformReach(ctx context.Context, env *conformance.Env) (string, error) {
	c, err := net.ListenUDP("udp", nil)
	if err != nil {
		return "", err
	}
	defer c.Close()
	refusals.Report(c)
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 2048)
	for try := 0; try < 2; try++ {
		if _, err := c.WriteToUDPAddrPort(appendRequest(nil, 0xFFFD, []byte("reach")), env.Addr); err != nil {
			return "", fmt.Errorf("%w: %s: %w", conformance.ErrUnreachable, env.Target, err)
		}
		c.SetReadDeadline(time.Now().Add(env.Timeout))
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "", fmt.Errorf("%w: %s: connection refused (nothing listens on that UDP port): %w", conformance.ErrUnreachable, env.Target, err)
		}
		if err == nil {
			if _, _, ok := parse(buf[:n], replyMagic); ok {
				return "", nil
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("%w: %s: no reply to a toy-echo request", conformance.ErrUnreachable, env.Target)
}
