package udpclient

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/script"
	"github.com/lobbybench/lobbybench/simclient"
)

// scriptTransport plays a session's scripted steps on its socket: the
// lobby's channel to the target, the instance's to the port the last
// ROOM_CREATED or JOIN_SUCCESS named (script.Router), on the lobby's host.
// A datagram from another port is judged as a built-in step's is
// (session.channel): a reply from another port of the lobby's or the
// instance's host, echoing a sequence id this client used (the script's
// own included: followSent), is a U-REPLY-SOURCE and is used, on the
// channel its type belongs to; one from another host is a violation and
// not used; anything else is stray (counted in the harness section).
type scriptTransport struct{ s *session }

// ScriptTransport implements simclient.Scripter.
func (s *session) ScriptTransport(ctx context.Context) (script.Transport, error) {
	s.tr.watch(ctx, s.Shared)
	return scriptTransport{s}, nil
}

func (t scriptTransport) Send(channel string, b []byte) (time.Time, error) {
	to := t.s.rt.lobby
	if channel == "instance" {
		if !t.s.inst.IsValid() {
			return time.Time{}, errors.New("no instance yet: no ROOM_CREATED or JOIN_SUCCESS named one")
		}
		to = t.s.inst
	}
	err := t.s.tr.send(to, b)
	if err == nil {
		t.s.followSent(b)
	}
	return t.s.tr.sent.Time(), err
}

// followSent counts the sequence id of datagram b, which a script sent,
// as used by this client when it is a little past the last one used (the
// script's messages take the next ids of the counter it shares with the
// built-in steps; a datagram broken on purpose still took one): a reply
// to it from another port is then known as this client's (plausible),
// before the step ends and FollowScript catches the counter up.
func (s *session) followSent(b []byte) {
	h, err := udpwire.DecodeHeader(b, s.sendProfile(0))
	if err != nil && !headerRead(err) {
		return
	}
	s.takeSeqs(h.Seq, maxFollowed)
}

// takeSeqs counts the ids after the last one used, up to last, as used,
// when last is at most max past it (not behind it: ids wrap at 2^16).
func (s *session) takeSeqs(last, max uint16) {
	if d := last - s.seq; d != 0 && d <= max {
		s.seq += d
		s.useIDs(int(d))
	}
}

// headerRead reports whether DecodeHeader's err still read the header (a
// datagram broken past it): apart, so that followSent's every call does
// not allocate the variable errors.As fills.
func headerRead(err error) bool {
	var e *udpwire.Error
	return errors.As(err, &e) && e.HaveHeader
}

// maxFollowed bounds how far past the last sequence id used followSent
// takes a script's: raw bytes may carry any id.
const maxFollowed = 64

// scriptOtherPort judges a datagram a script's transport received from
// from, neither the lobby's port nor the instance's, as handle does: the
// channel to take it on, or false when it is not the target's reply
// (stray, or from another host). A script does not apply on_violation (no
// violation fails a scripted step): the reply is taken either way.
func (s *session) scriptOtherPort(data []byte, from netip.AddrPort) (string, bool) {
	var m udpwire.Message
	if _, ok := s.channel(data, from, &m); !ok {
		return "", false
	}
	ch := m.Type.Channel() // channel decoded it (plausible)
	_ = s.Shared.ReplyViolation(s.Rec, RuleUReplySource, data, nil, s.sourceDetail(&m, from, ch), true)
	if ch == udpwire.ChannelInstance {
		return "instance", true
	}
	return "lobby", true
}

// Recv waits as a built-in request's wait does: with waits that may
// suspend (simclient.Base.MayAwait), when nothing is there yet it
// suspends the session (simclient.Base.Await) and returns
// script.ErrSuspended; the script's next Recv, once Resume plays the
// step again, goes on with the same wait.
func (t scriptTransport) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	for {
		t.s.tr.noPark = t.s.MayAwait(deadline)
		data, from, err := t.s.tr.recv(deadline)
		if err != nil {
			return t.recvFailed(err, deadline)
		}
		at := t.s.replyAt()
		switch {
		case from == t.s.rt.lobby:
			return "lobby", data, at, nil
		case t.s.inst.IsValid() && from == t.s.inst:
			return "instance", data, at, nil
		}
		if ch, ok := t.s.scriptOtherPort(data, from); ok {
			return ch, data, at, nil
		}
	}
}

