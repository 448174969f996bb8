package udpclient

import (
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// reorderHold bounds how long a datagram held back for reordering waits for
// a successor to overtake it.
const reorderHold = 20 * time.Millisecond

// held is a datagram the impairment keeps back until due.
type held struct {
	due     time.Time
	addr    netip.AddrPort // destination (outgoing) or source (incoming)
	reorder bool           // held back until a later datagram passes it
	data    []byte
}

// impairer applies one direction of a scenario.Impair to a stream of
// datagrams, deterministically from its generator. It owns a time-ordered
// queue of held datagrams and a free list of their buffers, so the steady
// state does not allocate.
type impairer struct {
	cfg   scenario.Impair
	rng   *rand.Rand
	q     []held // sorted by due
	free  [][]byte
	stats ImpairStats
}

// ImpairStats counts what the impairment of one direction did.
type ImpairStats struct {
	Seen, Dropped, Duplicated, Delayed, Reordered int64
}

// decision is what happens to one datagram.
type decision struct {
	drop    bool
	copies  int           // 1 or 2
	delay   time.Duration // for every copy
	reorder bool          // hold the first copy back behind the next datagram
}

func newImpairer(cfg scenario.Impair, rng *rand.Rand) *impairer {
	if cfg.IsZero() {
		return nil
	}
	return &impairer{cfg: cfg, rng: rng}
}

func (im *impairer) decide() decision {
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

// hold queues a copy of data until due.
func (im *impairer) hold(due time.Time, addr netip.AddrPort, reorder bool, data []byte) {
	var b []byte
	if n := len(im.free); n > 0 {
		b = im.free[n-1][:0]
		im.free = im.free[:n-1]
	}
	b = append(b, data...)
	h := held{due: due, addr: addr, reorder: reorder, data: b}
	i := len(im.q)
	im.q = append(im.q, h)
	for i > 0 && im.q[i-1].due.After(due) {
		im.q[i] = im.q[i-1]
		i--
	}
	im.q[i] = h
}

// overtaken releases the datagrams held for reordering: a later datagram
// has just passed them, so they are due now.
func (im *impairer) overtaken(now time.Time) {
	moved := false
	for i := range im.q {
		if im.q[i].reorder {
			im.q[i].reorder = false
			if im.q[i].due.After(now) {
				im.q[i].due = now
				moved = true
			}
		}
	}
	if moved { // insertion sort: the queue is tiny
		for i := 1; i < len(im.q); i++ {
			for j := i; j > 0 && im.q[j-1].due.After(im.q[j].due); j-- {
				im.q[j-1], im.q[j] = im.q[j], im.q[j-1]
			}
		}
	}
}

// next returns the earliest due time, or zero when nothing is held.
func (im *impairer) next() time.Time {
	if im == nil || len(im.q) == 0 {
		return time.Time{}
	}
	return im.q[0].due
}

// pop removes and returns the head if it is due at now. The caller gives
// h.data back with recycle when done with it.
func (im *impairer) pop(now time.Time) (held, bool) {
	if im == nil || len(im.q) == 0 || im.q[0].due.After(now) {
		return held{}, false
	}
	h := im.q[0]
	copy(im.q, im.q[1:])
	im.q[len(im.q)-1] = held{}
	im.q = im.q[:len(im.q)-1]
	return h, true
}

func (im *impairer) recycle(b []byte) {
	if cap(b) > 0 && len(im.free) < 64 {
		im.free = append(im.free, b[:0])
	}
}
