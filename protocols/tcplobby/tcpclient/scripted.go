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
	"github.com/lobbybench/lobbybench/simclient"
)

// scriptTransport plays a session's scripted steps on its connection: a
// unit is one frame's payload (type byte first, tcpscript's catalog). The
// connection is the session's own: the one a connect step (or Prepare, or
// the previous flow) opened, else dialled by the first send or expect as
// connect dials it; the script sends CONNECT_REQ itself. tcp-lobby has one
// channel (""): GAME_START's route to the game instance (script.Route) is
// not followed, the instance being udp-lobby's protocol, so scriptTransport
// is no script.Router. It is a script.Follower: the built-in steps after
// a script go on from the name, hash, room, members, countdown and game
// the script's messages set, and judge the frames that follow by them.
type scriptTransport struct{ s *session }

// ScriptTransport implements simclient.Scripter. The connection's reads
// already end with ctx (Run's watch).
func (s *session) ScriptTransport(context.Context) (lbscript.Transport, error) {
	return scriptTransport{s}, nil
}

// ScriptSession implements simclient.ScriptSessioner: the scripts
// decode with the session's own decoder (Follow decodes what they took
// with it again, one message of each type between them).
func (s *session) ScriptSession() any { return tcpscript.SessionOn(s.dec) }

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
	t.s.followSent(b)
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
		t.s.scriptIn = bytes.Clone(p)
		return "", t.s.scriptIn, at, nil
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

// Follow implements script.Follower: the frame the script just took
// (Recv's, whose catalog decoding is d) is followed as the built-in steps
// would have followed it, without judging it again (the script's catalog
// did). A frame that does not decode whole is not followed.
func (t scriptTransport) Follow(_ string, d lbscript.Decoded) {
	if m, err := t.s.dec.Decode(t.s.scriptIn); err == nil {
		t.s.follow(m)
	}
}

// errScriptCreateRefused fails the group's room when its creator's
// scripted CREATE_ROOM_REQ got RoomID 0: its members stop waiting for it.
var errScriptCreateRefused = errors.New("the creator's scripted CREATE_ROOM_REQ was answered with RoomID 0")

// follow applies a frame a script received to the session's state, as
// handle's cases do once they have judged it.
func (s *session) follow(m tcpwire.Message) {
	switch m := m.(type) {
	case *tcpwire.ConnectAck:
		if m.Success {
			s.hash = m.PlayerHash
		}
	case *tcpwire.CreateRoomAck:
		s.followCreate(m)
	case *tcpwire.JoinRoomAck:
		if m.Status == tcpwire.JoinSuccess && s.joining != 0 {
			s.enterRoom(s.joining, m.PlayerHash)
			s.setMembers(m.Players[:m.Count])
		}
	case *tcpwire.RoomUpdate:
		if s.room != 0 {
			s.setMembers(m.Players[:m.Count])
		}
	case *tcpwire.PlayerJoin:
		if s.room != 0 {
			s.members[m.Player.Hash] = m.Player.Ready
		}
	case *tcpwire.PlayerLeft:
		delete(s.members, m.PlayerHash)
	case *tcpwire.PlayerReady:
		if s.room != 0 {
			s.members[m.PlayerHash] = m.Ready
		}
	case *tcpwire.Countdown:
		s.lastCount = int(m.Seconds)
		s.countdowns++
	case *tcpwire.GameStart:
		s.gameStarted, s.gameStart = true, *m
		s.GameStarted(time.Now())
	case *tcpwire.ErrorMsg:
		if s.lastCount >= 0 && !s.gameStarted {
			s.lastCount = -1 // the countdown was cancelled
		}
	}
}

// followCreate takes a scripted create's answer: the room, entered and
// made the group's (join: {room: created}), or, refused, the group told
// that its room will not exist.
func (s *session) followCreate(m *tcpwire.CreateRoomAck) {
	g := s.Member.Group
	if m.RoomID == 0 {
		if g != nil {
			g.FailRoom(errScriptCreateRefused)
		}
		return
	}
	s.enterRoom(m.RoomID, m.PlayerHash)
	s.members[m.PlayerHash] = false
	if g != nil {
		g.SetRoom(simclient.Room{ID: s.room})
	}
}

// followSent follows a message a script sends (b: the frame's payload):
// the player's name it gives, the room it asks to join (the JOIN_ROOM_ACK
// does not say which), a DISCONNECT leaving the room. A payload that does
// not decode (raw bytes, a message broken on purpose) changes nothing.
func (s *session) followSent(b []byte) {
	m, err := s.dec.Decode(b)
	if err != nil {
		return
	}
	switch m := m.(type) {
	case *tcpwire.ConnectReq:
		s.name = m.PlayerName
	case *tcpwire.CreateRoomReq:
		s.name = m.PlayerName
	case *tcpwire.JoinRoomReq:
		s.name, s.joining = m.PlayerName, m.RoomID
	case *tcpwire.Disconnect:
		s.room, s.members = 0, map[uint64]bool{}
	}
}

var (
	_ lbscript.Follower         = scriptTransport{}
	_ simclient.ScriptSessioner = (*session)(nil)
)
