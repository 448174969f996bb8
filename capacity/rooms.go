package capacity

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/levconn"
	"github.com/lobbybench/lobbybench/simclient/udpclient"
	lv "github.com/lobbybench/lobbybench/wire/leviathan"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
)

// UDPRooms counts the rooms a udp-lobby lists at addr, asked on a socket
// of its own (as the recovery drill's room check does): up to three
// tries, each waiting timeout/3 for the LOBBY_ROOM_LIST.
func UDPRooms(ctx context.Context, addr netip.AddrPort, profile string, timeout time.Duration) (int, error) {
	l, err := udpclient.ListRooms(ctx, addr, profile, 0xFFF1, timeout)
	return len(l.Rooms), err
}

// TCPRooms counts the rooms a tcp-lobby lists at addr, on a connection of
// its own: one LIST_ROOMS_REQ, the first LIST_ROOMS_ACK within timeout.
// The protocol lists at most tcplobby.MaxRooms, so a count at that cap is
// "at least".
func TCPRooms(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (int, error) {
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
	if err := tcplobby.NewFrameWriter(conn).WriteMessage(&tcplobby.ListRoomsReq{}); err != nil {
		return 0, err
	}
	fr := tcplobby.NewFrameReader(conn, 0)
	for range 64 {
		p, err := fr.Next()
		if err != nil {
			return 0, fmt.Errorf("no LIST_ROOMS_ACK from %v within %v: %w", addr, timeout, err)
		}
		if len(p) == 0 || tcplobby.Type(p[0]) != tcplobby.TypeListRoomsAck {
			continue
		}
		var ack tcplobby.ListRoomsAck
		if err := ack.DecodeOpts(p, tcplobby.Options{}); err != nil {
			return 0, err
		}
		return int(ack.Count), nil
	}
	return 0, fmt.Errorf("no LIST_ROOMS_ACK from %v among 64 frames", addr)
}

// LevPlayers is the player count a Leviathan server reports at addr, asked
// on a connection of its own (leviathan.md §2, §3): Connect(42),
// Security(None), Authenticate, then Serverstatus, whose ServerStatus
// carries Players; the connection is closed after (CloseConnection). It
// never joins, so it is not a player itself. Each request waits up to
// timeout for its answer. A server that completes the handshake and does
// not answer Serverstatus (the original engine never does) gives an error
// wrapping ErrNoCount.
func LevPlayers(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (int, error) {
	c, err := levHandshake(ctx, addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.close()
	m, err := c.ask(lv.ReqServerstatus, nil, lv.ResServerStatus)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, levconn.ErrTimeout) {
			return 0, fmt.Errorf("%w: %v answered the handshake but not Serverstatus within %v (the original Leviathan engine never answers it)", ErrNoCount, addr, timeout)
		}
		return 0, err
	}
	var st lv.ServerStatus
	if err := st.Decode(m.Payload); err != nil {
		return 0, fmt.Errorf("ServerStatus from %v: %v", addr, err)
	}
	return int(st.Players), nil
}

// levConn is a Leviathan client connection of lobbybench's own, asking
// one request at a time.
type levConn struct {
	ctx     context.Context
	d       *levconn.Driver
	addr    netip.AddrPort
	timeout time.Duration
}

// levHandshake dials addr and authenticates: Connect(42),
// Security(None), Authenticate.
func levHandshake(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (*levConn, error) {
	d, err := levconn.Dial(netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port()), levconn.DriverOptions{})
	if err != nil {
		return nil, err
	}
	c := &levConn{ctx: ctx, d: d, addr: addr, timeout: timeout}
	for _, h := range []struct {
		t    lv.RequestType
		p    []byte
		want lv.ResponseType
	}{
		{lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil), lv.ResConnect},
		{lv.ReqSecurity, lv.SecurityRequest{SecureType: lv.SecureTypeNone}.Append(nil), lv.ResSecurity},
		{lv.ReqAuthenticate, lv.AuthenticateRequest{UserName: []byte("lobbybench")}.Append(nil), lv.ResAuthenticate},
	} {
		if _, err := c.ask(h.t, h.p, h.want); err != nil {
			d.Close()
			return nil, err
		}
	}
	return c, nil
}

// ask sends a Critical request and waits up to c.timeout for its
// response of type want (an error wrapping levconn.ErrTimeout when none
// comes). The server's own Connect is answered, as the engine's client
// answers it.
func (c *levConn) ask(t lv.RequestType, payload []byte, want lv.ResponseType) (*lv.Message, error) {
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

// close sends CloseConnection (so that the server releases the
// connection at once rather than timing it out; its ack is not waited
// for) and closes the socket.
func (c *levConn) close() {
	c.d.SendResponse(levconn.Critical, lv.ResCloseConnection, 0, nil)
	c.d.Close()
}
