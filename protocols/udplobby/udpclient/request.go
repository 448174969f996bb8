package udpclient

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// reqFail is a failed request (simclient.RequestError); Reason names it in the metrics.
type reqFail = simclient.RequestError

// createdListWindow is how soon after ROOM_CREATED a list must show the room
// (RuleUCreatedList is best effort: rooms may legitimately vanish later).
const createdListWindow = time.Second

// encode appends request p (with p.seq) in profile prof.
func (s *session) encode(dst []byte, p *pending, prof udpwire.Profile) []byte {
	switch p.typ {
	case udpwire.LobbyListRooms:
		return udpwire.AppendListRooms(dst, prof, p.seq)
	case udpwire.LobbyCreateRoom:
		return udpwire.AppendCreateRoom(dst, prof, p.seq)
	case udpwire.LobbyJoinRoom:
		return udpwire.AppendJoinRoom(dst, prof, p.seq, p.roomID)
	case udpwire.ClientPing:
		return udpwire.AppendPing(dst, prof, p.seq, p.value)
	case udpwire.ClientDisconnect:
		m := udpwire.Message{Header: udpwire.Header{Type: udpwire.ClientDisconnect, Seq: p.seq}, Value: p.value & 0xFF}
		out, _ := udpwire.Append(dst, prof, &m)
		return out
	}
	out, _ := udpwire.AppendEmpty(dst, prof, p.typ, p.seq)
	return out
}

// sendProfile is the header profile of attempt k of a request: the run's
// profile, or with "auto" before any reply was recognised, spec and
// rtype17 in turn.
func (s *session) sendProfile(attempt int) udpwire.Profile {
	if !s.known {
		s.syncProfile()
	}
	if s.known {
		return s.profile
	}
	if attempt%2 == 1 {
		return udpwire.ProfileRType17
	}
	return udpwire.ProfileSpec
}

// request sends p with the next sequence id and waits for its reply under
// pol: timeout, then re-sends with the same sequence id after the retry
// interval, up to pol.Retries times. It records the request under its
// message key (success, failure, retries) and returns when it was first
// sent. The reply's effects (rooms, instance address) are applied by
// handle.
//
// In a step that can run again (mayAwait), with waits that may suspend
// (simclient.Base.MayAwait), a request whose reply is not there yet
// suspends the session instead of parking (simclient.Base.Await) and
// returns simclient.ErrSuspended; the step's next call of request, once
// Resume runs the step again, goes on waiting for the same reply (p is
// then ignored).
func (s *session) request(p *pending, pol scenario.RequestPolicy) (time.Time, error) {
	if !s.waitSuspended {
		s.p = *p
		s.seq++
		s.useIDs(1)
		s.p.seq = s.seq
		s.p.active = true
		s.obuf = s.encode(s.obuf[:0], &s.p, s.sendProfile(0))
		err := s.tr.sendQueued(s.p.to, s.obuf, &s.sentNS)
		s.p.sent = s.tr.sent // just before the system call (transport.sent), or queued
		if err != nil {
			s.p.active = false
			return s.p.sent.Time(), s.sendFailed(s.rt.keys[s.p.typ], err)
		}
		s.pw = replyWait{deadline: s.tr.sent.Add(pol.Timeout)}
	}
	s.waitSuspended = false
	defer func() {
		if !s.waitSuspended {
			s.p.active = false
		}
	}()
	key := s.rt.keys[s.p.typ]
	for {
		wait := s.pw.deadline.Time()
		if !s.pw.resendAt.IsZero() {
			wait = s.pw.resendAt.Time()
		}
		s.tr.noPark = s.mayAwait && s.MayAwait(wait)
		data, from, err := s.tr.recv(wait)
		switch {
		case err == nil:
			v := s.handle(data, from)
			if v != replyNone && !s.p.inst {
				s.answered = answeredReq{seq: s.p.seq, once: s.p.attempt == 0, valid: true}
			}
			switch v {
			case replyOK:
				now := s.replyAt()
				sent := queuedSent(s.p.sent, &s.sentNS)
				s.p.sent = instant.Of(sent)
				s.pw.replied = instant.Of(now)
				s.Rec.Record(key, s.p.intended.Time(), sent, now)
				s.Shared.Observe(s.ID, now, now.Sub(s.p.intended.Time()), true)
				return sent, nil
			case replyBad:
				s.Rec.Fail(key, result.ReasonViolation, time.Now())
				return s.p.sent.Time(), s.badReply
			case replyRefused:
				s.Rec.Fail(key, s.refusal.Reason, time.Now())
				return s.p.sent.Time(), s.refusal
			}
			continue
		case err == errWouldBlock:
			s.waitSuspended = true
			return s.p.sent.Time(), s.tr.await(&s.Base, wait)
		case errors.Is(err, errTimeout):
			if err := s.timedOut(key, pol, &s.pw.deadline, &s.pw.resendAt); err != nil {
				return s.p.sent.Time(), err
			}
		case errors.Is(err, errCancelled):
			s.Rec.Cut(key, time.Since(s.p.sent.Time()), pol.Timeout)
			return s.p.sent.Time(), errCancelled
		default:
			return s.p.sent.Time(), s.readFailed(key, err)
		}
	}
}

