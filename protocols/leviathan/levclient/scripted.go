package levclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// scriptTransport plays a session's scripted steps over its connection
// engine: a scripted send is one message (levscript's unit) that the
// engine carries in an Ln packet with its own PKT_ID and acks, Critical as
// the built-in client's, resent until acked or answered; a receive is the
// next new message the server sent, a request or a response, duplicates
// suppressed. Resends, duplicates, acks and bytes are recorded as the
// built-in steps record them.
//
// The MessageNumber is the one in the script's bytes (levscript numbers
// from 1, as the engine does), and the engine's own count goes on after
// it (levconn.Conn.SendMessage): the transport sees the bytes after the
// catalog encoded them, never the catalog's session, so it cannot number
// the message for the script, and a MessageNumber a script gives on
// purpose goes out as given.
type scriptTransport struct {
	s   *session
	ctx context.Context
}

// ScriptTransport implements simclient.Scripter. The session's socket is
// connected from its start (New); a script sends its own Request Connect.
// A flow that plays a script leaves the server in a state the client does
// not follow (a player joined, or not), so its connection carries no
// later flow (Reuse).
func (s *session) ScriptTransport(ctx context.Context) (script.Transport, error) {
	if s.closed || s.d.Closed() {
		return nil, errors.New("the connection was closed earlier in the flow")
	}
	s.seated = true
	return scriptTransport{s: s, ctx: ctx}, nil
}

// Send implements script.Transport: b is one encoded message.
func (t scriptTransport) Send(_ string, b []byte) (time.Time, error) {
	sent := time.Now()
	if _, err := t.s.d.SendMessage(levconn.Critical, b); err != nil {
		return sent, err
	}
	if len(b) >= 7 && lv.MessageKind(b[0]) == lv.KindResponse && lv.ResponseType(uint16(b[5])<<8|uint16(b[6])) == lv.ResCloseConnection {
		t.s.closed = true // later built-in steps fail as closed; the script may still listen
	}
	return sent, nil
}

// Recv implements script.Transport.
func (t scriptTransport) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	s := t.s
	for {
		e, err := s.d.Next(t.ctx, deadline)
		at := time.Now()
		switch {
		case errors.Is(err, levconn.ErrTimeout):
			return "", nil, at, os.ErrDeadlineExceeded
		case err != nil:
			return "", nil, at, err
		}
		switch e.Kind {
		case levconn.EventMessage:
			m := &e.Msg
			if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResCloseConnection {
				s.closed, s.serverBye = true, true
			}
			return "", lv.AppendMessage(nil, m), at, nil
		case levconn.EventResent:
			if e.MsgKind == lv.KindRequest {
				name := levscript.Name(e.MsgKind, e.Type)
				if name == "" {
					name = "raw" // what the script measures it under
				}
				s.Rec.Retry(s.Shared.MessageKey(name))
			}
		case levconn.EventClosed:
			s.closed = true
			return "", nil, at, fmt.Errorf("the connection closed (%v)", e.Reason)
		default:
			s.engineEvent(&e)
		}
	}
}

// SyncScript implements simclient.ScriptSyncer: a script's next message
// takes the number after those the flow's built-in steps sent, so that
// the server does not drop it as a duplicate (numbers wrap past 0, as
// levconn's do).
func (s *session) SyncScript(cs any) {
	ls, ok := cs.(*levscript.Session)
	if !ok {
		return
	}
	if n := s.d.Conn().NextMessageNumber(); int32(n-ls.NextMessageNumber) > 0 {
		ls.NextMessageNumber = n
	}
}
