package udpscript

// maxTracked bounds the sequence ids a session remembers sending: a
// script's requests are few, and a reply to one older than that is judged
// as one to an id never sent.
const maxTracked = 256

// sentIDs are the sequence ids of a session's latest maxTracked requests,
// each with whether a reply echoed it already. It is a ring that grows to
// maxTracked and then overwrites its oldest, searched newest first (a
// reply is mostly to the latest request): a reply is judged with no map
// and no allocation.
type sentIDs struct {
	ids []uint16
	// next is, once ids is full, the position of the oldest: where the
	// next id goes. It is 0 while ids grows.
	next int
	// answered has a bit for each position of ids.
	answered [maxTracked / 64]uint64
}

// add remembers the send of seq, not answered yet (an id sent again
// awaits its answer again).
func (r *sentIDs) add(seq uint16) {
	i := len(r.ids)
	if i < maxTracked {
		r.ids = append(r.ids, seq)
	} else {
		i = r.next
		r.ids[i] = seq
		r.next = (i + 1) % maxTracked
	}
	r.answered[i/64] &^= 1 << (i % 64)
}

// find is the position of seq's latest send, or -1.
func (r *sentIDs) find(seq uint16) int {
	n := len(r.ids)
	for k := 1; k <= n; k++ {
		if i := (r.next + n - k) % n; r.ids[i] == seq {
			return i
		}
	}
	return -1
}

// isAnswered reports whether the send at position i was answered.
func (r *sentIDs) isAnswered(i int) bool { return r.answered[i/64]&(1<<(i%64)) != 0 }

// answer marks the send at position i answered.
func (r *sentIDs) answer(i int) { r.answered[i/64] |= 1 << (i % 64) }
