package udpserver

import (
	"errors"
	"net"
	"net/netip"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// lobbyLoop serves the lobby socket: one goroutine, one reused read buffer
// and one reused reply buffer.
func (s *Server) lobbyLoop() {
	defer s.wg.Done()
	buf := make([]byte, 65536)
	out := make([]byte, 0, 2048)
	for {
		n, from, local, err := s.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		out = s.handleLobby(buf[:n], from, s.now(), out[:0])
		if len(out) > 0 {
			s.send(s.conn, out, from, local)
		}
	}
}

// handleLobby answers one lobby datagram received from `from` at now,
// appending the reply to out; it returns out unchanged (empty) when the
// datagram is dropped. Only the lobby read loop calls it (it owns the
// session table). LIST and JOIN do not allocate.
func (s *Server) handleLobby(pkt []byte, from netip.AddrPort, now int64, out []byte) []byte {
	var m udpwire.Message
	if rule := s.ldec.DecodeRule(pkt, &m); rule != "" {
		// Malformed: silent (CRC is checked before anything is read), and
		// counted without allocating, so a flood of garbage costs no GC.
		s.c.drop(rule)
		return out
	}
	s.c.requests[m.Type].Add(1)
	// An IPv4 client of a dual-stack socket arrives as ::ffff:a.b.c.d; keys
	// use the plain address so the lobby, the rate limiter and the
	// instances (seat holds) agree whatever socket family they use.
	ip := from.Addr().Unmap()
	if s.limiter != nil {
		key := netip.AddrPortFrom(ip, from.Port())
		if s.cfg.RateKey == RateKeyIP {
			key = netip.AddrPortFrom(ip, 0)
		}
		if !s.limiter.Allow(key, now) {
			s.c.drops[dropRateLimited].Add(1)
			return out
		}
	}
	if now-s.sessions.lastSweep >= s.sessions.ttl {
		s.sessions.sweep(now)
	}
	sess, ok := s.sessions.get(from, now)
	if ok && sess.n > 0 && sess.seq == m.Seq && sess.typ == m.Type && sess.room == m.RoomID {
		// A retry of the CREATE or JOIN just answered (same sequence, type
		// and room): same answer, no new room or seat. A JOIN of another
		// room under a reused sequence is a new request, not a retry.
		sess.lastSeen = now
		s.sessions.put(from, sess, now)
		s.c.replayed.Add(1)
		return s.bounded(ip, now, len(pkt), append(out, sess.reply[:sess.n]...))
	}
	sess = session{lastSeen: now, seq: m.Seq, room: m.RoomID}
	p := s.cfg.Profile
	switch m.Type {
	case udpwire.LobbyListRooms:
		out, _ = udpwire.Append(out, p, &udpwire.Message{
			Header: udpwire.Header{Type: udpwire.LobbyRoomList, Seq: m.Seq}, Rooms: s.roomList()})
	case udpwire.LobbyCreateRoom:
		if in, reason := s.newInstance(ip, 0, now); in != nil {
			out = udpwire.AppendRoomCreated(out, p, m.Seq, in.id, in.port)
		} else {
			s.c.fail(reason)
			out = udpwire.AppendJoinFailed(out, p, m.Seq)
		}
		sess.cache(m.Type, out)
	case udpwire.LobbyJoinRoom:
		if port, reason := s.join(m.RoomID, ip, now); reason == "" {
			out = udpwire.AppendJoinSuccess(out, p, m.Seq, m.RoomID, port)
		} else {
			s.c.fail(reason)
			out = udpwire.AppendJoinFailed(out, p, m.Seq)
		}
		sess.cache(m.Type, out)
	}
	s.sessions.put(from, sess, now)
	s.nSessions.Store(int64(len(s.sessions.m)))
	return s.bounded(ip, now, len(pkt), out)
}

// bounded returns the reply out to a request of in bytes from ip, or out
// emptied when ip may not get that many bytes back (Server.reach). Every
// request credits AmplificationFactor times its bytes first, so only a
// LOBBY_ROOM_LIST can exceed it: CREATE and JOIN replies are 18 bytes for
// requests of 12 and 16, and a refused list has no side effect to undo.
func (s *Server) bounded(ip netip.Addr, now int64, in int, out []byte) []byte {
	if s.reach(ip, now, in, len(out)) {
		return out
	}
	return out[:0]
}

// cache remembers reply as the answer to a request of type t.
func (ss *session) cache(t udpwire.MsgType, reply []byte) {
	if len(reply) > len(ss.reply) {
		return
	}
	ss.typ = t
	ss.n = uint8(copy(ss.reply[:], reply))
}

// join reserves a seat in room id for a client at ip and returns the
// room's port, or the JOIN_FAILED reason.
func (s *Server) join(id uint32, ip netip.Addr, now int64) (uint16, string) {
	if id == 0 {
		return 0, FailRoomZero
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.rooms[id]
	if in == nil {
		return 0, FailMissing
	}
	if !in.joinable() {
		return 0, FailState
	}
	in.expireHolds(now)
	if len(in.players)+len(in.holds) >= in.max {
		return 0, FailFull
	}
	if s.cfg.MaxHoldsPerIP > 0 && s.held[ip] >= s.cfg.MaxHoldsPerIP {
		return 0, FailHoldsPerIP
	}
	in.addHold(hold{ip: ip, expires: now + int64(s.cfg.SeatHold)})
	in.idleSince = 0
	s.invalidate()
	return in.port, ""
}