// TakeInFlight implements simclient.InFlight: the request whose wait
// the session suspended, which the end of the run stopped it in (Resume
// does not go back to the step).
func (s *session) TakeInFlight() (metrics.Key, time.Time, bool) {
	if !s.p.active || !s.waitSuspended {
		return metrics.Key(0), time.Time{}, false
	}
	s.p.active, s.waitSuspended = false, false
	return s.rt.keys[s.p.typ], s.p.sent.Time(), true
}

// The rarer outcomes of request are functions of their own, never
// inlined: request's frame sits on every client's goroutine stack while
// it waits for a reply, and theirs need not (simclient.StackBudget).

// timedOut handles the wait of the pending request (key) ending at its
// deadline or retry time, under pol: it re-sends it (a new *deadline),
// or schedules a re-send (*resendAt), and returns nil to wait again; or
// fails the request (no more retries, a failed send) or cuts it (the run
// is stopping) and returns its error.
//
//go:noinline
func (s *session) timedOut(key metrics.Key, pol scenario.RequestPolicy, deadline, resendAt *instant.Instant) error {
	now := time.Now()
	if s.p.attempt < pol.Retries && s.Stop != nil && s.Stop.Err() != nil {
		// The run is stopping: a request in flight may still be
		// answered, but it is not sent again (not a failure: cut, and
		// silent: its timeout passed).
		s.Rec.Cut(key, now.Sub(s.p.sent.Time()), pol.Timeout)
		return errCancelled
	}
	if s.p.attempt >= pol.Retries {
		s.Rec.Fail(key, result.ReasonTimeout, now)
		s.Shared.Observe(s.ID, now, 0, false)
		return &reqFail{Reason: result.ReasonTimeout,
			Err: fmt.Errorf("no reply to %v seq %d after %d sends, %s timeout each", s.p.typ, s.p.seq, s.p.attempt+1, pol.Timeout)}
	}
	if !resendAt.IsZero() || pol.RetryInterval <= 0 {
		*resendAt = 0
		if err := s.resend(); err != nil {
			return s.sendFailed(key, err)
		}
		*deadline = instant.Now().Add(pol.Timeout)
		return nil
	}
	*resendAt = instant.Of(now).Add(pol.RetryInterval)
	return nil
}

// sendFailed fails the pending request (key) whose send failed with err.
//
//go:noinline
func (s *session) sendFailed(key metrics.Key, err error) error {
	s.Rec.Fail(key, simclient.ReasonSocket, time.Now())
	return &reqFail{Reason: simclient.ReasonSocket, Err: err}
}

// readFailed fails the pending request (key) whose socket read failed
// with err: conn_refused for an ICMP port unreachable, socket otherwise.
//
//go:noinline
func (s *session) readFailed(key metrics.Key, err error) error {
	reason := simclient.ReasonSocket
	if isRefused(err) {
		reason = result.ReasonConnRefused
	}
	s.Rec.Fail(key, reason, time.Now())
	return &reqFail{Reason: reason, Err: err}
}

