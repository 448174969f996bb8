package precise

import (
	"container/heap"
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
)

// Pacer wakes waiters at their deadlines from one goroutine that sleeps
// in the kernel until the earliest deadline (a sleeper: on Linux a
// blocking read of a CLOCK_MONOTONIC timerfd armed at an absolute
// instant, which has no timer slack) and then hands every wait due
// within its window to its goroutine, earliest first. A deadline sooner
// than the one the thread sleeps for re-arms its timer, so no wait needs
// a Go timer of its own: at 20,000 arrivals a second there is one kernel
// timer, not 20,000 Go timers each late by up to the netpoller's
// millisecond.
//
// The goroutine is not locked to its OS thread: a locked one gives its
// P up at every yield by handing it to another thread and takes it back
// the same way (two futex wakes and sleeps a hand-over), which at 20,000
// arrivals a second made the waiter it woke wait a median 61 µs to run,
// where an unlocked one waits 4 µs. Its read blocks an ordinary thread
// of the runtime's while it sleeps.
//
// The goroutine starts with the first wait and ends by itself once no
// wait came for its idle time, or at Close.
type Pacer struct {
	// newSleeper makes the thread's sleeper; called with mu held when
	// the thread is to start.
	newSleeper func() (sleeper, error)
	// window: the thread hands over every wait due within window of its
	// wake at once (a wait it wakes early finishes itself: Until).
	window time.Duration
	// idle is how long the thread stays with no wait before it ends.
	idle time.Duration
	// handed, when set (tests), is told each wait handed over at its
	// deadline, by its number in queue order (from 1), with mu held.
	handed func(seq uint64)

	// waiters are the pacer's spare waiters (a wait does not allocate).
	waiters sync.Pool

	mu      sync.Mutex
	q       waitQueue
	seq     uint64
	sl      sleeper   // the running thread's sleeper; nil when none runs
	armed   time.Time // what sl is armed for (zero: not armed)
	closed  bool
	exited  chan struct{} // closed when the running thread's goroutine ends
	lastDue time.Time     // when the thread last handed a wait over
	wakes   int64         // the thread's wakes (tests)
}

// sleeper is what the pacing thread sleeps on.
type sleeper interface {
	// arm makes wait return once t is reached (at once if it is past);
	// called with the pacer's mu held, from any goroutine, while a wait
	// may be blocked.
	arm(t time.Time)
	// wait blocks until the armed instant (or returns at once if it has
	// passed since it was armed).
	wait()
	close()
}

// ErrUnavailable is a Pacer.Until that could not wait on the pacer: it is
// closed, or its thread could not be made (no timerfd: the process is out
// of descriptors). The caller then waits on a Go timer.
var ErrUnavailable = errors.New("precise: the pacing thread is unavailable")

// waiter is one wait on a Pacer.
type waiter struct {
	at       time.Time
	seq      uint64
	idx      int           // in the queue; -1 once handed over
	ch       chan struct{} // the hand-over; buffered, empty between waits
	released bool          // handed over by Close, not at its deadline
}

// Until blocks until the pacer hands over deadline t (at most its window
// early: the caller finishes the rest, Until's package function does),
// or until ctx is done (ctx's error), or returns ErrUnavailable.
func (p *Pacer) Until(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, _ := p.waiters.Get().(*waiter)
	if w == nil {
		w = &waiter{ch: make(chan struct{}, 1)}
	}
	w.at, w.released = t, false
	if !p.add(w) {
		p.waiters.Put(w)
		return ErrUnavailable
	}
	select {
	case <-w.ch:
	case <-ctx.Done():
		p.mu.Lock()
		if w.idx >= 0 {
			heap.Remove(&p.q, w.idx)
		} else {
			<-w.ch // handed over meanwhile (under mu): take it
		}
		p.mu.Unlock()
		p.waiters.Put(w)
		return ctx.Err()
	}
	released := w.released
	p.waiters.Put(w)
	if released {
		return ErrUnavailable
	}
	return nil
}

// add queues w and starts the thread, or re-arms it for a sooner
// deadline; false when the pacer is closed or cannot start.
func (p *Pacer) add(w *waiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.sl == nil {
		sl, err := p.newSleeper()
		if err != nil {
			return false
		}
		p.sl, p.armed, p.exited = sl, time.Time{}, make(chan struct{})
		p.lastDue = time.Now()
		go p.loop(sl, p.exited)
	}
	p.seq++
	w.seq = p.seq
	heap.Push(&p.q, w)
	if p.armed.IsZero() || w.at.Before(p.armed) {
		p.arm(w.at)
	}
	return true
}

func (p *Pacer) arm(t time.Time) {
	p.armed = t
	p.sl.arm(t)
}

// loop is the pacing thread.
func (p *Pacer) loop(sl sleeper, exited chan struct{}) {
	defer close(exited)
	for {
		sl.wait()
		more, handed := p.handOver()
		if !more {
			sl.close()
			return
		}
		if handed > 0 {
			// The goroutines handed over wait in this P's run queue:
			// blocking in the next wait's system call would keep the
			// P from them until the runtime's monitor takes it back
			// (20 µs to 10 ms later, unless another P is idle to
			// steal them). Yielding gives them the P now.
			runtime.Gosched()
		}
	}
}

// handOver hands over every wait due within the window, earliest first,
// and arms the sleeper for the next; more is false when the thread is to
// end (closed, or idle too long); handed counts the waits handed over.
func (p *Pacer) handOver() (more bool, handed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakes++
	p.armed = time.Time{}
	now := time.Now()
	limit := now.Add(p.window)
	for len(p.q) > 0 && !p.q[0].at.After(limit) {
		w := heap.Pop(&p.q).(*waiter)
		if p.handed != nil {
			p.handed(w.seq)
		}
		w.ch <- struct{}{}
		p.lastDue = now
		handed++
	}
	switch {
	case p.closed:
		for len(p.q) > 0 {
			w := heap.Pop(&p.q).(*waiter)
			w.released = true
			w.ch <- struct{}{}
		}
	case len(p.q) > 0:
		p.arm(p.q[0].at)
		return true, handed
	case now.Sub(p.lastDue) < p.idle:
		p.arm(p.lastDue.Add(p.idle))
		return true, handed
	}
	p.sl = nil
	return false, handed
}

// Close ends the pacer: waits queued return ErrUnavailable (their callers
// finish on a Go timer), later ones at once; it returns once the thread
// has ended.
func (p *Pacer) Close() {
	p.mu.Lock()
	p.closed = true
	exited := p.exited
	if p.sl != nil {
		p.arm(time.Time{})
	}
	p.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// waitQueue is the pacer's waits, a min-heap by deadline, then by arrival.
type waitQueue []*waiter

func (q waitQueue) Len() int { return len(q) }
func (q waitQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].idx, q[j].idx = i, j
}
func (q *waitQueue) Push(x any) {
	w := x.(*waiter)
	w.idx = len(*q)
	*q = append(*q, w)
}
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	w.idx = -1
	return w
}
