package simclient

import (
	"sort"
	"time"
)

// ProbeFlight is a rate probe's request awaiting its answer.
type ProbeFlight struct {
	// Intended is when the schedule had it due; Sent when it went.
	Intended, Sent time.Time
	// ID is the protocol's number of the request, by which a reply
	// names it (Leviathan's MessageNumber); 0 where replies come in
	// order and name none.
	ID uint32
	// done: answered before an older one (TakeID), dropped when the
	// older ones go.
	done bool
}

// ProbeQueue is a rate probe's requests awaiting their answers, oldest
// first, for a protocol whose replies come on the probe's own connection.
// It holds only those in flight: a request leaves as it is answered or
// lost, so that a probe holds what its rate sends in a timeout, not every
// request it sent (the loader bounds those by scenario.MaxProbeRequests,
// but a million in flight for a whole step would be 48 MB a client).
type ProbeQueue struct {
	q    []ProbeFlight
	head int // q[:head] are gone
}

// Add queues a request just sent. A flight's ID, when it has one, comes
// after those queued before it (in the order of uint32 numbers that
// wrap: a later one is less than 2^31 ahead).
func (q *ProbeQueue) Add(f ProbeFlight) {
	if q.head > 0 && q.head >= len(q.q)/2 {
		// Half the room holds flights gone: move the rest to the front
		// rather than let the slice grow (each flight moves once per
		// doubling, as an append's copy would).
		q.q = q.q[:copy(q.q, q.q[q.head:])]
		q.head = 0
	}
	q.q = append(q.q, f)
}

// Held is how many flights the queue has room for: what it holds in
// memory, for tests.
func (q *ProbeQueue) Held() int { return cap(q.q) }

// skipDone drops the flights answered out of order that are now the
// oldest.
func (q *ProbeQueue) skipDone() {
	for q.head < len(q.q) && q.q[q.head].done {
		q.head++
	}
}

// Oldest is the oldest request awaited.
func (q *ProbeQueue) Oldest() (ProbeFlight, bool) {
	q.skipDone()
	if q.head < len(q.q) {
		return q.q[q.head], true
	}
	return ProbeFlight{}, false
}

// Take removes the oldest request awaited and returns it.
func (q *ProbeQueue) Take() (ProbeFlight, bool) {
	f, ok := q.Oldest()
	if ok {
		q.head++
	}
	return f, ok
}

// TakeID removes the request awaited whose ID is id and returns it; ok
// is false when none is (answered or lost already, or never sent).
func (q *ProbeQueue) TakeID(id uint32) (ProbeFlight, bool) {
	rest := q.q[q.head:]
	i := sort.Search(len(rest), func(i int) bool { return int32(rest[i].ID-id) >= 0 })
	if i == len(rest) || rest[i].ID != id || rest[i].done {
		return ProbeFlight{}, false
	}
	rest[i].done = true
	q.skipDone()
	return rest[i], true
}

// Expire removes the requests awaited that were sent timeout or more
// before now, oldest first, handing each to lost.
func (q *ProbeQueue) Expire(now time.Time, timeout time.Duration, lost func(ProbeFlight)) {
	for {
		f, ok := q.Oldest()
		if !ok || now.Sub(f.Sent) < timeout {
			return
		}
		q.head++
		lost(f)
	}
}

// Clear removes every request awaited, handing each to lost, oldest
// first: the connection is gone.
func (q *ProbeQueue) Clear(lost func(ProbeFlight)) {
	for f, ok := q.Take(); ok; f, ok = q.Take() {
		lost(f)
	}
	q.q, q.head = q.q[:0], 0
}
