package engine

import (
	"container/heap"
	"runtime"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/simclient"
)

// resumer starts the closed model's suspended slots again (Execution.loop)
// at their pauses' ends, in due order, from one goroutine: the only wait
// in the precise phase for all of them. Per-slot timers each finishing
// their own precise wait once contended for a few precise-wait slots and,
// past them, ended on the millisecond timer: at 20 clients in think times
// the send lag p99 was ~0.6 ms that way. A slot it starts finds its
// pause over (Base.Resume) and sends at once.
//
// A slot suspended in a wait (simclient.Resumer.SuspendedOn) is also
// started when its socket becomes readable (the poller, poll_linux.go) or
// what else it waits on is ready (simclient.Notifier: its group's room
// published, a virtual flow's datagram queued), whichever comes
// before its time: wake takes it out of the heap. Each suspension of a
// slot has its own number (slot.gen), so a late readiness event or
// callback for an earlier one starts nothing.
type resumer struct {
	mu      sync.Mutex
	due     dueSlots
	stop    bool // the run is stopping: no more suspensions
	running bool // the goroutine (resumeLoop) is started
	kick    chan struct{}
	poll    poller // readiness of suspended sessions' sockets
}

// dueSlot is a suspended slot and when its pause ends: 16 bytes, one per
// suspended client (as a time.Time, 32).
type dueSlot struct {
	at instant.Instant
	s  *slot
}

// dueSlots is a min-heap of dueSlot by at. Its own push, popMin and
// remove keep the slots unboxed: container/heap's Push, Pop and Remove
// pass each through an interface, an allocation per suspension and per
// wake (two a ping of a client that suspends between pings); heap.Fix
// only sifts.
type dueSlots []dueSlot

func (h dueSlots) Len() int           { return len(h) }
func (h dueSlots) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueSlots) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].s.hidx, h[j].s.hidx = i, j
}

// Push and Pop complete heap.Interface for heap.Fix, which calls neither.
func (h *dueSlots) Push(x any) { h.push(x.(dueSlot)) }
func (h *dueSlots) Pop() any   { return h.remove(len(*h) - 1) }

func (h *dueSlots) push(d dueSlot) {
	d.s.hidx = len(*h)
	*h = append(*h, d)
	heap.Fix(h, d.s.hidx)
}

func (h *dueSlots) popMin() dueSlot { return h.remove(0) }

// remove takes out the slot at i.
func (h *dueSlots) remove(i int) dueSlot {
	last := len(*h) - 1
	if i != last {
		h.Swap(i, last)
	}
	d := (*h)[last]
	(*h)[last] = dueSlot{}
	*h = (*h)[:last]
	d.s.hidx = -1
	if i != last {
		heap.Fix(h, i)
	}
	return d
}

