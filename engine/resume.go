package engine

import (
	"container/heap"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/simclient"
)

// resumer starts the closed model's suspended slots again (Execution.loop)
// at their pauses' ends, in due order, from one goroutine: the only wait
// in the precise phase for all of them. Per-slot timers each finishing
// their own precise wait would contend for precise.FineSlots (GOMAXPROCS)
// and, past that, end on the millisecond timer: at 20 clients in think
// times the send lag p99 was ~0.6 ms that way. A slot it starts finds its
// pause over (Base.Resume) and sends at once.
type resumer struct {
	mu      sync.Mutex
	due     dueSlots
	stop    bool // the run is stopping: no more suspensions
	running bool // the goroutine (resumeLoop) is started
	kick    chan struct{}
}

// dueSlot is a suspended slot and when its pause ends.
type dueSlot struct {
	at time.Time
	s  *slot
}

// dueSlots is a min-heap of dueSlot by at (container/heap).
type dueSlots []dueSlot

func (h dueSlots) Len() int           { return len(h) }
func (h dueSlots) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueSlots) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueSlots) Push(x any)        { *h = append(*h, x.(dueSlot)) }
func (h *dueSlots) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// suspend hands slot s, whose session (s.susp) is suspended, to the
// resumer and reports true: the caller's goroutine ends. False when the
// run is stopping: the caller resumes the session at once, and the pause
// ends cut.
func (x *Execution) suspend(s *slot) bool {
	at := s.susp.(simclient.Resumer).SuspendedUntil()
	r := &x.res
	r.mu.Lock()
	if r.stop {
		r.mu.Unlock()
		return false
	}
	heap.Push(&r.due, dueSlot{at: at, s: s})
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
			at = r.due[0].at
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
		now := time.Now()
		ready = ready[:0]
		for len(r.due) > 0 && !r.due[0].at.After(now) {
			ready = append(ready, heap.Pop(&r.due).(dueSlot).s)
		}
		r.mu.Unlock()
		for _, s := range ready {
			go x.loop(s)
		}
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
	r.mu.Unlock()
	for _, d := range due {
		go x.loop(d.s)
	}
}
