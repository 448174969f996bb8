package levclient

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// occupancy counts the players a Leviathan server reports, for the
// capacity search's drain check.
var occupancy = &simclient.Occupancy{Counted: "players reported", Count: countPlayers}

// countPlayers is the player count the Leviathan server at addr reports,
// asked on a connection of its own (leviathan.md §2, §3): the handshake
// (Dial), then Serverstatus, whose ServerStatus carries Players; the
// connection is closed after. It never joins, so it is not a player
// itself. Each request waits up to timeout for its answer. A server that
// completes the handshake and does not answer Serverstatus (the original
// engine never does) gives an error wrapping simclient.ErrNoCount.
func countPlayers(ctx context.Context, addr netip.AddrPort, _ scenario.Options, timeout time.Duration) (int, error) {
	c, err := Dial(ctx, addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	m, err := c.Ask(lv.ReqServerstatus, nil, lv.ResServerStatus)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, levconn.ErrTimeout) {
			return 0, fmt.Errorf("%w: %v answered the handshake but not Serverstatus within %v (the original Leviathan engine never answers it)", simclient.ErrNoCount, addr, timeout)
		}
		return 0, err
	}
	var st lv.ServerStatus
	if err := st.Decode(m.Payload); err != nil {
		return 0, fmt.Errorf("ServerStatus from %v: %v", addr, err)
	}
	return int(st.Players), nil
}

// Conn is a Leviathan client connection that asks one request at a time
// and waits for its answer: what lobbybench asks a server outside a run's
// sessions (the drain check's player count).
type Conn struct {
	ctx     context.Context
	d       *levconn.Driver
	addr    netip.AddrPort
	timeout time.Duration
}

// Dial connects to addr and authenticates: Connect(42), Security(None),
// Authenticate, each waiting up to timeout for its response.
func Dial(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (*Conn, error) {
	d, err := levconn.Dial(netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port()), levconn.DriverOptions{})
	if err != nil {
		return nil, err
	}
	c := &Conn{ctx: ctx, d: d, addr: addr, timeout: timeout}
	for _, h := range []struct {
		t    lv.RequestType
		p    []byte
		want lv.ResponseType
	}{
		{lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil), lv.ResConnect},
		{lv.ReqSecurity, lv.SecurityRequest{SecureType: lv.SecureTypeNone}.Append(nil), lv.ResSecurity},
		{lv.ReqAuthenticate, lv.AuthenticateRequest{UserName: []byte("lobbybench")}.Append(nil), lv.ResAuthenticate},
	} {
		if _, err := c.Ask(h.t, h.p, h.want); err != nil {
			d.Close()
			return nil, err
		}
	}
	return c, nil
}

// Ask sends a Critical request and waits up to the connection's timeout
// for its response of type want (an error wrapping levconn.ErrTimeout
// when none comes). The server's own Connect is answered, as the
// engine's client answers it.
func (c *Conn) Ask(t lv.RequestType, payload []byte, want lv.ResponseType) (*lv.Message, error) {
	num, err := c.d.SendRequest(levconn.Critical, t, payload)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.timeout)
	for {
		e, err := c.d.Next(c.ctx, deadline)
		if errors.Is(err, levconn.ErrTimeout) {
			return nil, fmt.Errorf("no Response %v to %v from %v within %v: %w", want, t, c.addr, c.timeout, err)
		}
		if err != nil {
			return nil, err
		}
		if e.Kind != levconn.EventMessage {
			continue
		}
		m := e.Msg
		if m.Kind == lv.KindRequest && m.RequestType() == lv.ReqConnect {
			c.d.SendResponse(levconn.Critical, lv.ResConnect, m.Number, lv.Connect{CheckValue: lv.CheckValue}.Append(nil))
			continue
		}
		if m.Kind == lv.KindResponse && m.ResponseTo == num && m.ResponseType() == want {
			m.Payload = append([]byte(nil), m.Payload...)
			return &m, nil
		}
	}
}

// Close sends CloseConnection (so that the server releases the connection
// at once rather than timing it out; its ack is not waited for) and
// closes the socket.
func (c *Conn) Close() {
	c.d.SendResponse(levconn.Critical, lv.ResCloseConnection, 0, nil)
	c.d.Close()
}
