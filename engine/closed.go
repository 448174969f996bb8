package engine

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// slotStreamBase offsets the random streams of closed-model slots (flow
// picks) away from the streams the scenario package reserves for flow
// choice (0) and per-client think times (1+client id).
const slotStreamBase = 1 << 62

// slot is one closed-model client: it loops sessions while wanted.
type slot struct {
	j       int
	want    atomic.Bool
	running atomic.Bool
	rng     *rand.Rand // flow picks (pickFlow); nil with one flow
	iter    int
	backoff time.Duration // the current pause after a failed start
	prev    Session       // the last session, completed and kept open (Start.Prev)
	// st is the Start of the slot's current session, kept here rather
	// than on the client's goroutine stack (simclient.StackBudget).
	st Start
	// susp is the slot's session while it is suspended in a pause or a
	// wait (simclient.ErrSuspended): the slot has no goroutine then, until
	// the resumer starts loop again (resume.go).
	susp Session
	// Guarded by the resumer's lock: the slot's place in its heap (-1:
	// not there) and the number of its current suspension.
	hidx int
	gen  uint32
	// up: the slot is counted in Stats.Up, from its first session (made,
	// or a failed start) before the schedule's end until it releases the
	// slot: a client pausing after a failed session or suspended stays
	// up, and one that came up only after the end never was. (The flags
	// are beside gen, where they take no padding: a slot is 192 bytes.)
	up bool
	// active: the slot is counted in Stats.Active, from the start of a
	// session until it ends unkept or the slot stops: a client keeping
	// its session for the next iteration stays live in between, so a
	// looping client does not touch the shared counter per iteration.
	active bool
	// pos is the slot's index in Execution.slots (the poller's events
	// name it); it never changes.
	pos int
}

// askMargin: a read of the schedule this close to its end does not count
// in Stats.ClientsAsked: the clients it starts have no time to come up
// (a run 1.0001 s long reads at 1.0 s), and a shortfall they make is the
// schedule's, not the harness's.
const askMargin = 50 * time.Millisecond

// startBurst is how many clients runClosed starts before it yields.
const startBurst = 32

