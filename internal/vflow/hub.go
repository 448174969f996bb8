//go:build linux

package vflow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// hubBatch is how many datagrams the dispatcher takes per recvmmsg.
const hubBatch = 32

// maxReadErrors bounds the dispatcher's consecutive failed reads before it
// stops (a read fails only when the socket is closed, or broken).
const maxReadErrors = 100

// Hub is one process's virtual flows in use: the attached range, the
// Sender every flow's writes go through in batches (outq.go), and a
// dispatcher goroutine for each steered socket (Config.Sockets) that
// reads its Receiver and hands each datagram to the Conn of its flow,
// found by its original destination in a Table. Make it once per run with
// OpenHub; Close it after the last Conn.
type Hub struct {
	f   *Flows
	tab *Table[atomic.Pointer[Conn]]

	batch *Sender // the flows' writes (outq.go)
	out   outQueue

	amu  sync.Mutex // guards next and free
	next int        // flows never given out start here
	free []int      // flows given back, oldest first

	done     chan struct{} // closed when every dispatcher has returned
	closed   atomic.Bool   // Close has begun
	unrouted atomic.Int64
	dropped  atomic.Int64
}

// OpenHub opens cfg's range (Open) for up to n flows at once (0:
// DefaultHubFlows, at most the range's size), its Sender and its
// dispatcher.
func OpenHub(cfg Config, n int) (_ *Hub, err error) {
	h := &Hub{done: make(chan struct{})}
	if h.f, err = Open(cfg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			h.f.Close()
		}
	}()
	cfg = h.f.Config()
	if n <= 0 {
		n = int(min(uint64(DefaultHubFlows), cfg.size()))
	}
	if h.tab, err = NewTable[atomic.Pointer[Conn]](cfg, n); err != nil {
		return nil, err
	}
	if h.batch, err = NewSender(sendBatch); err != nil {
		return nil, err
	}
	rs, err := h.f.Receivers(hubBatch)
	if err != nil {
		h.batch.Close()
		return nil, err
	}
	h.out.init()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() { h.dispatch(r) })
	}
	go func() { wg.Wait(); close(h.done) }()
	return h, nil
}

// size is how many address:ports the range holds.
func (c Config) size() uint64 {
	return (uint64(1) << (32 - c.Addrs.Bits())) * uint64(c.Ports.Size())
}

// Conn gives out a flow: the least recently used free one, so that a late
// reply to a flow's last user reaches as few later users as can be.
func (h *Hub) Conn() (*Conn, error) {
	h.amu.Lock()
	i := -1
	switch {
	case h.next < h.tab.Len():
		i = h.next
		h.next++
	case len(h.free) > 0:
		i = h.free[0]
		h.free = h.free[1:]
	}
	h.amu.Unlock()
	if i < 0 {
		return nil, fmt.Errorf("vflow: all %d flows are in use", h.tab.Len())
	}
	c := newConn(h, i, h.tab.Flow(i))
	h.tab.At(i).Store(c)
	return c, nil
}

// release takes flow i back.
func (h *Hub) release(i int) {
	h.tab.At(i).Store(nil)
	h.amu.Lock()
	h.free = append(h.free, i)
	h.amu.Unlock()
}

// dispatch reads a steered socket until it is closed and hands each
// datagram to its flow's Conn.
func (h *Hub) dispatch(r *Receiver) {
	ms := make([]Message, hubBatch)
	for i := range ms {
		ms[i].Buf = make([]byte, MaxPayload)
	}
	for fails := 0; fails < maxReadErrors; {
		n, err := r.Receive(ms)
		if err != nil {
			if h.closed.Load() {
				return
			}
			fails++
			continue
		}
		fails = 0
		for i := range n {
			h.route(&ms[i])
		}
	}
}

// route hands m to its flow's Conn; a datagram for no open flow (one that
// was given back, or no flow the kernel named) is counted as unrouted.
func (h *Hub) route(m *Message) {
	if m.Errno != 0 {
		h.reportError(m)
		return
	}
	var c *Conn
	if slot := h.tab.Slot(m.Flow); slot != nil {
		c = slot.Load()
	}
	if c == nil {
		h.unrouted.Add(1)
		return
	}
	if !c.push(m) {
		h.dropped.Add(1)
	}
}

// reportError hands the kernel's error for a datagram sent to m.From
// (Message.Errno) to the one open flow of m.Flow's address connected to
// m.From (Conn.Connect), as a connected socket hears it. Flows not
// connected there are not told, as an unconnected socket is not. Two or
// more connected there (past the block's first 65,536 flows, several
// share an address) cannot be told apart, the kernel naming no port: the
// error is counted as unrouted and no flow is charged with it.
func (h *Hub) reportError(m *Message) {
	var hit *Conn
	n := 0
	for i := range h.tab.OnAddr(m.Flow.Addr()) {
		if c := h.tab.At(i).Load(); c != nil && c.connectedTo(m.From) {
			hit = c
			n++
		}
	}
	switch {
	case n == 1:
		hit.fail(m.Errno)
	case n > 1:
		h.unrouted.Add(1)
	}
}

// Config is the range the hub's flows take (a free default block when
// OpenHub was given none).
func (h *Hub) Config() Config { return h.f.Config() }

// Unrouted returns how many datagrams came for no open flow.
func (h *Hub) Unrouted() int64 { return h.unrouted.Load() }

// Dropped returns how many datagrams a flow had no room for (MaxQueued
// unread already).
func (h *Hub) Dropped() int64 { return h.dropped.Load() }

// Close stops the dispatcher, detaches the range and closes the Sender:
// close the Conns first (one still open receives nothing more, and its
// sends fail with net.ErrClosed). A second Close does nothing.
func (h *Hub) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	h.closeOut()
	err := h.f.Close()
	<-h.done
	return errors.Join(err, h.batch.Close())
}
