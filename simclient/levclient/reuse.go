package levclient

import (
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Reuse implements simclient.Reusable: the connection (socket and levconn
// engine, with its packet and message numbering going on) carries the next
// flow when this flow did not close it — no close step, no CloseConnection
// from the server — and left no state on the server: it did not
// join_server or join_game (the server holds a player for the connection;
// joining again on it would count a second one), and ran no malformed or
// rate_probe step (late answers to the probe's untracked Echoes). The next
// flow's connect step runs the whole Connect, Security, Authenticate
// exchange again on the kept connection.
func (s *session) Reuse(id int, flow *scenario.Flow) (simclient.Session, bool) {
	fi := s.sh.FlowIndex(flow)
	if fi < 0 || s.closed || s.serverBye || s.seated || s.robust || s.await != 0 || s.d.Closed() {
		return nil, false
	}
	s.closeOnce.Do(func() {}) // spent: a stray Close releases nothing
	s.leaveGroup()
	next := newSession(s.sh, id, flow, fi, s.buf[:0])
	next.d, next.waker, next.link = s.d, s.waker, s.link
	next.link.rec = next.rec
	next.member = s.sh.Join(fi)
	return next, true
}
