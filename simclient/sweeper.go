package simclient

import (
	"sync"
	"sync/atomic"
	"time"
)

// Sweeper detects timed-out requests for every session of a run with one
// goroutine, so that no session sets a socket deadline per request (one
// SetReadDeadline per request cost ~20 % throughput at 1,000 clients). Each
// session owns a Waker; arming it is one atomic store and one atomic load.
// Every tick the sweeper scans the wakers armed lately and calls the wake
// function of those whose instant has passed (once per arming).
//
// A scan costs what is armed, not what is registered: a waker is listed
// for the scans from its first arming on, and a scan drops one it found
// disarmed idleScans times in a row (a client that suspends its waits, or
// pauses, or closed); its next Arm lists it again, under the sweeper's
// lock. At 250,000 virtual clients, which suspend their waits and so
// never arm, a scan of every registered waker every 5 ms took 17 % of
// the run's CPU.
type Sweeper struct {
	tick time.Duration
	mu   sync.Mutex
	ws   []*Waker // the listed wakers
	stop chan struct{}
	done chan struct{}
	// Wakes counts wake calls, for tests and diagnostics.
	Wakes atomic.Int64
}

// idleScans is how many scans in a row find a listed waker disarmed
// before it is dropped from the list: 8 ticks (40 ms at the default 5
// ms), longer than a busy client's gap between two requests, so that a
// client that keeps sending stays listed and arms without the lock.
const idleScans = 8

// Waker is one session's timeout slot. Arm, Disarm and Armed are safe to
// call from the session while the sweeper scans; Remove ends it.
type Waker struct {
	at     atomic.Int64 // UnixNano of the armed instant; 0 = disarmed
	listed atomic.Bool  // in Sweeper.ws (set under Sweeper.mu)
	// Guarded by Sweeper.mu: the position in Sweeper.ws (-1: not
	// listed), the scans in a row that found it disarmed, and whether it
	// was removed (never listed again).
	idx     int32
	idle    int32
	removed bool
	d       Deadliner
	s       *Sweeper
}

// Deadliner is what a waker wakes: a socket, whose read deadline set to
// now makes a blocked read return. A socket rather than a function: a
// closure over it was 32 bytes more a client.
type Deadliner interface{ SetReadDeadline(time.Time) error }

// NewSweeper starts a sweeper scanning every tick.
func NewSweeper(tick time.Duration) *Sweeper {
	if tick <= 0 {
		tick = 5 * time.Millisecond
	}
	s := &Sweeper{tick: tick, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// Tick returns the scan period.
func (s *Sweeper) Tick() time.Duration { return s.tick }

// Add makes a waker whose expiry calls d.SetReadDeadline(time.Now()),
// which makes a blocked read return. It runs on the sweeper goroutine: it
// must be quick and must not block. The waker is listed for the scans at
// its first Arm.
func (s *Sweeper) Add(d Deadliner) *Waker {
	return &Waker{d: d, s: s, idx: -1}
}

// Remove ends w: its socket is not woken afterwards, and a later
// Arm (a session closed while its run still ends) lists it no more.
func (s *Sweeper) Remove(w *Waker) {
	if w == nil {
		return
	}
	w.at.Store(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	w.removed = true
	s.unlist(w)
}

// unlist takes w out of s.ws; s.mu is held.
func (s *Sweeper) unlist(w *Waker) {
	i := int(w.idx)
	if i < 0 || i >= len(s.ws) || s.ws[i] != w {
		return
	}
	last := len(s.ws) - 1
	s.ws[i] = s.ws[last]
	s.ws[i].idx = int32(i)
	s.ws[last] = nil
	s.ws = s.ws[:last]
	w.idx = -1
	w.listed.Store(false)
}

// Arm makes the sweeper wake the session once t has passed (replacing any
// earlier arming).
func (w *Waker) Arm(t time.Time) {
	n := t.UnixNano()
	if n == 0 {
		n = 1
	}
	w.at.Store(n)
	// The instant is stored before listed is read, and a scan unlists
	// before it reads the instant again (drop): one of the two sees the
	// other, so an armed waker is never left unlisted.
	if !w.listed.Load() {
		w.s.list(w)
	}
}

// list puts w in the scans' list, unless it is there or removed.
func (s *Sweeper) list(w *Waker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.removed || w.listed.Load() {
		return
	}
	w.idx, w.idle = int32(len(s.ws)), 0
	s.ws = append(s.ws, w)
	w.listed.Store(true)
}

// Disarm cancels the arming.
func (w *Waker) Disarm() { w.at.Store(0) }

// Armed reports whether the waker is armed.
func (w *Waker) Armed() bool { return w.at.Load() != 0 }

// Stop stops the sweeper goroutine and waits for it.
func (s *Sweeper) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func (s *Sweeper) loop() {
	defer close(s.done)
	t := time.NewTicker(s.tick)
	defer t.Stop()
	var fire []*Waker
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			fire = s.scan(now.UnixNano(), fire[:0])
			for _, w := range fire {
				_ = w.d.SetReadDeadline(time.Now())
			}
			s.Wakes.Add(int64(len(fire)))
			clear(fire)
		}
	}
}

// scan collects the expired wakers, disarming them, and drops from the
// list those found disarmed idleScans times in a row. The wake calls
// happen outside the lock.
func (s *Sweeper) scan(now int64, fire []*Waker) []*Waker {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(s.ws); i++ {
		w := s.ws[i]
		at := w.at.Load()
		switch {
		case at == 0:
			if w.idle++; w.idle >= idleScans && s.drop(w) {
				i-- // the last waker moved into place i
			}
		case at <= now:
			w.idle = 0
			if w.at.CompareAndSwap(at, 0) {
				fire = append(fire, w)
			}
		default:
			w.idle = 0
		}
	}
	return fire
}

// drop unlists w, found disarmed, unless an Arm came meanwhile: it reads
// the instant again after unlisting, and lists w back if it is armed
// (Arm's comment). s.mu is held. It reports whether w left the list.
func (s *Sweeper) drop(w *Waker) bool {
	s.unlist(w)
	if w.at.Load() == 0 {
		return true
	}
	w.idx, w.idle = int32(len(s.ws)), 0
	s.ws = append(s.ws, w)
	w.listed.Store(true)
	return true // it moved to the end: place i holds another now
}