// suspend hands slot s, whose session (s.susp) is suspended, to the
// resumer and reports true: the caller's goroutine ends. False when the
// run is stopping: the caller resumes the session at once, and the pause
// ends cut.
//
// A wait's socket is handed to the poller, and a wait on a Notifier to
// it (OnReady), after the slot is in the heap: either may
// start the slot at once, on this goroutine or another, which then owns
// it (the caller must not touch s once suspend returned true).
func (x *Execution) suspend(s *slot) bool {
	sess := s.susp.(simclient.Resumer)
	at := sess.SuspendedUntil()
	fd, on := sess.SuspendedOn()
	r := &x.res
	r.mu.Lock()
	if r.stop {
		r.mu.Unlock()
		return false
	}
	if fd >= 0 || on != nil {
		x.Stats.WaitsSuspended.Add(1)
	}
	s.gen++
	gen := s.gen
	r.due.push(dueSlot{at: instant.Of(at), s: s})
	first := r.due[0].s == s
	if !r.running {
		r.running = true
		r.kick = make(chan struct{}, 1)
		x.wg.Add(1)
		go x.resumeLoop()
	}
	r.mu.Unlock()
	if first {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	if fd >= 0 {
		if err := r.poll.arm(x, fd, s, gen); err != nil && x.claim(s, gen) {
			// Nobody can watch the socket: resume the session now, and
			// let it park its waits from now on.
			sess.ParkWaits()
			x.run(s)
		}
	}
	if on != nil {
		on.OnReady(func() { x.wake(s, gen) })
	}
	return true
}

// wakePos is wake for the slot at pos in Execution.slots (the poller's
// events name slots by it). x.slots is set before any slot starts, and
// the poller starts from a slot's goroutine: it reads it unlocked.
func (x *Execution) wakePos(pos int, gen uint32) {
	if pos >= 0 && pos < len(x.slots) {
		x.wake(x.slots[pos], gen)
	}
}

// wake starts slot s at once if it is still suspended in suspension gen
// (suspend): what its wait waited for is ready.
func (x *Execution) wake(s *slot, gen uint32) {
	if x.claim(s, gen) {
		x.run(s)
	}
}

// claim takes slot s out of the resumer's heap if it is still there for
// suspension gen, and reports whether it did: the caller then owns the
// slot, and must start it. False: it was started already, by its time,
// an earlier wake, or the stop.
func (x *Execution) claim(s *slot, gen uint32) bool {
	r := &x.res
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.gen != gen || s.hidx < 0 {
		return false
	}
	r.due.remove(s.hidx)
	return true
}

// resumeLoop is the resumer's goroutine: it waits for the earliest pause
// end (on the timer, woken early by a suspension due sooner; then
// precisely, Execution.wait) and starts every slot due by then. It ends
// with the run's stop signal; wakeSuspended resumes what is left.
func (x *Execution) resumeLoop() {
	defer x.wg.Done()
	r := &x.res
	stop := simclient.StopContext(x.runCtx)
	var timer, fine *time.Timer
	var ready []*slot // reused
	for {
		r.mu.Lock()
		if r.stop {
			r.mu.Unlock()
			return
		}
		var at time.Time
		if len(r.due) > 0 {
			at = r.due[0].at.Time()
		}
		r.mu.Unlock()
		if at.IsZero() {
			select {
			case <-r.kick:
				continue
			case <-stop.Done():
				return
			}
		}
		if d := time.Until(at) - precise.Coarse; d > 0 {
			// Coarse: a suspension due sooner may come in meanwhile. In
			// the last Coarse none can: a pause that suspends is at least
			// simclient.SuspendMin long.
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			select {
			case <-timer.C:
			case <-r.kick:
				timer.Stop()
			case <-stop.Done():
				timer.Stop()
				return
			}
			continue
		}
		if x.wait(stop, &fine, at) != nil {
			return
		}
		r.mu.Lock()
		now := instant.Now()
		ready = ready[:0]
		for len(r.due) > 0 && r.due[0].at <= now {
			ready = append(ready, r.due.popMin().s)
		}
		r.mu.Unlock()
		x.runAll(ready)
	}
}

// wakeSuspended resumes every suspended session at once, and stops
// further suspensions: the run is stopping, and their pauses end cut.
func (x *Execution) wakeSuspended() {
	r := &x.res
	r.mu.Lock()
	r.stop = true
	due := r.due
	r.due = nil
	for _, d := range due {
		d.s.hidx = -1
	}
	r.mu.Unlock()
	r.poll.close()
	slots := make([]*slot, len(due))
	for i, d := range due {
		slots[i] = d.s
	}
	x.runAll(slots)
}

// runAll runs the slots (run), yielding after every startBurst of them
// as runClosed does: at the stop, every suspended client resumes at once.
func (x *Execution) runAll(slots []*slot) {
	for i, s := range slots {
		x.run(s)
		if (i+1)%startBurst == 0 {
			runtime.Gosched()
		}
	}
}

// maxIdleRunners bounds the runners kept waiting for a slot (run).
const maxIdleRunners = 64

// run runs slot s's loop on a runner: an idle one, or a new goroutine.
// A runner whose slot suspends or stops waits for the next slot rather
// than ending (up to maxIdleRunners of them wait; the others end): a
// suspended client resumes on a goroutine whose stack has already grown
// to the client's path (simclient.StackBudget), not on a new 2 KiB one
// that grows by copying, which at 10,000 clients suspending in every
// wait for a reply cost about a sixth of the harness's CPU.
func (x *Execution) run(s *slot) {
	select {
	case x.idle <- s:
	default:
		go x.runner(s)
	}
}

// runner runs slots' loops, one after the other (run).
func (x *Execution) runner(s *slot) {
	for s != nil {
		x.loop(s)
		s = x.idleWait()
	}
}

// idleWait is a runner's wait for its next slot: nil when it is to end
// (maxIdleRunners wait already, or the execution is over). Never inlined:
// the runner's frame is below every client's path (simclient.StackBudget).
//
//go:noinline
func (x *Execution) idleWait() *slot {
	if x.idlers.Add(1) > maxIdleRunners {
		x.idlers.Add(-1)
		return nil
	}
	defer x.idlers.Add(-1)
	select {
	case s := <-x.idle:
		return s
	case <-x.done:
		return nil
	}
}
