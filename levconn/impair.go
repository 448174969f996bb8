package levconn

import (
	"math/rand/v2"
	"time"
)

// Impair is simulated network impairment of one direction of a Driver's
// datagrams: probabilities in [0,1], every datagram delayed by Delay ± a
// uniform Jitter. The zero value changes nothing.
type Impair struct {
	Drop, Duplicate, Reorder float64
	Delay, Jitter            time.Duration
}

// IsZero reports whether the direction is untouched.
func (i Impair) IsZero() bool { return i == Impair{} }

// ImpairStats counts what one direction's impairment did.
type ImpairStats struct {
	Seen, Dropped, Duplicated, Delayed, Reordered int64
}

// reorderHold bounds how long a datagram held back for reordering waits for
// a later one to overtake it.
const reorderHold = 20 * time.Millisecond

type heldDgram struct {
	due     time.Time
	reorder bool
	data    []byte
}

// impairer applies one Impair deterministically from its generator. Its
// queue of held datagrams is bounded (maxHeld); beyond it datagrams are
// dropped, as a full router queue would.
type impairer struct {
	cfg   Impair
	rng   *rand.Rand
	q     []heldDgram // sorted by due
	free  [][]byte
	stats ImpairStats
}

const maxHeld = 256

func newImpairer(cfg Impair, rng *rand.Rand) *impairer {
	if cfg.IsZero() || rng == nil {
		return nil
	}
	return &impairer{cfg: cfg, rng: rng}
}

// push decides the fate of b at now and queues its copies; due ones are
// then taken with pop.
func (im *impairer) push(now time.Time, b []byte) {
	im.stats.Seen++
	c := im.cfg
	if c.Drop > 0 && im.rng.Float64() < c.Drop {
		im.stats.Dropped++
		return
	}
	copies := 1
	if c.Duplicate > 0 && im.rng.Float64() < c.Duplicate {
		im.stats.Duplicated++
		copies = 2
	}
	var delay time.Duration
	if c.Delay > 0 || c.Jitter > 0 {
		j := time.Duration(0)
		if c.Jitter > 0 {
			j = time.Duration((im.rng.Float64()*2 - 1) * float64(c.Jitter))
		}
		delay = max(c.Delay+j, 0)
		if delay > 0 {
			im.stats.Delayed++
		}
	}
	reorder := c.Reorder > 0 && im.rng.Float64() < c.Reorder
	if reorder {
		im.stats.Reordered++
	}
	// A datagram passing held ones releases those held for reordering.
	im.overtaken(now)
	for i := 0; i < copies; i++ {
		due := now.Add(delay)
		r := reorder && i == 0
		if r {
			due = due.Add(reorderHold)
		}
		im.hold(due, r, b)
	}
}

func (im *impairer) hold(due time.Time, reorder bool, data []byte) {
	if len(im.q) >= maxHeld {
		im.stats.Dropped++
		return
	}
	var b []byte
	if n := len(im.free); n > 0 {
		b = im.free[n-1][:0]
		im.free = im.free[:n-1]
	}
	h := heldDgram{due: due, reorder: reorder, data: append(b, data...)}
	i := len(im.q)
	im.q = append(im.q, h)
	for i > 0 && im.q[i-1].due.After(due) {
		im.q[i] = im.q[i-1]
		i--
	}
	im.q[i] = h
}

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
	if moved {
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

// pop removes and returns the head's bytes if due at now; give them back
// with recycle.
func (im *impairer) pop(now time.Time) ([]byte, bool) {
	if im == nil || len(im.q) == 0 || im.q[0].due.After(now) {
		return nil, false
	}
	h := im.q[0]
	copy(im.q, im.q[1:])
	im.q[len(im.q)-1] = heldDgram{}
	im.q = im.q[:len(im.q)-1]
	return h.data, true
}

func (im *impairer) recycle(b []byte) {
	if im != nil && cap(b) > 0 && len(im.free) < 64 {
		im.free = append(im.free, b[:0])
	}
}
