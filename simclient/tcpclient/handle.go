package tcpclient

import (
	"fmt"
	"net/netip"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/simclient"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
)

// handle decodes and judges one frame, applying its effects. When it is the
// pending request's answer it sets s.done (or s.refusal).
func (s *session) handle(p []byte) {
	m, err := s.dec.Decode(p)
	if err != nil {
		rule := tcplobby.RuleOf(err)
		var req []byte
		if s.pend != 0 && len(p) > 0 && tcplobby.Type(p[0]) == s.pend {
			req = s.req
			s.refusal = &reqFail{Reason: reports.ReasonViolation, Err: err}
		}
		s.violation(rule, p, req, err.Error())
		return
	}
	switch m := m.(type) {
	case *tcplobby.ListRoomsReq, *tcplobby.CreateRoomReq, *tcplobby.JoinRoomReq, *tcplobby.ConnectReq,
		*tcplobby.ReadyReq, *tcplobby.StartReq, *tcplobby.Disconnect:
		s.violation(simclient.RuleTDirection, p, nil, fmt.Sprintf("the server sent %v, a client-to-server message", m.Type()))
	case *tcplobby.ConnectAck:
		if !s.answer(p, tcplobby.TypeConnectAck) {
			return
		}
		switch {
		case !m.Success:
			s.refusal = &reqFail{Reason: simclient.ReasonRefused, Err: fmt.Errorf("CONNECT_ACK Success 0 for name %q", s.name.String())}
		case m.PlayerHash == 0:
			s.bad(simclient.RuleTHash, p, "CONNECT_ACK success with player hash 0")
		default:
			s.hash = m.PlayerHash
		}
	case *tcplobby.ListRoomsAck:
		if !s.answer(p, tcplobby.TypeListRoomsAck) {
			return
		}
		s.rooms = append(s.rooms[:0], m.Rooms[:m.Count]...)
		for i := range s.rooms {
			r := &s.rooms[i]
			if r.ID == 0 || r.MaxPlayers > tcplobby.MaxPlayers || r.PlayerCount > r.MaxPlayers {
				s.bad(simclient.RuleTRoomList, p, fmt.Sprintf("room #%d: id %d, %d/%d players", i, r.ID, r.PlayerCount, r.MaxPlayers))
				return
			}
		}
	case *tcplobby.CreateRoomAck:
		if !s.answer(p, tcplobby.TypeCreateRoomAck) {
			return
		}
		if m.RoomID == 0 {
			s.refusal = &reqFail{Reason: simclient.ReasonRoomFull, Err: fmt.Errorf("CREATE_ROOM_ACK RoomID 0 (hash %d)", m.PlayerHash)}
			return
		}
		if m.PlayerHash == 0 {
			s.bad(simclient.RuleTHash, p, "CREATE_ROOM_ACK with player hash 0")
			return
		}
		s.enterRoom(m.RoomID, m.PlayerHash)
		s.members[m.PlayerHash] = false
	case *tcplobby.JoinRoomAck:
		if !s.answer(p, tcplobby.TypeJoinRoomAck) {
			return
		}
		if m.Status != tcplobby.JoinSuccess {
			if m.PlayerHash != 0 || m.Count != 0 {
				s.violation(simclient.RuleTJoinAck, p, s.req, fmt.Sprintf("JOIN_ROOM_ACK %v carries hash %d and %d players", m.Status, m.PlayerHash, m.Count))
			}
			s.refusal = &reqFail{Reason: reports.ReasonJoinFailed, Err: fmt.Errorf("JOIN_ROOM_ACK %v for room %d", m.Status, s.joining)}
			return
		}
		if m.PlayerHash == 0 {
			s.bad(simclient.RuleTHash, p, "JOIN_ROOM_ACK SUCCESS with player hash 0")
			return
		}
		found := false
		for _, pl := range m.Players[:m.Count] {
			found = found || pl.Hash == m.PlayerHash
		}
		if !found {
			s.bad(simclient.RuleTJoinAck, p, fmt.Sprintf("JOIN_ROOM_ACK SUCCESS: the joiner's hash %d is not among its %d players", m.PlayerHash, m.Count))
			return
		}
		s.enterRoom(s.joining, m.PlayerHash)
		s.setMembers(m.Players[:m.Count])
	case *tcplobby.RoomUpdate:
		if s.room == 0 {
			s.violation(simclient.RuleTBroadcast, p, nil, "ROOM_UPDATE while not in a room")
			return
		}
		s.setMembers(m.Players[:m.Count])
	case *tcplobby.PlayerJoin:
		switch {
		case s.room == 0:
			s.violation(simclient.RuleTBroadcast, p, nil, "PLAYER_JOIN while not in a room")
		case m.Player.Hash == s.hash:
			s.violation(simclient.RuleTBroadcast, p, nil, "PLAYER_JOIN announcing this client to itself (it goes to the members already in the room)")
		}
		s.members[m.Player.Hash] = m.Player.Ready
	case *tcplobby.PlayerLeft:
		if _, in := s.members[m.PlayerHash]; s.room == 0 || !in {
			s.violation(simclient.RuleTBroadcast, p, nil, fmt.Sprintf("PLAYER_LEFT for hash %d, not a member of this client's room", m.PlayerHash))
		}
		delete(s.members, m.PlayerHash)
	case *tcplobby.PlayerReady:
		if _, in := s.members[m.PlayerHash]; s.room == 0 || !in && m.PlayerHash != s.hash {
			s.violation(simclient.RuleTBroadcast, p, nil, fmt.Sprintf("PLAYER_READY for hash %d, not a member of this client's room", m.PlayerHash))
		}
		if s.room != 0 {
			s.members[m.PlayerHash] = m.Ready
		}
		if s.pend == tcplobby.TypePlayerReady && m.PlayerHash == s.hash {
			s.done = true
		}
	case *tcplobby.Countdown:
		if s.room == 0 {
			s.violation(simclient.RuleTBroadcast, p, nil, "COUNTDOWN while not in a room")
		}
		if s.lastCount >= 0 && int(m.Seconds) >= s.lastCount {
			s.violation(simclient.RuleTCountdown, p, nil, fmt.Sprintf("COUNTDOWN %d after %d", m.Seconds, s.lastCount))
		}
		s.lastCount = int(m.Seconds)
		s.countdowns++
		if s.pend == tcplobby.TypeCountdown {
			s.done = true
		}
	case *tcplobby.GameStart:
		s.gameStartFrame(p, m)
	case *tcplobby.ErrorMsg:
		e := *m
		s.lastError = &e
		if s.pend != 0 {
			s.refusal = &reqFail{Reason: simclient.ReasonRefused, Err: fmt.Errorf("ERROR_MSG 0x%02x %q", uint8(m.Code), m.Text)}
		}
		if s.lastCount >= 0 && !s.gameStarted {
			s.lastCount = -1 // the countdown was cancelled (e.g. no instance available)
		}
	}
}

