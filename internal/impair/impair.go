// Package impair simulates network impairment of one direction of a
// datagram stream: drop, duplicate, delay ± jitter and reordering, drawn
// from a seeded generator so a run is reproducible. It is the one
// implementation behind the UDP lobby client (protocols/udplobby/udpclient) and the
// Leviathan driver (levconn).
//
// An Impairer does no I/O and starts no goroutine: the caller offers each
// datagram to Apply, sends or delivers it at once when Apply says so, and
// otherwise takes the held copies with Pop when they are due (Next says
// when). Held copies live in a time-ordered queue whose buffers are reused
// (Recycle), so the steady state does not allocate.
package impair

import (
	"math/rand/v2"
	"net/netip"
	"time"
)

// Config is the impairment of one direction: probabilities are fractions
// in [0,1]; every datagram is delayed by Delay ± a uniform Jitter (never
// below zero). The zero value changes nothing.
type Config struct {
	Drop, Duplicate, Reorder float64
	Delay, Jitter            time.Duration
}

// IsZero reports whether the direction is untouched.
func (c Config) IsZero() bool { return c == Config{} }

// Stats counts what one direction's impairment did. Seen counts every
// datagram offered; Dropped includes those refused by a full queue.
type Stats struct {
	Seen, Dropped, Duplicated, Delayed, Reordered int64
}

// ReorderHold bounds how long a datagram held back for reordering waits,
// beyond its delay, for a later one to overtake it.
const ReorderHold = 20 * time.Millisecond

// Held is a datagram copy the impairment kept back until Due.
type Held struct {
	Due     time.Time
	Addr    netip.AddrPort // as given to Apply: destination or source
	Data    []byte
	reorder bool // waits for a later datagram to pass it
}

// decision is the fate of one datagram.
type decision struct {
	drop    bool
	copies  int           // 1 or 2
	delay   time.Duration // for every copy
	reorder bool          // hold the first copy back behind the next datagram
}

// Impairer applies one Config. It is used by one goroutine. A nil
// *Impairer holds nothing: Next, Pop, Recycle and Stats work on it.
type Impairer struct {
	cfg     Config
	rng     *rand.Rand
	maxHeld int
	q       []Held // sorted by Due, stable
	free    [][]byte
	stats   Stats
}

// maxFree bounds the recycled buffers kept.
const maxFree = 64

// New returns an Impairer for cfg drawing from rng, or nil when cfg is
// zero (nothing to do). maxHeld bounds the queue of held copies (0: no
// bound); a copy beyond it is dropped, as by a full router queue.
func New(cfg Config, rng *rand.Rand, maxHeld int) *Impairer {
	if cfg.IsZero() || rng == nil {
		return nil
	}
	return &Impairer{cfg: cfg, rng: rng, maxHeld: maxHeld}
}

// Stats returns what the impairment did so far.
func (im *Impairer) Stats() Stats {
	if im == nil {
		return Stats{}
	}
	return im.stats
}

// decide draws the fate of one datagram; the draws are always in the same
// order (drop, duplicate, jitter, reorder) so a seed reproduces a run.
func (im *Impairer) decide() decision {
	im.stats.Seen++
	c := im.cfg
	d := decision{copies: 1}
	if c.Drop > 0 && im.rng.Float64() < c.Drop {
		im.stats.Dropped++
		d.drop = true
		return d
	}
	if c.Duplicate > 0 && im.rng.Float64() < c.Duplicate {
		im.stats.Duplicated++
		d.copies = 2
	}
	if c.Delay > 0 || c.Jitter > 0 {
		j := time.Duration(0)
		if c.Jitter > 0 {
			j = time.Duration((im.rng.Float64()*2 - 1) * float64(c.Jitter))
		}
		d.delay = max(c.Delay+j, 0)
		if d.delay > 0 {
			im.stats.Delayed++
		}
	}
	if c.Reorder > 0 && im.rng.Float64() < c.Reorder {
		im.stats.Reordered++
		d.reorder = true
	}
	return d
}

// Apply decides the fate of data arriving at now (addr is kept with any
// held copy) and reports whether one copy passes at once, untouched: the
// caller then sends or delivers data itself. Every other copy is held
// (copied into a recycled buffer): delayed copies until now+delay, a
// reordered one until a later datagram overtakes it or ReorderHold beyond
// its delay, the second copy of an undelayed duplicate until now. A
// datagram that is not itself reordered releases those held for
// reordering: they become due with it, just after it.
func (im *Impairer) Apply(now time.Time, addr netip.AddrPort, data []byte) (pass bool) {
	d := im.decide()
	if d.drop {
		return false
	}
	for i := 0; i < d.copies; i++ {
		switch {
		case i == 0 && d.reorder:
			im.hold(now.Add(d.delay+ReorderHold), addr, true, data)
		case d.delay > 0 || pass:
			im.hold(now.Add(d.delay), addr, false, data)
		default:
			pass = true
		}
	}
	if !d.reorder {
		im.overtaken(now.Add(d.delay))
	}
	return pass
}

// hold queues a copy of data until due, after the copies already due by
// then.
func (im *Impairer) hold(due time.Time, addr netip.AddrPort, reorder bool, data []byte) {
	if im.maxHeld > 0 && len(im.q) >= im.maxHeld {
		im.stats.Dropped++
		return
	}
	var b []byte
	if n := len(im.free); n > 0 {
		b = im.free[n-1][:0]
		im.free = im.free[:n-1]
	}
	h := Held{Due: due, Addr: addr, Data: append(b, data...), reorder: reorder}
	i := len(im.q)
	im.q = append(im.q, h)
	for i > 0 && im.q[i-1].Due.After(due) {
		im.q[i] = im.q[i-1]
		i--
	}
	im.q[i] = h
}

// overtaken makes the copies held for reordering due at t (when later):
// the datagram due at t has passed them.
func (im *Impairer) overtaken(t time.Time) {
	moved := false
	for i := range im.q {
		if im.q[i].reorder {
			im.q[i].reorder = false
			if im.q[i].Due.After(t) {
				im.q[i].Due = t
				moved = true
			}
		}
	}
	if moved { // insertion sort, stable: the queue is tiny
		for i := 1; i < len(im.q); i++ {
			for j := i; j > 0 && im.q[j-1].Due.After(im.q[j].Due); j-- {
				im.q[j-1], im.q[j] = im.q[j], im.q[j-1]
			}
		}
	}
}

// Next returns when the earliest held copy is due, or zero when nothing
// is held.
func (im *Impairer) Next() time.Time {
	if im == nil || len(im.q) == 0 {
		return time.Time{}
	}
	return im.q[0].Due
}

// Pop removes and returns the earliest held copy if it is due at now. The
// caller gives h.Data back with Recycle when done with it.
func (im *Impairer) Pop(now time.Time) (h Held, ok bool) {
	if im == nil || len(im.q) == 0 || im.q[0].Due.After(now) {
		return Held{}, false
	}
	h = im.q[0]
	copy(im.q, im.q[1:])
	im.q[len(im.q)-1] = Held{}
	im.q = im.q[:len(im.q)-1]
	return h, true
}

// Recycle takes back a buffer returned by Pop for reuse.
func (im *Impairer) Recycle(b []byte) {
	if im != nil && cap(b) > 0 && len(im.free) < maxFree {
		im.free = append(im.free, b[:0])
	}
}
