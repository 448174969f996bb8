package udpclient

import (
	"runtime"
	"sync/atomic"
)

// pollBudget bounds how many clients of the process poll their socket at
// once in precise mode (run --precise): a client that finds every slot
// taken parks on the netpoller at once, as without precise mode. Polling
// busy-waits on a core; unbounded, at 20,000 arrivals a second every
// client in flight polled, and the polls took the cores the schedule's
// sends needed (send lag p50 over a second). At low load, precise mode's
// purpose, a client nearly always finds a slot; at high load most park,
// and the polls take at most max cores.
type pollBudget struct {
	n   atomic.Int64
	max int64
}

// take takes a slot; false when every one is taken (or, for a moment,
// when another client's take overshot: that client then parks too, which
// is what a full budget means anyway).
func (b *pollBudget) take() bool {
	if b.n.Add(1) > b.max {
		b.n.Add(-1)
		return false
	}
	return true
}

// give gives back a slot take took.
func (b *pollBudget) give() { b.n.Add(-1) }

// polls is the process's budget: half its Ps (at least one), the other
// half left to the schedule, the handling of replies and an embedded
// server.
var polls = &pollBudget{max: int64(max(1, runtime.GOMAXPROCS(0)/2))}