// resend re-sends the pending request with its sequence id, counting a
// retry for its message and for the step.
func (s *session) resend() error {
	s.p.attempt++
	s.Rec.Retry(s.rt.keys[s.p.typ])
	if s.CurStep >= 0 {
		s.Rec.Retry(s.StepKey(s.CurStep))
	}
	s.obuf = s.encode(s.obuf[:0], &s.p, s.sendProfile(s.p.attempt))
	return s.tr.send(s.p.to, s.obuf)
}

// verdict is what a received datagram meant for the pending request.
type verdict uint8

const (
	replyNone    verdict = iota // not the pending request's reply (event, stale, violation elsewhere)
	replyOK                     // the pending request's good reply
	replyBad                    // the pending request's reply, but it broke a rule (s.badReply)
	replyRefused                // an explicit refusal (JOIN_FAILED, JOIN_DENY: s.refusal)
)

// handle decodes and judges one received datagram. It applies the effects
// of a good reply to the pending request and of instance events.
//
// A datagram from any other port is stray unless it decodes as a
// plausible reply (s.plausible): it is counted in the harness section
// (simclient.Shared.StrayDatagram), not against the target, since other
// programs on the machine send datagrams to ports they once used. A
// plausible one from another host is RuleUReplySource and not used. One
// from the lobby's or the instance's host but another port (a server
// answering through a second socket) is decoded as whichever channel its
// type belongs to and counted as RuleUReplySource, naming the port that
// answered. It is then used as if it came from the right port
// (simclient.ReplyViolation: unless on_violation is fail_step, which fails
// the pending request, and drops such events). Requests keep going to
// the port the lobby gave: udp-lobby.md §15 puts the instance there, and a
// client behind NAT or with a connected socket could use no other.
func (s *session) handle(data []byte, from netip.AddrPort) verdict {
	var msg udpwire.Message // on the stack: no session keeps one
	m := &msg
	ch, ok := s.channel(data, from, m)
	if !ok {
		return replyNone
	}
	other := ch == udpwire.ChannelAny
	s.settleProfile(data)
	dec := udpwire.Decoder{Profile: s.profile, Dir: udpwire.ServerToClient, Channel: ch}
	if err := dec.Decode(data, m); err != nil {
		return s.decodeFailed(data, err)
	}
	if other {
		ch = m.Type.Channel()
	}
	if ch == udpwire.ChannelInstance && m.Type.Event() {
		if other && s.Shared.ReplyViolation(s.Rec, RuleUReplySource, data, nil, s.sourceDetail(m, from, ch), true) != nil {
			return replyNone // on_violation fail_step: not taken
		}
		return s.event(data, m)
	}
	if !s.p.active || m.Seq != s.p.seq || s.p.inst != (ch == udpwire.ChannelInstance) {
		if other {
			s.violation(RuleUReplySource, data, nil, s.sourceDetail(m, from, ch))
		}
		s.unmatched(data, m, ch)
		return replyNone
	}
	if other {
		if v := s.bad(RuleUReplySource, data, s.sourceDetail(m, from, ch), true); v != replyOK {
			return v
		}
	}
	return s.reply(data, m)
}

// channel tells which of this client's channels a datagram from from
// belongs to: the lobby's, the instance's, or ChannelAny for another port
// of one of their hosts (judged by its type). ok is false for a datagram
// already dealt with: a stray one (counted) or a plausible one from
// another host (a violation). A datagram from neither port is decoded
// into m (plausible).
func (s *session) channel(data []byte, from netip.AddrPort, m *udpwire.Message) (ch udpwire.Channel, ok bool) {
	switch {
	case from == s.rt.lobby:
		return udpwire.ChannelLobby, true
	case s.inst.IsValid() && from == s.inst:
		return udpwire.ChannelInstance, true
	case !s.plausible(data, m):
		s.Shared.StrayDatagram()
		return udpwire.ChannelAny, false
	case from.Addr() == s.rt.lobby.Addr() || s.inst.IsValid() && from.Addr() == s.inst.Addr():
		return udpwire.ChannelAny, true // another port of a host this client talks to
	}
	s.violation(RuleUReplySource, data, nil, fmt.Sprintf("%v seq %d from %v, which this client never sent to (lobby %v, instance %v)", m.Type, m.Seq, from, s.rt.lobby, s.inst))
	return udpwire.ChannelAny, false
}