// answer reports whether a reply of type t answers the pending request;
// otherwise it is a T-REPLY-TYPE violation.
func (s *session) answer(p []byte, t tcplobby.Type) bool {
	if s.pend == t {
		s.done = true
		return true
	}
	s.violation(simclient.RuleTReplyType, p, s.req, fmt.Sprintf("%v while the pending request expects %v", t, s.pend))
	return false
}

// bad records a violation by the pending request's reply and fails it.
func (s *session) bad(rule string, p []byte, detail string) {
	s.violation(rule, p, s.req, detail)
	s.refusal = &reqFail{Reason: reports.ReasonViolation, Err: fmt.Errorf("%s: %s", rule, detail)}
}

func (s *session) enterRoom(room uint32, hash uint64) {
	if s.hash != 0 && hash != s.hash {
		// Seed 004 §8.4: a hash per room is allowed; track the new one.
		s.hash = hash
	}
	s.hash = hash
	s.room = room
	clear(s.members)
	s.lastCount, s.countdowns, s.gameStarted = -1, 0, false
	if g := s.member.Group; g != nil {
		g.SetHash(hash, s.member.Index)
	}
}

func (s *session) setMembers(ps []tcplobby.PlayerInfo) {
	clear(s.members)
	for _, pl := range ps {
		s.members[pl.Hash] = pl.Ready
	}
}

func (s *session) gameStartFrame(p []byte, m *tcplobby.GameStart) {
	if s.room == 0 {
		s.violation(simclient.RuleTBroadcast, p, nil, "GAME_START while not in a room")
	}
	if s.countdowns == 0 {
		s.violation(simclient.RuleTCountdown, p, nil, "GAME_START without any COUNTDOWN")
	}
	if s.gameStarted {
		s.violation(simclient.RuleTGameStart, p, nil, "GAME_START twice")
	}
	if m.UDPPort == 0 {
		s.violation(simclient.RuleTGameStart, p, nil, "GAME_START with UDP port 0")
	}
	if _, err := netip.ParseAddr(m.ServerIP.String()); err != nil {
		s.violation(simclient.RuleTGameStart, p, nil, fmt.Sprintf("GAME_START ServerIP %q is not an IP address", m.ServerIP.String()))
	}
	for h, ready := range s.members {
		if !ready {
			s.violation(simclient.RuleTBroadcast, p, nil, fmt.Sprintf("GAME_START although this client was never told that member %d is ready (PLAYER_READY or ROOM_UPDATE)", h))
			break
		}
	}
	listed := map[uint64]bool{}
	for _, pl := range m.Players[:m.PlayerCount] {
		listed[pl.Hash] = true
	}
	if len(listed) != len(s.members) {
		s.violation(simclient.RuleTGameStart, p, nil, fmt.Sprintf("GAME_START lists %d players, the room has %d", len(listed), len(s.members)))
	} else {
		for h := range s.members {
			if !listed[h] {
				s.violation(simclient.RuleTGameStart, p, nil, fmt.Sprintf("GAME_START does not list member %d", h))
				break
			}
		}
	}
	s.gameStarted = true
	s.gameStart = *m
	if s.pend == tcplobby.TypeCountdown {
		s.done = true // START_REQ answered straight by GAME_START (no countdown configured)
	}
}
