package tcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpscript"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	lbscript "github.com/lobbybench/lobbybench/script"
)

// scriptTransport plays a session's scripted steps on its connection: a
// unit is one frame's payload (type byte first, tcpscript's catalog). The
// connection is the session's own: the one a connect step (or Prepare, or
// the previous flow) opened, else dialled by the first send or expect as
// connect dials it; the script sends CONNECT_REQ itself. tcp-lobby has one
// channel (""): GAME_START's route to the game instance (script.Route) is
// not followed, the instance being udp-lobby's protocol, so scriptTransport
// is no script.Router. Frames read by a script are not handled as the
// built-in steps handle theirs: a built-in step after a script does not
// know the room or hash the script got.
type scriptTransport struct{ s *session }

// ScriptTransport implements simclient.Scripter. The connection's reads
// already end with ctx (Run's watch).
func (s *session) ScriptTransport(context.Context) (lbscript.Transport, error) {
	return scriptTransport{s}, nil
}

// conn is the session's connection, dialled now (with the plan's request
// timeout) if it has none.
func (t scriptTransport) conn() (*frameConn, error) {
	if err := t.s.connect(t.s.Shared.Plan.Defaults.Timeout); err != nil {
		return nil, err
	}
	return t.s.fc, nil
}

// Send writes b framed (tcpscript.Frame) as one frame.
func (t scriptTransport) Send(channel string, b []byte) (time.Time, error) {
	if channel != "" {
		return time.Time{}, fmt.Errorf("tcp-lobby has one channel, not %q", channel)
	}
	fc, err := t.conn()
	if err != nil {
		return time.Now(), err
	}
	sent := time.Now()
	frame := tcpscript.Frame(b)
	t.s.req = frame
	return sent, fc.send(frame)
}

// Recv returns the next frame's payload, a copy (the reader reuses its
// buffer). A framing error is recorded as the built-in steps record it
// (a violation) and ends the stream; the server closing the connection is
// an error saying so.
func (t scriptTransport) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	fc, err := t.conn()
	if err != nil {
		return "", nil, time.Now(), err
	}
	p, err := fc.next(deadline)
	at := time.Now()
	switch {
	case err == nil:
		return "", bytes.Clone(p), at, nil
	case errors.Is(err, errTimeout):
		return "", nil, at, os.ErrDeadlineExceeded
	case errors.Is(err, errCancelled):
		return "", nil, at, err
	}
	reason := t.s.readFailed(err)
	if tcpwire.RuleOf(err) != "" {
		return "", nil, at, &reqFail{Reason: reason, Err: fmt.Errorf("the lobby's stream broke the framing: %w", err)}
	}
	return "", nil, at, &reqFail{Reason: reason, Err: fmt.Errorf("the lobby ended the connection: %w", err)}
}
