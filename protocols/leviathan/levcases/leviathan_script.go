package levcases

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// scriptConn is a user case's transport: a connection of the case (its
// paced source, every datagram in its wire log) carrying the script's
// messages with the protocol's script transport (levscript.Conn), the
// engine beneath doing packet ids, acks and resends. A receive's wait is
// the case's (conformance.Wait): a harness stall extends it.
type scriptConn struct {
	c    *levClient
	conn levscript.Conn
	bye  bool // the script said CloseConnection, or the connection closed
}

// scriptTransport is the group's ScriptTransport. The script sends its
// own Request Connect.
func scriptTransport(t *conformance.T) (conformance.ScriptConn, error) {
	c, err := levDial(t, levconn.Config{})
	if err != nil {
		return nil, err
	}
	s := &scriptConn{c: c}
	s.conn = levscript.Conn{Driver: c.d, Ctx: t.Ctx, Event: s.event}
	return s, nil
}

func (s *scriptConn) Send(channel string, b []byte) (time.Time, error) {
	s.bye = s.bye || levscript.IsClose(b)
	return s.conn.Send(channel, b)
}

// event notes the connection's end, by the server's CloseConnection or
// the engine's.
func (s *scriptConn) event(e *levconn.Event) {
	m := &e.Msg
	s.bye = s.bye || e.Kind == levconn.EventClosed ||
		e.Kind == levconn.EventMessage && m.Kind == lv.KindResponse && m.ResponseType() == lv.ResCloseConnection
}

// Recv reads the next new message within the case's wait until deadline.
func (s *scriptConn) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	d := time.Until(deadline)
	if d <= 0 {
		return "", nil, time.Now(), os.ErrDeadlineExceeded
	}
	w := s.c.t.NewWait(d)
	for {
		ch, b, at, err := s.conn.Recv(w.Deadline())
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded) && !w.TimedOut():
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			return "", nil, at, fmt.Errorf("%w: %v", os.ErrDeadlineExceeded, w.Err(conformance.ErrSilence))
		case levconn.IsRefused(err):
			return "", nil, at, fmt.Errorf("%w: port closed (ICMP unreachable)", conformance.ErrUnreachable)
		}
		return ch, b, at, err
	}
}

// Close ends the connection. Unless the script or the server closed it,
// it tells the server first (Response CloseConnection, once), so that a
// user case holds no player slot after it.
func (s *scriptConn) Close() error {
	if !s.bye {
		s.c.d.SendResponse(levconn.None, lv.ResCloseConnection, 0, nil)
	}
	s.c.Close()
	return nil
}