// settleProfile settles the run's header profile from data while it is
// "auto" and unknown.
func (s *session) settleProfile(data []byte) {
	if s.known {
		return
	}
	s.syncProfile()
	if !s.known {
		if p, ok := udpwire.GuessProfile(data); ok {
			s.rt.profile.CompareAndSwap(-1, int32(p))
			s.syncProfile()
		}
	}
}

// unmatched judges a reply that answers no pending request: a second
// reply to one answered already, a late one to a retried request, or a
// sequence id this client never used.
func (s *session) unmatched(data []byte, m *udpwire.Message, ch udpwire.Channel) {
	if ch == udpwire.ChannelLobby && s.oneReply && s.answered.valid && s.answered.once && m.Seq == s.answered.seq {
		s.violation(RuleUReplyDup, data, nil, fmt.Sprintf("%v seq %d: a second reply to the request of that sequence id, sent once and already answered (udp-lobby.md §1: exactly one datagram)", m.Type, m.Seq))
		return
	}
	if s.knownSeq(m.Seq) {
		s.stale++ // a late answer to an earlier (retried) request
		return
	}
	rule := RuleUSeqEcho
	if ch == udpwire.ChannelInstance {
		rule = RuleISeqEcho
	}
	s.violation(rule, data, nil, fmt.Sprintf("%v seq %d: this client sent %s", m.Type, m.Seq, s.usedIDs()))
}

// plausible reports whether data, from a port this client never sent to,
// decodes (into m) as a server's message that could be meant for this
// client: a reply echoing a sequence id it used, or an instance's event
// while it talks to an instance. Anything else is stray: other programs'
// traffic, which says nothing of the target. It never sets the run's
// header profile: under "auto" not yet settled it guesses one for this
// datagram alone.
//
//go:noinline
func (s *session) plausible(data []byte, m *udpwire.Message) bool {
	if !s.known {
		s.syncProfile()
	}
	prof := s.profile
	if !s.known {
		p, ok := udpwire.GuessProfile(data)
		if !ok {
			return false
		}
		prof = p
	}
	dec := udpwire.Decoder{Profile: prof, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelAny}
	if dec.Decode(data, m) != nil {
		return false
	}
	if m.Type.Event() {
		return s.inst.IsValid()
	}
	return s.sent > 0 && s.knownSeq(m.Seq)
}

// sourceDetail describes a message m that came from port from instead of
// the lobby's or the instance's.
func (s *session) sourceDetail(m *udpwire.Message, from netip.AddrPort, ch udpwire.Channel) string {
	want, who := s.rt.lobby, "lobby"
	if ch == udpwire.ChannelInstance {
		want, who = s.inst, "instance"
	}
	return fmt.Sprintf("%v came from port %d, not from the %s's port %d it was sent to (a client behind NAT or with a connected socket never receives it)", m.Type, from.Port(), who, want.Port())
}

// knownSeq reports whether seq is one this session already used.
func (s *session) knownSeq(seq uint16) bool {
	if s.sent >= 1<<16 {
		return true
	}
	d := s.seq - seq // sequence ids used are s.seq-sent+1 … s.seq (mod 2^16)
	return int(d) < int(s.sent)
}

// usedIDs names the sequence ids this socket used, s.seq-sent+1 … s.seq
// (mod 2^16), for a violation's detail.
func (s *session) usedIDs() string {
	switch {
	case s.sent == 0:
		return "no request yet"
	case s.sent >= 1<<16:
		return "every sequence id"
	}
	first := s.seq - uint16(s.sent-1)
	if first <= s.seq {
		return fmt.Sprintf("sequence ids %d-%d", first, s.seq)
	}
	return fmt.Sprintf("sequence ids %d-65535 and 0-%d", first, s.seq)
}

