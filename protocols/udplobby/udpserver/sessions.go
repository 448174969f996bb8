package udpserver

import (
	"net/netip"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// maxCachedReply is the largest reply a session caches: ROOM_CREATED or
// JOIN_SUCCESS under the rtype17 header (17 + 6 + 4 bytes).
const maxCachedReply = 32

// session is what the lobby remembers about one client endpoint (udp-lobby.md §6,
// from the Lobby System page §7): when it was last seen, its last sequence id, and for a CREATE or
// JOIN the reply sent, so a retry with the same sequence is answered
// identically instead of acting twice. Stored by value: no allocation per
// request.
type session struct {
	lastSeen int64 // ns
	seq      uint16
	room     uint32          // roomId of the request (JOIN), so a reused sequence is not taken for a retry
	typ      udpwire.MsgType // type of the request whose reply is cached; 0 if none
	n        uint8           // cached reply length
	reply    [maxCachedReply]byte
}

// sessionTable is the lobby's bounded session map. It is owned by the lobby
// read loop (no lock); its size is published through an atomic for Stats.
type sessionTable struct {
	m         map[netip.AddrPort]session
	max       int
	ttl       int64
	lastSweep int64
}

func newSessionTable(max int, ttl int64) sessionTable {
	return sessionTable{m: make(map[netip.AddrPort]session, min(max, 4096)), max: max, ttl: ttl}
}

// get returns the live session of ep, if any.
func (t *sessionTable) get(ep netip.AddrPort, now int64) (session, bool) {
	s, ok := t.m[ep]
	if ok && now-s.lastSeen > t.ttl {
		return session{}, false
	}
	return s, ok
}

// put stores the session of ep, making room first if the table is full.
func (t *sessionTable) put(ep netip.AddrPort, s session, now int64) {
	if len(t.m) >= t.max {
		if _, ok := t.m[ep]; !ok {
			t.makeRoom(now)
		}
	}
	t.m[ep] = s
}

// makeRoom sweeps expired sessions (at most once per ttl/4, so a table full
// of live sessions does not cost a scan per new endpoint) and otherwise
// evicts an arbitrary one: memory stays bounded whatever the number of
// endpoints, at the price of forgetting a live session under a flood.
func (t *sessionTable) makeRoom(now int64) {
	if now-t.lastSweep >= t.ttl/4 {
		t.sweep(now)
		if len(t.m) < t.max {
			return
		}
	}
	for k := range t.m {
		delete(t.m, k)
		break
	}
}

// sweep removes expired sessions.
func (t *sessionTable) sweep(now int64) {
	t.lastSweep = now
	for k, s := range t.m {
		if now-s.lastSeen > t.ttl {
			delete(t.m, k)
		}
	}
}
