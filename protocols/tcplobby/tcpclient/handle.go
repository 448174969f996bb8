package tcpclient

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// handle decodes and judges one frame, applying its effects. When it is the
// pending request's answer it sets s.done (or s.refusal).
//
// A frame that does not decode is a violation of its rule (hex sample).
// When tcplobby.Salvage can still read the fields the flow needs (a
// 6-byte CREATE_ROOM_ACK's RoomID, a 2-byte JOIN_ROOM_ACK's Status …) and
// the scenario's on_violation is continue, the frame is handled with what
// was read (simclient.ReplyViolation); otherwise, if it answers the
// pending request, that request fails with reason "violation".
func (s *session) handle(p []byte) {
	m, ok := s.decode(p)
	if !ok {
		return
	}
	switch m := m.(type) {
	case *tcpwire.ListRoomsReq, *tcpwire.CreateRoomReq, *tcpwire.JoinRoomReq, *tcpwire.ConnectReq,
		*tcpwire.ReadyReq, *tcpwire.StartReq, *tcpwire.Disconnect:
		s.violation(RuleTDirection, p, nil, fmt.Sprintf("the server sent %v, a client-to-server message", m.Type()))
	case *tcpwire.ConnectAck:
		s.connectAck(p, m)
	case *tcpwire.ListRoomsAck:
		s.listRoomsAck(p, m)
	case *tcpwire.CreateRoomAck:
		s.createRoomAck(p, m)
	case *tcpwire.JoinRoomAck:
		s.joinRoomAck(p, m)
	case *tcpwire.RoomUpdate:
		if s.room == 0 {
			s.violation(RuleTBroadcast, p, nil, "ROOM_UPDATE while not in a room")
			return
		}
		s.setMembers(m.Players[:m.Count])
	case *tcpwire.PlayerJoin:
		s.playerJoin(p, m)
	case *tcpwire.PlayerLeft:
		if _, in := s.members[m.PlayerHash]; s.room == 0 || !in {
			s.violation(RuleTBroadcast, p, nil, fmt.Sprintf("PLAYER_LEFT for hash %d, not a member of this client's room", m.PlayerHash))
		}
		delete(s.members, m.PlayerHash)
	case *tcpwire.PlayerReady:
		s.playerReady(p, m)
	case *tcpwire.Countdown:
		s.countdown(p, m)
	case *tcpwire.GameStart:
		s.gameStartFrame(p, m)
	case *tcpwire.ErrorMsg:
		s.errorMsg(m)
	}
}

// decode decodes p, or salvages what the flow needs of a frame that breaks
// its rule (see handle); ok is false when nothing more is to be done with it.
func (s *session) decode(p []byte) (tcpwire.Message, bool) {
	m, err := s.dec.Decode(p)
	s.salvaged = false
	if err == nil {
		return m, true
	}
	var req []byte
	pending := s.pend != 0 && len(p) > 0 && tcpwire.Type(p[0]) == s.pend
	if pending {
		req = s.req
	}
	sm, note, usable := tcpwire.Salvage(p)
	detail := err.Error()
	if usable {
		detail += "; " + note
	}
	if e := s.Shared.ReplyViolation(s.Rec, tcpwire.RuleOf(err), p, req, detail, usable); e != nil {
		if pending {
			s.refusal = e
		}
		return nil, false
	}
	s.salvaged = true
	return sm, true
}

func (s *session) connectAck(p []byte, m *tcpwire.ConnectAck) {
	if !s.answer(p, tcpwire.TypeConnectAck) {
		return
	}
	if !m.Success {
		s.refusal = &reqFail{Reason: simclient.ReasonRefused, Err: &simclient.Refusal{
			Request: fmt.Sprintf("CONNECT_REQ for name %q", s.name.String()), Reply: "CONNECT_ACK Success 0", Hint: connectRefusedHint}}
		return
	}
	if m.PlayerHash == 0 && !s.salvaged && !s.bad(RuleTHash, p, "CONNECT_ACK success with player hash 0", true) {
		return
	}
	s.hash = m.PlayerHash
}

func (s *session) listRoomsAck(p []byte, m *tcpwire.ListRoomsAck) {
	if !s.answer(p, tcpwire.TypeListRoomsAck) {
		return
	}
	s.rooms = append(s.rooms[:0], m.Rooms[:m.Count]...)
	for i := range s.rooms {
		r := &s.rooms[i]
		if r.ID == 0 || r.MaxPlayers > tcpwire.MaxPlayers || r.PlayerCount > r.MaxPlayers {
			s.bad(RuleTRoomList, p, fmt.Sprintf("room #%d: id %d, %d/%d players", i, r.ID, r.PlayerCount, r.MaxPlayers), true)
			return // one violation per list
		}
	}
}

