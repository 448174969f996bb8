//go:build linux

package vflow

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A Conn's writes (WriteQueued, and WriteToUDPAddrPort, which stamps no
// send) are batched across flows: the write copies its datagram into the
// hub's queue, and the writer that finds no flush under way sends the
// queue with sendmmsg, up to sendBatch
// datagrams a call, stamping each just before the system call that
// carries it, and goes on sending what other flows queued meanwhile until
// the queue is empty; the others return at once. The first round goes at
// once, so a lone request waits for nothing; the later ones yield first
// (runtime.Gosched), so that the clients runnable then (woken by the same
// batch of replies) queue their requests for the same call. One datagram a
// system call cost 6-7 µs a datagram on the 2-core VM (the send was over
// half of a virtual client's CPU); 4 a call, 4 µs; 16, 3 µs.
const sendBatch = 32

// maxOutBytes bounds the payload bytes queued: a write that would pass it
// waits for the flush (a full socket buffer makes a socket's write wait
// too).
const maxOutBytes = 4 << 20

// outgoing is a queued datagram: its payload is the queue's arena[off:off+n].
type outgoing struct {
	c    *Conn
	dst  netip.AddrPort
	off  int32
	n    int32
	sent *atomic.Int64 // the writer's send stamp (WriteQueued); nil: none
	was  int64         // *sent when queued
}

// outQueue is the datagrams written and not yet sent.
type outQueue struct {
	mu       sync.Mutex
	room     sync.Cond // signalled when a flush takes the queue, and when it ends
	pend     []outgoing
	arena    []byte
	flushing bool // a writer is sending the queue
	closed   bool
	// the flushing writer's: the buffers of the round before, and the
	// Datagrams of a call
	spare      []outgoing
	spareArena []byte
	ds         []Datagram
}

func (q *outQueue) init() {
	q.room.L = &q.mu
	q.ds = make([]Datagram, 0, sendBatch)
}

// queue queues b from c to dst, and sends the queue when no flush is under
// way (flushQueue: the writer that does is the flusher); *sent (when sent
// is not nil), from the value it holds now, is stamped just before the
// system call that sends b. It returns net.ErrClosed once the hub
// closes; a failure of the send itself reaches c's next read (Conn.fail),
// as a socket's pending error does.
func (h *Hub) queue(c *Conn, dst netip.AddrPort, b []byte, sent *atomic.Int64) error {
	if !dst.Addr().Is4() || len(b) > MaxPayload {
		return fmt.Errorf("vflow: datagram of %d bytes to %s: IPv4 and at most %d bytes only", len(b), dst, MaxPayload)
	}
	q := &h.out
	q.mu.Lock()
	for !q.closed && len(q.pend) > 0 && len(q.arena)+len(b) > maxOutBytes {
		q.room.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return net.ErrClosed
	}
	o := outgoing{c: c, dst: dst, off: int32(len(q.arena)), n: int32(len(b)), sent: sent}
	if sent != nil {
		o.was = sent.Load()
	}
	q.pend = append(q.pend, o)
	q.arena = append(q.arena, b...)
	if q.flushing {
		q.mu.Unlock()
		return nil
	}
	q.flushing = true
	q.mu.Unlock()
	h.flushQueue()
	return nil
}

// maxRounds is how many rounds one writer sends before it hands the flush
// to a goroutine of its own: under a steady load the queue is never empty,
// and the writer's own client would wait behind everyone else's sends.
const maxRounds = 4

// flushQueue sends the queue, round after round, until it is empty; the
// caller holds the flush (q.flushing). After maxRounds it goes on in a
// goroutine of its own, still holding it, and returns: a queue is never
// left with no one to send it.
func (h *Hub) flushQueue() {
	q := &h.out
	for round := 0; ; round++ {
		if round == maxRounds {
			go h.flushQueue()
			return
		}
		q.mu.Lock()
		if len(q.pend) > 0 && round > 0 {
			q.mu.Unlock()
			runtime.Gosched()
			q.mu.Lock()
		}
		if len(q.pend) == 0 {
			q.flushing = false
			q.room.Broadcast()
			q.mu.Unlock()
			return
		}
		batch, arena := q.pend, q.arena
		q.pend, q.arena = q.spare[:0], q.spareArena[:0]
		q.room.Broadcast()
		q.mu.Unlock()
		for part := batch; len(part) > 0; {
			n := min(len(part), sendBatch)
			h.sendChunk(part[:n], arena)
			part = part[n:]
		}
		clear(batch) // hold no Conn
		q.spare, q.spareArena = batch[:0], arena[:0]
	}
}

// sendChunk sends part of a batch taken from the queue (at most
// sendBatch, one sendmmsg), stamping each datagram's writer's send stamp
// just before the system call (unless the writer stamped another send
// since: the compare-and-swap); a datagram the kernel refuses (queue
// checked the rest) fails its Conn's next read, and the ones after it go
// on.
func (h *Hub) sendChunk(part []outgoing, arena []byte) {
	q := &h.out
	ds := q.ds[:0]
	for _, o := range part {
		ds = append(ds, Datagram{Src: o.c.AddrPort(), Dst: o.dst, Payload: arena[o.off : o.off+o.n]})
	}
	q.ds = ds
	for len(part) > 0 {
		now := time.Now().UnixNano()
		for _, o := range part {
			if o.sent != nil {
				o.sent.CompareAndSwap(o.was, now)
			}
		}
		n, err := h.batch.Send(ds)
		if err == nil {
			break
		}
		part[n].c.fail(errnoOf(err))
		part, ds = part[n+1:], ds[n+1:]
	}
	clear(q.ds)
}

// errnoOf is err's errno, EIO when it has none.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

// closeOut stops the queue: later writes fail with net.ErrClosed, and it
// returns once a flush under way has sent what was queued.
func (h *Hub) closeOut() {
	q := &h.out
	q.mu.Lock()
	q.closed = true
	q.room.Broadcast()
	for q.flushing {
		q.room.Wait()
	}
	q.mu.Unlock()
}
