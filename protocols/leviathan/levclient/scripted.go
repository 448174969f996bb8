package levclient

import (
	"context"
	"errors"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// scriptTransport plays a session's scripted steps over its connection
// engine with the protocol's one script transport (levscript.Conn), and
// records resends, duplicates and acks as the built-in steps record them.
type scriptTransport struct {
	levscript.Conn
	s *session
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
	return scriptTransport{Conn: levscript.Conn{Driver: s.d, Ctx: ctx, Event: s.scriptEvent}, s: s}, nil
}

// Send implements script.Transport: b is one encoded message.
func (t scriptTransport) Send(channel string, b []byte) (time.Time, error) {
	sent, err := t.Conn.Send(channel, b)
	if err == nil && levscript.IsClose(b) {
		t.s.closed = true // later built-in steps fail as closed; the script may still listen
	}
	return sent, err
}

// scriptEvent records an engine event a script's receive read.
func (s *session) scriptEvent(e *levconn.Event) {
	switch e.Kind {
	case levconn.EventMessage:
		if m := &e.Msg; m.Kind == lv.KindResponse && m.ResponseType() == lv.ResCloseConnection {
			s.closed, s.serverBye = true, true
		}
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
	default:
		s.engineEvent(e)
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