func (s *session) createRoomAck(p []byte, m *tcpwire.CreateRoomAck) {
	if !s.answer(p, tcpwire.TypeCreateRoomAck) {
		return
	}
	if m.RoomID == 0 {
		s.refusal = &reqFail{Reason: simclient.ReasonRoomFull, Err: &simclient.Refusal{
			Request: "CREATE_ROOM_REQ", Reply: fmt.Sprintf("CREATE_ROOM_ACK RoomID 0 (hash %d)", m.PlayerHash), Hint: createRefusedHint}}
		return
	}
	if m.PlayerHash == 0 && !s.salvaged && !s.bad(RuleTHash, p, "CREATE_ROOM_ACK with player hash 0", true) {
		return
	}
	s.enterRoom(m.RoomID, m.PlayerHash)
	s.members[m.PlayerHash] = false
}

func (s *session) joinRoomAck(p []byte, m *tcpwire.JoinRoomAck) {
	if !s.answer(p, tcpwire.TypeJoinRoomAck) {
		return
	}
	if m.Status != tcpwire.JoinSuccess {
		if m.PlayerHash != 0 || m.Count != 0 {
			s.violation(RuleTJoinAck, p, s.req, fmt.Sprintf("JOIN_ROOM_ACK %v carries hash %d and %d players", m.Status, m.PlayerHash, m.Count))
		}
		s.refusal = &reqFail{Reason: result.ReasonJoinFailed, Err: &simclient.Refusal{
			Request: fmt.Sprintf("JOIN_ROOM_REQ for room %d", s.joining), Reply: fmt.Sprintf("JOIN_ROOM_ACK %v", m.Status), Hint: joinRefusedHint(m.Status)}}
		return
	}
	// A salvaged ACK lacks the fields these rules judge: nothing to add.
	if m.PlayerHash == 0 && !s.salvaged && !s.bad(RuleTHash, p, "JOIN_ROOM_ACK SUCCESS with player hash 0", true) {
		return
	}
	found := false
	for _, pl := range m.Players[:m.Count] {
		found = found || pl.Hash == m.PlayerHash
	}
	if !found && !s.salvaged && !s.bad(RuleTJoinAck, p, fmt.Sprintf("JOIN_ROOM_ACK SUCCESS: the joiner's hash %d is not among its %d players", m.PlayerHash, m.Count), true) {
		return
	}
	s.enterRoom(s.joining, m.PlayerHash)
	s.setMembers(m.Players[:m.Count])
}

func (s *session) playerJoin(p []byte, m *tcpwire.PlayerJoin) {
	switch {
	case s.room == 0:
		s.violation(RuleTBroadcast, p, nil, "PLAYER_JOIN while not in a room")
	case m.Player.Hash == s.hash:
		s.violation(RuleTBroadcast, p, nil, "PLAYER_JOIN announcing this client to itself (it goes to the members already in the room)")
	}
	s.members[m.Player.Hash] = m.Player.Ready
}

func (s *session) playerReady(p []byte, m *tcpwire.PlayerReady) {
	// With its own hash unknown (a short ACK), the client cannot tell
	// its own PLAYER_READY from a stranger's: not judged.
	if _, in := s.members[m.PlayerHash]; s.room == 0 || !in && m.PlayerHash != s.hash && s.hash != 0 {
		s.violation(RuleTBroadcast, p, nil, fmt.Sprintf("PLAYER_READY for hash %d, not a member of this client's room", m.PlayerHash))
	}
	if s.room != 0 {
		s.members[m.PlayerHash] = m.Ready
	}
	if s.pend == tcpwire.TypePlayerReady && (m.PlayerHash == s.hash || s.hash == 0) {
		s.done = true // hash still unknown (no ROOM_UPDATE named it): the first PLAYER_READY after READY_REQ
	}
}

func (s *session) countdown(p []byte, m *tcpwire.Countdown) {
	if s.room == 0 {
		s.violation(RuleTBroadcast, p, nil, "COUNTDOWN while not in a room")
	}
	if s.lastCount >= 0 && int(m.Seconds) >= s.lastCount {
		s.violation(RuleTCountdown, p, nil, fmt.Sprintf("COUNTDOWN %d after %d", m.Seconds, s.lastCount))
	}
	s.lastCount = int(m.Seconds)
	s.countdowns++
	if s.pend == tcpwire.TypeCountdown {
		s.done = true
	}
}