// reply judges the answer to the pending request (sequence already matched).
func (s *session) reply(data []byte, m *udpwire.Message) verdict {
	p := &s.p
	if !answers(p.typ, m.Type) {
		rule := RuleUReplyType
		if p.inst {
			rule = RuleIReplyType
		}
		return s.bad(rule, data, fmt.Sprintf("%v answered with %v", p.typ, m.Type), false)
	}
	switch m.Type {
	case udpwire.LobbyRoomList:
		return s.roomList(data, m)
	case udpwire.LobbyRoomCreated:
		if !s.portOK(m.Port) {
			if v := s.bad(RuleUPortRange, data, fmt.Sprintf("ROOM_CREATED port %d outside instance_ports %d-%d", m.Port, s.rt.ports.First, s.rt.ports.Last), true); v != replyOK {
				return v
			}
		}
		s.roomCreated(m.RoomID, m.Port)
	case udpwire.LobbyJoinSuccess:
		return s.joinSuccess(data, m)
	case udpwire.LobbyJoinFailed:
		s.refusal = &reqFail{Reason: result.ReasonJoinFailed, Err: &simclient.Refusal{Request: p.typ.String(), Reply: m.Type.String(), Hint: joinFailedHint(p.typ)}}
		return replyRefused
	case udpwire.ServerJoinDeny:
		s.refusal = &reqFail{Reason: result.ReasonJoinDeny, Err: &simclient.Refusal{Request: p.typ.String(), Reply: m.Type.String(),
			Hint: "the instance refused the player: a full or started room, or a player it does not expect (udp-lobby.md §15)"}}
		return replyRefused
	case udpwire.ServerJoinAccept:
		s.instJoined = true
	case udpwire.ServerPong:
		if m.Value != p.value {
			return s.bad(RuleIPongEcho, data, fmt.Sprintf("PONG clientTime %d, ping sent %d", m.Value, p.value), true)
		}
	}
	return replyOK
}

// answers reports whether a reply of type got may answer a request of
// type req.
func answers(req, got udpwire.MsgType) bool {
	switch req {
	case udpwire.LobbyListRooms:
		return got == udpwire.LobbyRoomList
	case udpwire.LobbyCreateRoom, udpwire.LobbyJoinRoom:
		return got == udpwire.LobbyJoinFailed || got == req+1 // ROOM_CREATED, JOIN_SUCCESS
	case udpwire.ClientHello:
		return got == udpwire.ServerHello
	case udpwire.ClientJoinRequest:
		return got == udpwire.ServerJoinAccept || got == udpwire.ServerJoinDeny
	case udpwire.ClientPing:
		return got == udpwire.ServerPong
	}
	return false
}

// roomList takes a ROOM_LIST: its ports within instance_ports, and the
// room this client created just before in it.
func (s *session) roomList(data []byte, m *udpwire.Message) verdict {
	if s.lists == nil {
		s.lists = &roomLists{}
	}
	l := s.lists
	l.prev, l.rooms = l.rooms, l.prev
	l.rooms = m.Rooms.AppendRooms(l.rooms[:0])
	s.compareLists(data)
	for i := range l.rooms {
		if r := &l.rooms[i]; !s.portOK(r.Port) {
			if v := s.bad(RuleUPortRange, data, fmt.Sprintf("room %d listed on port %d, outside instance_ports %d-%d", r.ID, r.Port, s.rt.ports.First, s.rt.ports.Last), true); v != replyOK {
				return v
			}
			break // one violation per list
		}
	}
	if s.created != 0 && time.Since(s.createdAt.Time()) < createdListWindow {
		found := false
		for i := range l.rooms {
			if l.rooms[i].ID == s.created {
				found = true
				break
			}
		}
		if !found {
			s.violation(RuleUCreatedList, data, s.obuf, fmt.Sprintf("room %d created %s ago is not in the list of %d rooms", s.created, time.Since(s.createdAt.Time()).Round(time.Microsecond), len(l.rooms)))
		}
		s.created = 0
	}
	return replyOK
}

