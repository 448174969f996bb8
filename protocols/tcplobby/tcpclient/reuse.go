package tcpclient

import (
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Reuse implements simclient.Reusable: the connection carries the next
// flow when this one left it open and clean — not after disconnect, not
// when the server closed it or a frame broke the framing, not while the
// client is in a room (or joining one: the server would go on sending that
// room's broadcasts to a session that never joined it), and not after a
// malformed or rate_probe step (late replies to the probe's requests).
// The next flow's connect step then skips the TCP dial but still sends
// CONNECT_REQ and waits for its CONNECT_ACK: it logs in again, as a client
// coming back to the lobby menu does, and its latency is that exchange
// alone. A session that never opened a connection is not reused: the next
// one dials as usual.
func (s *session) Reuse(id int, flow *scenario.Flow) (simclient.Session, bool) {
	fi := s.FlowIndex(flow)
	s.mu.Lock()
	fc := s.fc
	fit := fi >= 0 && fc != nil && !s.closed && !s.robust && s.closedBy == nil && s.room == 0 && s.joining == 0 &&
		!fc.closed.Load() && !fc.cancelled.Load() && fc.err == nil
	if fit {
		s.fc = nil // spent: a stray Close releases nothing
	}
	s.mu.Unlock()
	if !fit {
		return nil, false
	}
	next := &session{Base: s.Renew(id, fi), fc: fc}
	next.init(s.src)
	return next, true
}