func (s *session) errorMsg(m *tcpwire.ErrorMsg) {
	e := *m
	s.lastError = &e
	if s.pend != 0 {
		s.refusal = &reqFail{Reason: simclient.ReasonRefused, Err: errorRefusal(s.reqType.String(), m)}
	}
	if s.lastCount >= 0 && !s.gameStarted {
		s.lastCount = -1 // the countdown was cancelled (e.g. no instance available)
	}
}

// answer reports whether a reply of type t answers the pending request;
// otherwise it is a T-REPLY-TYPE violation.
func (s *session) answer(p []byte, t tcpwire.Type) bool {
	if s.pend == t {
		s.done = true
		return true
	}
	s.violation(RuleTReplyType, p, s.req, fmt.Sprintf("%v while the pending request expects %v", t, s.pend))
	return false
}

// bad records a violation by the pending request's reply p. usable says
// whether the fields the flow needs were read from it:
// simclient.ReplyViolation decides, with the scenario's on_violation,
// whether the flow carries on (true: the caller applies the reply) or the
// request fails (false, s.refusal set).
func (s *session) bad(rule string, p []byte, detail string, usable bool) bool {
	if e := s.Shared.ReplyViolation(s.Rec, rule, p, s.req, detail, usable); e != nil {
		s.refusal = e
		return false
	}
	return true
}

func (s *session) enterRoom(room uint32, hash uint64) {
	if s.hash != 0 && hash != s.hash {
		// tcp-lobby.md §8.4: a hash per room is allowed; track the new one.
		s.hash = hash
	}
	s.hash = hash
	s.room = room
	clear(s.members)
	s.lastCount, s.countdowns, s.gameStarted = -1, 0, false
	if g := s.Member.Group; g != nil {
		g.SetHash(hash, s.Member.Index)
	}
}

// setMembers replaces the room's members with ps. A client whose ACK did
// not carry its hash (a short ACK, read by tcplobby.Salvage) learns it
// here from the entry bearing its own name.
func (s *session) setMembers(ps []tcpwire.PlayerInfo) {
	clear(s.members)
	for _, pl := range ps {
		s.members[pl.Hash] = pl.Ready
		if s.hash == 0 && pl.Name == s.name {
			s.hash = pl.Hash
		}
	}
}

func (s *session) gameStartFrame(p []byte, m *tcpwire.GameStart) {
	if s.room == 0 {
		s.violation(RuleTBroadcast, p, nil, "GAME_START while not in a room")
	}
	if s.countdowns == 0 {
		s.violation(RuleTCountdown, p, nil, "GAME_START without any COUNTDOWN")
	}
	if s.gameStarted {
		s.violation(RuleTGameStart, p, nil, "GAME_START twice")
	}
	if m.UDPPort == 0 {
		s.violation(RuleTGameStart, p, nil, "GAME_START with UDP port 0")
	}
	if ip, err := netip.ParseAddr(m.ServerIP.String()); err != nil {
		s.violation(RuleTGameStart, p, nil, fmt.Sprintf("GAME_START ServerIP %q is not an IP address", m.ServerIP.String()))
	} else if m.UDPPort != 0 && s.Shared.Redirects != nil {
		// The client does not go on to the instance; a host it could
		// not follow is still the server's fault, reported.
		if _, err := s.Shared.Redirects.Follow(netip.AddrPortFrom(ip, m.UDPPort)); err != nil {
			s.violation(RuleTGameStartHost, p, nil, "GAME_START: "+err.Error())
		}
	}
	for h, ready := range s.members {
		if !ready {
			s.violation(RuleTBroadcast, p, nil, fmt.Sprintf("GAME_START although this client was never told that member %d is ready (PLAYER_READY or ROOM_UPDATE)", h))
			break
		}
	}
	listed := map[uint64]bool{}
	for _, pl := range m.Players[:m.PlayerCount] {
		listed[pl.Hash] = true
	}
	if len(listed) != len(s.members) {
		s.violation(RuleTGameStart, p, nil, fmt.Sprintf("GAME_START lists %d players, the room has %d", len(listed), len(s.members)))
	} else {
		for h := range s.members {
			if !listed[h] {
				s.violation(RuleTGameStart, p, nil, fmt.Sprintf("GAME_START does not list member %d", h))
				break
			}
		}
	}
	s.gameStarted = true
	s.GameStarted(time.Now())
	s.gameStart = *m
	if s.pend == tcpwire.TypeCountdown {
		s.done = true // START_REQ answered straight by GAME_START (no countdown configured)
	}
}