// joinSuccess takes a JOIN_SUCCESS. Each check leaves the port readable:
// with on_violation continue the flow goes on to the port it gave.
func (s *session) joinSuccess(data []byte, m *udpwire.Message) verdict {
	if m.RoomID != s.p.roomID {
		if v := s.bad(RuleUJoinRoom, data, fmt.Sprintf("asked to join room %d, JOIN_SUCCESS names room %d", s.p.roomID, m.RoomID), true); v != replyOK {
			return v
		}
	}
	if !s.portOK(m.Port) {
		if v := s.bad(RuleUPortRange, data, fmt.Sprintf("JOIN_SUCCESS port %d outside instance_ports %d-%d", m.Port, s.rt.ports.First, s.rt.ports.Last), true); v != replyOK {
			return v
		}
	}
	if prev, known := s.Shared.Rooms.Observe(m.RoomID, m.Port); known && prev != m.Port {
		if v := s.bad(RuleUJoinPort, data, fmt.Sprintf("room %d was created on port %d, JOIN_SUCCESS says %d", m.RoomID, prev, m.Port), true); v != replyOK {
			return v
		}
	}
	s.roomID = m.RoomID
	s.setInstance(m.Port)
	return replyOK
}

func (s *session) portOK(port uint16) bool {
	return s.rt.ports.IsZero() || s.rt.ports.Contains(port)
}

// roomCreated takes room id, which this client created on port: the
// run's room table, the session's room and its instance's channel.
func (s *session) roomCreated(id uint32, port uint16) {
	s.Shared.Rooms.Replace(id, port)
	s.roomID, s.created, s.createdAt = id, id, instant.Now()
	s.setInstance(port)
}

// shareRoom makes the room this client created its group's, the one
// its members join (join: {room: created}).
func (s *session) shareRoom() {
	if s.Member.Group != nil {
		s.Member.Group.SetRoom(simclient.Room{ID: s.roomID, Port: s.inst.Port(), Addr: s.inst})
	}
}

func (s *session) setInstance(port uint16) {
	inst := netip.AddrPortFrom(s.rt.lobby.Addr(), port)
	if inst != s.inst {
		s.inst = inst
		s.instJoined, s.allReady, s.gameStarted, s.gameEnded, s.kicked = false, false, false, false, false
		s.lastTick = -1
		if s.lastEvent != nil {
			s.lastEvent.n = 0
		}
	}
}

// bad records a violation by the pending request's reply. usable says
// whether the fields the flow needs could still be read from it:
// simclient's ReplyViolation decides (with the scenario's on_violation)
// whether the flow carries on (replyOK: the caller applies the reply) or
// the request fails with reason "violation" (replyBad, s.badReply).
func (s *session) bad(rule string, data []byte, detail string, usable bool) verdict {
	if err := s.Shared.ReplyViolation(s.Rec, rule, data, s.obuf, detail, usable); err != nil {
		s.badReply = err
		return replyBad
	}
	return replyOK
}

// decodeFailed records a datagram the codec rejected. When its header
// names the pending request's sequence id, the request fails.
func (s *session) decodeFailed(data []byte, err error) verdict {
	rule := string(udpwire.RuleOf(err))
	if rule == "" {
		rule = "U-DECODE"
	}
	var e *udpwire.Error
	if errors.As(err, &e) && e.HaveHeader && s.p.active && e.Header.Seq == s.p.seq &&
		e.Header.Type.Channel() != udpwire.ChannelAny && (e.Header.Type.Channel() == udpwire.ChannelInstance) == s.p.inst {
		return s.bad(rule, data, err.Error(), false)
	}
	s.violation(rule, data, nil, err.Error())
	return replyNone
}

