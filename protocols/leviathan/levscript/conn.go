package levscript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// Conn carries a script's messages over a Leviathan connection engine
// (levconn.Driver): a send is one message (this catalog's unit) that the
// engine carries in an Ln packet with its own PKT_ID and acks, Critical
// as the built-in client's, resent until acked or answered; a receive is
// the next new message the peer sent, a request or a response, duplicates
// suppressed. It is the one script transport of the protocol: run's
// sessions (levclient) and conform's user cases (levcases) each give it
// their driver and hear its events.
//
// The MessageNumber is the one in the script's bytes, and the engine's
// own count goes on after it (levconn.Conn.SendMessage): Conn sees the
// bytes after the catalog encoded them, never the catalog's session.
type Conn struct {
	Driver *levconn.Driver
	Ctx    context.Context
	// Event, when set, hears every engine event Recv reads: a message
	// before Recv returns it, the connection's close before Recv fails
	// with it, and the rest (acks, resends, duplicates), which Recv reads
	// past.
	Event func(*levconn.Event)
}

// Send implements script.Transport: b is one encoded message.
func (c Conn) Send(_ string, b []byte) (time.Time, error) {
	sent := time.Now()
	_, err := c.Driver.SendMessage(levconn.Critical, b)
	return sent, err
}

// Recv implements script.Transport. The deadline passing is
// os.ErrDeadlineExceeded; a socket error (see levconn.IsRefused) and the
// context's end are returned as they are.
func (c Conn) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	for {
		e, err := c.Driver.Next(c.Ctx, deadline)
		at := time.Now()
		switch {
		case errors.Is(err, levconn.ErrTimeout):
			return "", nil, at, os.ErrDeadlineExceeded
		case err != nil:
			return "", nil, at, err
		}
		if c.Event != nil {
			c.Event(&e)
		}
		switch e.Kind {
		case levconn.EventMessage:
			return "", lv.AppendMessage(nil, &e.Msg), at, nil
		case levconn.EventClosed:
			return "", nil, at, fmt.Errorf("the connection closed (%v)", e.Reason)
		}
	}
}

// IsClose reports whether b, one encoded message, is a Response
// CloseConnection: after sending it the connection is done.
func IsClose(b []byte) bool {
	return len(b) >= 7 && lv.MessageKind(b[0]) == lv.KindResponse && lv.ResponseType(uint16(b[5])<<8|uint16(b[6])) == lv.ResCloseConnection
}