// runClosed is the closed-model executor (k6's ramping-vus): it keeps
// Ramp.Clients(elapsed) clients alive, re-reading the target every
// PollInterval. Each client (slot) runs a flow, then starts over with a
// newly picked flow; when the target falls, the highest slots stop at the
// end of their current flow. Slot j picks its flows from its own seeded
// stream, so a slot's sequence of flows does not depend on scheduling.
func (x *Execution) runClosed(ctx context.Context) {
	plan := x.o.Plan
	prof := plan.Load.Ramp()
	maxClients := plan.Load.MaxClients
	var slots []*slot // owned slots in increasing j
	for j := 0; j < maxClients; j++ {
		if x.o.Shard.Owns(j) {
			slots = append(slots, &slot{j: j, hidx: -1, pos: len(slots)})
		}
	}
	x.slots = slots // before any slot starts (wakePos reads it unlocked)
	if !x.joinLate().IsZero() && x.o.OnLateStart != nil {
		// Joined late for the run's start instant: the clients come up
		// at the level the profile wants now (no arrival to miss).
		x.o.OnLateStart(time.Duration(x.Stats.LateStart.Load()), 0)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer func() {
		for _, s := range slots {
			s.want.Store(false)
		}
	}()
	lastN, lastReleased := -1, int64(-1)
	for {
		elapsed := time.Since(x.start)
		if elapsed >= prof.Duration() {
			return
		}
		n := x.o.Shard.Part(prof.Clients(elapsed, maxClients))
		if int64(n) > x.Stats.ClientsAsked.Load() && prof.Duration()-elapsed >= askMargin {
			x.Stats.ClientsAsked.Store(int64(n)) // this goroutine alone writes it
		}
		// The slots change only when the target did or a loop ended
		// since the last look (released is read before it): 250,000
		// slots looked at ten times a second were 3.5 % of the CPU.
		if rel := x.released.Load(); n != lastN || rel != lastReleased {
			lastN, lastReleased = n, rel
			x.startWanted(slots, n)
		}
		next := x.start.Add((elapsed/x.o.PollInterval + 1) * x.o.PollInterval)
		if end := x.start.Add(prof.Duration()); next.After(end) {
			next = end
		}
		if !sleepUntil(ctx, timer, time.Until(next)) {
			return
		}
	}
}

// startWanted wants the first n slots and no others, and starts those
// wanted that do not run.
func (x *Execution) startWanted(slots []*slot, n int) {
	plan := x.o.Plan
	started := 0
	for i, s := range slots {
		want := i < n
		s.want.Store(want)
		if want && s.running.CompareAndSwap(false, true) {
			if s.rng == nil && len(plan.Flows) > 1 {
				s.rng = scenario.NewRand(plan.Seed, slotStreamBase+uint64(s.j))
			}
			x.wg.Add(1)
			x.run(s)
			if started++; started%startBurst == 0 {
				// Let the clients just started run before starting
				// more: thousands of goroutines waiting for a core
				// would each hold a stack, and start no sooner.
				runtime.Gosched()
			}
		}
	}
}

// loop runs slot s's sessions back to back while it is wanted, each on
// the previous one's socket when the factory can (Start.Prev).
//
// A session that suspends in a long pause (simclient.Base.Pause: think
// times, ping intervals) or, from simclient.SuspendWaitsFrom clients, in a
// wait (for a reply, for its group's room) ends the goroutine, which would
// only sleep: the resumer starts loop again (on a runner: run) at the
// pause's end, or when what the wait waits for is ready (suspend, wake,
// resume.go), and it resumes the session first. At 60,000 clients polling
// every 5 s, most clients are in a pause at any moment, and a goroutine's
// stack is the largest part of a client's memory (simclient.StackBudget).
// The slot stays running and counted in x.wg while it is suspended.
func (x *Execution) loop(s *slot) {
	suspended := false
	defer func() {
		if !suspended {
			x.wg.Done()
		}
	}()
	plan := x.o.Plan
	maxClients := plan.Load.MaxClients
	end := x.start.Add(plan.Load.Duration)
	for {
		for s.susp != nil || s.want.Load() && !x.stopping.Load() && x.sessCtx.Err() == nil {
			st := &s.st
			var failed, failedStart, kept, susp bool
			sess := s.susp
			if sess != nil {
				s.susp = nil
				failed, failedStart, kept, susp = x.resumeSession(st, sess)
			} else {
				var ok bool
				if sess, ok = x.next(s, end, maxClients); !ok {
					break
				}
				failed, failedStart = true, true
				if sess != nil {
					// Run here, not in next: next's frame would sit below
					// every request (simclient.StackBudget).
					failed, failedStart, kept, susp = x.runSession(st, sess, true)
				}
			}
			if kept {
				s.prev = sess
			}
			if susp {
				s.susp = sess
				if x.suspend(s) {
					suspended = true
					return
				}
				continue // the run is stopping: resume at once
			}
			if s.prev == nil {
				x.Stats.Active.Add(-1)
				s.active = false
			}
			if !x.backOff(s, failedStart || failed && time.Since(st.Intended) < time.Millisecond, end) {
				break
			}
		}
		x.release(s)
		if !x.rerun(s, end) {
			return
		}
	}
}

// backOff keeps a slot whose session could not start (no descriptor, no
// port) or failed at once (connection refused: failedFast) from turning
// into a busy loop: it pauses, doubling up to maxFailBackoff while the
// slot keeps failing. False when the pause was cut short (x.pause).
func (x *Execution) backOff(s *slot, failedFast bool, end time.Time) bool {
	if !failedFast {
		s.backoff = 0
		return true
	}
	s.backoff = min(max(2*s.backoff, failBackoff), maxFailBackoff)
	x.Stats.BackingOff.Add(1)
	defer x.Stats.BackingOff.Add(-1)
	return x.pause(s.backoff, end)
}

// release gives up slot s: it closes the session it kept, takes it out
// of the active and up counts, and stops running.
func (x *Execution) release(s *slot) {
	if s.prev != nil {
		// Before running is released: another goroutine may take the
		// slot as soon as it is. At the run's end, after drain
		// (closeLater): another member of its group may be in flight.
		if x.stopping.Load() {
			x.closeLater(s.prev)
		} else {
			s.prev.Close()
		}
		s.prev = nil
	}
	if s.active {
		x.Stats.Active.Add(-1)
		s.active = false
	}
	if s.up {
		x.Stats.Up.Add(-1)
		s.up = false
	}
	s.running.Store(false)
	x.released.Add(1)
}

// rerun takes slot s back (true) when the controller wanted it again
// between the loop's check and release; if so it keeps running rather
// than idle a whole tick. Past the end, or with the sessions cancelled,
// the loop would not run: going round again would spin every slot until
// the controller noticed the end, starving it (an 8 s run took 31 s).
func (x *Execution) rerun(s *slot, end time.Time) bool {
	return s.want.Load() && !x.stopping.Load() && time.Now().Before(end) && x.sessCtx.Err() == nil &&
		s.running.CompareAndSwap(false, true)
}

// next makes slot s's next session (nil: it could not be made, a failed
// start, counted), unless the schedule's end has come (ok false).
func (x *Execution) next(s *slot, end time.Time, maxClients int) (sess Session, ok bool) {
	now := time.Now()
	if !now.Before(end) {
		return nil, false
	}
	plan := x.o.Plan
	f := pickFlow(plan, s)
	seq := int(x.seq[f].Add(1) - 1)
	st := &s.st
	*st = Start{} // field by field below: a literal would be built on the stack first
	st.ID, st.Slot, st.Flow, st.Seq = s.j+s.iter*maxClients, s.j, f, seq
	st.Source, st.Intended = x.source(s.j), now
	s.iter++
	if s.prev != nil && plan.Flows[f].NewSocket {
		s.prev.Close()
		s.prev = nil
	}
	st.Prev, s.prev = s.prev, nil
	if !s.active {
		x.addActive()
		s.active = true
	}
	sess = x.newSession(st)
	if !s.up && !x.stopping.Load() {
		s.up = true
		addPeak(&x.Stats.Up, &x.Stats.ClientsPeak)
	}
	return sess, true
}

// pickFlow draws the flow of slot s's next session from its stream. With
// one flow there is nothing to draw: the slot has no stream (runClosed),
// and a closed loop of 1-step flows does not read one per request.
func pickFlow(plan *scenario.Plan, s *slot) int {
	if len(plan.Flows) == 1 {
		return 0
	}
	return plan.PickFlow(s.rng.Float64())
}

// failBackoff is the first pause of a closed-model client after a failed
// start or a session that failed within a millisecond of its start; each
// further such failure doubles it, up to maxFailBackoff.
const (
	failBackoff    = 50 * time.Millisecond
	maxFailBackoff = time.Second
)

// pause waits d, but not past end, the stop signal or the sessions'
// cancellation; it reports whether the slot may go on.
func (x *Execution) pause(d time.Duration, end time.Time) bool {
	d = min(d, time.Until(end))
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-simclient.StopContext(x.runCtx).Done():
	case <-x.sessCtx.Done():
	}
	return false
}
