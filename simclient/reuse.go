package simclient

import (
	"net/netip"

	"github.com/lobbybench/lobbybench/scenario"
)

// Reusable is a Session that can hand its socket or connection to the
// next session of the same client, as a k6 virtual user keeps its
// connections across iterations: a closed-model client then pays for one
// socket per run, not one per flow played.
type Reusable interface {
	Session
	// Reuse returns the session of client id playing flow (a pointer into
	// Shared.Plan.Flows) on this session's socket, with its group place
	// (Shared.Join, so call it in arrival order like a Factory), and
	// true. It returns false, and leaves this session as it is, when the
	// socket is not fit to carry another flow (closed, disconnected, or
	// left holding state on the server such as a game instance). It is
	// called only after Run returned nil; once it returned true, this
	// session is spent: it must not be run or closed again.
	Reuse(id int, flow *scenario.Flow) (Session, bool)
}

// Renew is how a client gets its next session: on prev's socket when prev
// (which completed its flow and was not closed; nil for none) is Reusable
// and fit, otherwise from f, after closing prev. Every protocol takes part
// through it; a protocol whose sessions are not Reusable simply gets a new
// socket each time.
func Renew(f Factory, sh *Shared, prev Session, id int, flow *scenario.Flow, src netip.Addr) (Session, error) {
	if prev != nil {
		if r, ok := prev.(Reusable); ok {
			if next, ok := r.Reuse(id, flow); ok {
				return next, nil
			}
		}
		prev.Close()
	}
	return f(sh, id, flow, src)
}