// recvFailed is Recv's answer to recv's error err: the wait suspended,
// timed out or failed.
func (t scriptTransport) recvFailed(err error, deadline time.Time) (string, []byte, time.Time, error) {
	at := time.Now()
	switch {
	case err == errWouldBlock:
		_ = t.s.tr.await(&t.s.Base, deadline) // simclient.ErrSuspended
		return "", nil, at, script.ErrSuspended
	case errors.Is(err, errTimeout):
		return "", nil, at, os.ErrDeadlineExceeded
	}
	return "", nil, at, err
}

// Route points the instance's channel at the port a reply named, on the
// lobby's host.
func (t scriptTransport) Route(r script.Route) error {
	if r.Channel != "instance" {
		return nil
	}
	port := r.Port
	if r.Addr.IsValid() {
		port = r.Addr.Port()
	}
	t.s.setInstance(port)
	return nil
}

// Follow implements script.Follower: the built-in steps after a script
// see the room it created (the group's, for its members' join: {room:
// created}) or joined, the instance that accepted it and
// the game's progress, as if they had read those messages themselves
// (Route has already pointed the instance's channel at the port the
// room's message named). A field the message did not carry whole (its
// payload broke a rule) is not taken.
func (t scriptTransport) Follow(_ string, d script.Decoded) {
	s := t.s
	num := func(field string) (uint64, bool) { v, ok := d.Fields[field].(uint64); return v, ok }
	switch d.Name {
	case followed.roomCreated:
		id, ok1 := num(followed.roomID)
		port, ok2 := num(followed.port)
		if ok1 && ok2 { // as create_room takes its reply
			s.roomCreated(uint32(id), uint16(port))
			s.shareRoom()
		}
	case followed.joinSuccess:
		if id, ok := num(followed.roomID); ok {
			s.roomID = uint32(id)
		}
	case followed.joinAccept:
		s.instJoined = true
	case followed.allReady:
		s.allReady = true
	case followed.tick:
		if v, ok := num(followed.secondsLeft); ok {
			s.lastTick = int(v)
		}
	case followed.gameStart:
		s.gameStarted = true
		s.GameStarted(time.Now())
	case followed.gameEnd:
		s.gameEnded = true
		s.GameEnded(time.Now())
	case followed.disconnect:
		s.kicked = true
	}
}

// followed names the messages and fields Follow reads, as udpscript's
// catalog names them (udp-lobby.md; TestFollowedNames checks them there).
var followed = struct {
	roomCreated, joinSuccess, joinAccept, allReady, tick, gameStart, gameEnd, disconnect string
	roomID, port, secondsLeft                                                            string
}{
	udpwire.LobbyRoomCreated.String(), udpwire.LobbyJoinSuccess.String(), udpwire.ServerJoinAccept.String(),
	udpwire.ServerAllReady.String(), udpwire.ServerCountdownTick.String(), udpwire.ServerGameStart.String(),
	udpwire.ServerGameEnd.String(), udpwire.ServerDisconnect.String(),
	"roomId", "port", "secondsLeft",
}

// FollowedFields are the (message, field) pairs Follow reads, for the
// catalog's test.
func FollowedFields() [][2]string {
	return [][2]string{
		{followed.roomCreated, followed.roomID}, {followed.roomCreated, followed.port},
		{followed.joinSuccess, followed.roomID}, {followed.tick, followed.secondsLeft},
	}
}

// ScriptSeq is a script session's sequence counter (udpscript's): a
// flow's built-in steps and its scripts take sequence ids from one
// counter, so that neither sends an id the other used (a server caches a
// reply by sequence id and answers a reused one with it, as a retry).
type ScriptSeq interface {
	// LastSeq is the last sequence id the script gave.
	LastSeq() uint16
	// FollowSeq takes last, the built-in steps' last id, as its own,
	// unless the script has gone on past it (a scripted step resumed
	// after a suspension).
	FollowSeq(last uint16)
}

// SyncScript implements simclient.ScriptSyncer: the script's next id
// follows the built-in steps' last.
func (s *session) SyncScript(cs any) {
	if q, ok := cs.(ScriptSeq); ok && s.sent > 0 {
		q.FollowSeq(s.seq)
	}
}

// FollowScript implements simclient.ScriptFollower: the built-in steps'
// next id follows the script's last, and the ids the script took count
// as this client's (a late reply to one is known, not a stranger's).
func (s *session) FollowScript(cs any) {
	q, ok := cs.(ScriptSeq)
	if !ok {
		return
	}
	s.takeSeqs(q.LastSeq(), 1<<15-1)
}

var (
	_ script.Router            = scriptTransport{}
	_ script.Follower          = scriptTransport{}
	_ simclient.ScriptSyncer   = (*session)(nil)
	_ simclient.ScriptFollower = (*session)(nil)
)