// repeatedEvent reports whether data repeats the instance's last event
// of up to 32 bytes, and keeps it as the last one.
func (s *session) repeatedEvent(data []byte) bool {
	e := s.lastEvent
	if e == nil {
		e = new(eventCopy)
		s.lastEvent = e
	}
	if len(data) > len(e.b) {
		return false
	}
	if int(e.n) == len(data) && string(e.b[:len(data)]) == string(data) {
		return true
	}
	e.n = uint8(copy(e.b[:], data))
	return false
}

// event handles an instance's unsolicited message.
func (s *session) event(data []byte, m *udpwire.Message) verdict {
	if !s.strictOrder && s.repeatedEvent(data) {
		return replyNone // an exact repeat under incoming duplication/reordering
	}
	switch m.Type {
	case udpwire.ServerAllReady:
		if !s.instJoined {
			s.violation(RuleIStateOrder, data, nil, "SERVER_ALL_READY before this client was accepted")
		}
		s.allReady = true
	case udpwire.ServerCountdownTick:
		if !s.instJoined {
			s.violation(RuleIStateOrder, data, nil, "SERVER_COUNTDOWN_TICK before this client was accepted")
		}
		if s.strictOrder && s.lastTick >= 0 && int(m.Value) >= s.lastTick {
			s.violation(RuleICountdown, data, nil, fmt.Sprintf("countdown %d after %d", m.Value, s.lastTick))
		}
		s.lastTick = int(m.Value)
	case udpwire.ServerGameStart:
		switch {
		case !s.instJoined:
			s.violation(RuleIStateOrder, data, nil, "SERVER_GAME_START before this client was accepted")
		case s.gameStarted && s.strictOrder:
			s.violation(RuleIStateOrder, data, nil, "SERVER_GAME_START twice")
		}
		s.gameStarted = true
		s.GameStarted(time.Now())
	case udpwire.ServerGameEnd:
		if !s.gameStarted && s.strictOrder {
			s.violation(RuleIStateOrder, data, nil, "SERVER_GAME_END before SERVER_GAME_START")
		}
		s.gameEnded = true
		s.GameEnded(time.Now())
	case udpwire.ServerDisconnect:
		s.kicked = true
		if s.p.active && s.p.inst {
			s.refusal = &reqFail{Reason: simclient.ReasonClosed, Err: fmt.Errorf("the instance sent SERVER_DISCONNECT (reason %d)", m.Value)}
			return replyRefused
		}
	}
	return replyNone
}

// violation records a breach of rule by packet data; req is the request
// that caused it (nil if unsolicited).
func (s *session) violation(rule string, data, req []byte, detail string) {
	s.Rec.Violation(rule, time.Now(), data, req, detail)
}

// compareLists compares the room list just received with this session's
// previous one: a room listed in both keeps its port and its state never
// goes back (Waiting → Countdown → Playing → Finished, udp-lobby.md §15).
// It needs both lists sorted by room id (the order is not specified; other
// orders are not compared) and reports at most one violation per list.
func (s *session) compareLists(data []byte) {
	prev, cur := s.lists.prev, s.lists.rooms
	if len(prev) == 0 || len(cur) == 0 || !s.sortedByID(prev) || !s.sortedByID(cur) {
		return
	}
	i, j := 0, 0
	for i < len(prev) && j < len(cur) {
		a, b := &prev[i], &cur[j]
		switch {
		case a.ID < b.ID:
			i++
		case a.ID > b.ID:
			j++
		default:
			if a.Port != b.Port {
				s.violation(RuleURoomPortChanged, data, s.obuf, fmt.Sprintf("room %d listed on port %d, then on port %d", a.ID, a.Port, b.Port))
				return
			}
			if b.State < a.State {
				s.violation(RuleURoomState, data, s.obuf, fmt.Sprintf("room %d listed %v, then %v", a.ID, a.State, b.State))
				return
			}
			i++
			j++
		}
	}
}

func (s *session) sortedByID(rs []udpwire.Room) bool {
	for i := 1; i < len(rs); i++ {
		if rs[i].ID <= rs[i-1].ID {
			return false
		}
	}
	return true
}
