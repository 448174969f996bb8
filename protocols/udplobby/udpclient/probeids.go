package udpclient

import (
	"time"

	"github.com/lobbybench/lobbybench/simclient"
)

// seqSpace is how many sequence ids a rate probe cycles through: all the
// header's 16 bits can tell apart. A power of two; tests lower it, for
// probes of built-in requests (a script's session numbers its own).
var seqSpace = 1 << 16

// noFlight marks a sequence id no request of the probe has held.
const noFlight int8 = -1

// probeIDs are a rate probe's requests in flight, by sequence id. The
// probe's request k takes id first+k (mod seqSpace), so that an id is
// used again seqSpace requests later, once the request that held it has
// ended, answered, refused or lost (the probe waits for that:
// probeRun.freeID). A reply is matched among the requests in flight
// only, and ended remembers how each id's last request ended, so that a
// reply to it after that is late (it was lost) or a copy (it was
// answered or refused), never the answer to the id's next request before
// that is sent. Only the requests in flight are held (q), besides ended's
// byte an id.
type probeIDs struct {
	q     simclient.ProbeQueue // in flight, oldest first; ID: k, the requests sent before
	first uint16               // the id of request 0
	mask  uint32               // seqSpace - 1
	next  uint32               // k of the next request
	ended [1 << 16]int8        // by id: pendingOutcome while its request is in flight, noFlight before any
	cur   flight               // the flight lookup returns
}

func newProbeIDs(first uint16) *probeIDs {
	p := &probeIDs{first: first, mask: uint32(seqSpace - 1)}
	for i := range p.ended {
		p.ended[i] = noFlight
	}
	return p
}

// seq is the sequence id of request k.
func (p *probeIDs) seq(k uint32) uint16 { return p.first + uint16(k&p.mask) }

// add notes the next request, f, just sent.
func (p *probeIDs) add(f flight) {
	p.q.Add(simclient.ProbeFlight{Intended: f.intended, Sent: f.sent, ID: p.next})
	p.ended[p.seq(p.next)] = pendingOutcome
	p.next++
}

// holder returns the request in flight that holds the id the next
// request takes, if any: the oldest in flight, seqSpace requests before.
func (p *probeIDs) holder() (simclient.ProbeFlight, bool) {
	if p.ended[p.seq(p.next)] != pendingOutcome {
		return simclient.ProbeFlight{}, false
	}
	return p.q.Oldest()
}

// lookup returns the flight a reply echoing seq is to: the request in
// flight that holds seq, taken out of those awaited (the reply ends it:
// burst.settle says how), or one that ended with seq's last request's
// outcome; nil when no request of the probe had seq.
func (p *probeIDs) lookup(seq uint16) *flight {
	switch o := p.ended[seq]; o {
	case noFlight:
		return nil
	case pendingOutcome:
	default:
		p.cur = flight{kind: -1, outcome: o}
		return &p.cur
	}
	// In flight: the ids from the oldest's on name seqSpace requests at
	// most, one each.
	old, _ := p.q.Oldest()
	k := old.ID + uint32(seq-p.seq(old.ID))&p.mask
	f, ok := p.q.TakeID(k)
	if !ok {
		return nil // not reached: ended says it is in flight
	}
	p.cur = flight{intended: f.Intended, sent: f.Sent, kind: -1}
	return &p.cur
}

// expire ends the requests in flight sent timeout or more before now as
// lost, handing each to lost.
func (p *probeIDs) expire(now time.Time, timeout time.Duration, lost func(simclient.ProbeFlight)) {
	p.q.Expire(now, timeout, func(f simclient.ProbeFlight) {
		p.ended[p.seq(f.ID)] = lostOutcome
		lost(f)
	})
}
