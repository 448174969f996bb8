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
	fi := s.FlowIndex(flow)
	if fi < 0 || s.closed || s.serverBye || s.seated || s.robust || s.await != 0 || s.d.Closed() {
		return nil, false
	}
	next := &session{Base: s.Renew(id, fi), rt: s.rt, d: s.d, waker: s.waker, link: s.link, buf: s.buf[:0]}
	next.link.rec = next.Rec
	return next, true
}
