//go:build linux

package vflow

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/instant"
)

// Conn is one flow given out by a Hub, used as a client's UDP socket: the
// subset of *net.UDPConn's methods a client needs, with the same meaning
// (deadlines, net.ErrClosed, os.ErrDeadlineExceeded). Reads and
// SetReadDeadline may come from different goroutines; one reader at a
// time.
type Conn struct {
	h    *Hub
	addr word4 // the flow's address:port

	mu       sync.Mutex // guards q, deadline, closed, failed and notify
	q        []packet
	deadline instant.Instant
	notify   func()        // OnReady's, called once at the next datagram or Close
	wake     chan struct{} // signalled on every change of the above; made by the first wait

	timer *time.Timer   // the reader's, for its deadline; made by its first wait with one
	stamp *int64        // where a read writes its datagram's receive time (StampInto)
	peer  atomic.Uint64 // Connect's peer (a word4); 0: none
	i     int32         // the flow's index in the Hub's table
	// closed: Close was called. failed: the kernel's error for a datagram
	// sent to peer, which the next read returns (a connected socket's
	// pending error), 0 when none.
	closed bool
	failed uint16
}

// packet is a received datagram waiting to be read: 48 bytes, its source
// in a word (a netip.AddrPort is 32 bytes, and the queue of one it sits in
// took the 80-byte class).
type packet struct {
	b     []byte
	from  word4
	ns    int64 // kernel receive time, ns since the epoch; 0: none
	trunc bool
}

// newConn makes flow i's Conn. Its wake channel and timer are made by its
// first parked read: a client that only ever suspends (OnReady) or finds
// its datagram there has neither, some 250 bytes less per flow.
func newConn(h *Hub, i int, addr netip.AddrPort) *Conn {
	return &Conn{h: h, i: int32(i), addr: pack4(addr)}
}

// Connect makes c's reads return the kernel's errors for the datagrams it
// sends to peer (an ICMP port unreachable as ECONNREFUSED, once, on the
// next read), as a UDP socket connected to peer does; a Conn not connected
// is told none, as an unconnected socket is not. It does not filter what
// c receives: the caller judges a datagram's source.
func (c *Conn) Connect(peer netip.AddrPort) { c.peer.Store(uint64(pack4(peer))) }

// word4 is an IPv4 address:port in one word, with a bit that makes it
// non-zero (pack4); 0 is none, or an address that is not IPv4 (flows and
// the datagrams they receive are IPv4).
type word4 uint64

func pack4(ap netip.AddrPort) word4 {
	a := ap.Addr().Unmap()
	if !a.Is4() {
		return 0
	}
	b := a.As4()
	return 1<<48 | word4(binary.BigEndian.Uint32(b[:]))<<16 | word4(ap.Port())
}

// AddrPort is w unpacked: the zero AddrPort for 0.
func (w word4) AddrPort() netip.AddrPort {
	if w == 0 {
		return netip.AddrPort{}
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(w>>16))
	return netip.AddrPortFrom(netip.AddrFrom4(b), uint16(w))
}

// connectedTo reports whether c was connected to ap.
func (c *Conn) connectedTo(ap netip.AddrPort) bool {
	p := c.peer.Load()
	return p != 0 && p == uint64(pack4(ap))
}

// fail makes c's next read return the kernel's error e for a datagram c
// sent (reportError), waking a waiting read as a datagram does; a later
// error replaces one not yet read.
func (c *Conn) fail(e syscall.Errno) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.failed = uint16(e)
	f, w := c.notify, c.wake
	c.notify = nil
	c.mu.Unlock()
	signal(w)
	if f != nil {
		f()
	}
}

// takeFailed returns the read error of the pending kernel error, clearing
// it; nil when there is none. c.mu is held.
func (c *Conn) takeFailed() error {
	if c.failed == 0 {
		return nil
	}
	e := syscall.Errno(c.failed)
	c.failed = 0
	return c.opErr("read", os.NewSyscallError("recvmsg", e))
}

// StampInto makes every read write the kernel receive time of the datagram
// it returns into *p (ns since the epoch, CLOCK_REALTIME; 0 when the
// kernel gave none).
func (c *Conn) StampInto(p *int64) { c.stamp = p }

// AddrPort returns the flow's address:port.
func (c *Conn) AddrPort() netip.AddrPort { return c.addr.AddrPort() }

// LocalAddr returns the flow's address, as a *net.UDPAddr.
func (c *Conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.AddrPort()) }

// SyscallConn reports that a flow has no descriptor of its own: a caller
// falls back to the methods here.
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	return nil, &net.OpError{Op: "raw-conn", Net: "udp", Source: c.LocalAddr(), Err: errNoFD}
}

var errNoFD = os.NewSyscallError("virtual flow", syscall.ENOTSUP)

// signal wakes a parked read: w is c.wake, read under c.mu (nil: no read
// ever parked).
func signal(w chan struct{}) {
	if w == nil {
		return
	}
	select {
	case w <- struct{}{}:
	default:
	}
}

// push queues a copy of m for the reader; false when the queue is full or
// the Conn closed.
func (c *Conn) push(m *Message) bool {
	p := packet{b: append([]byte(nil), m.Buf[:m.N]...), from: pack4(m.From), trunc: m.Truncated}
	if !m.Time.IsZero() {
		p.ns = m.Time.UnixNano()
	}
	c.mu.Lock()
	ok := !c.closed && len(c.q) < MaxQueued
	var f func()
	if ok {
		c.q = append(c.q, p)
		f, c.notify = c.notify, nil
	}
	w := c.wake
	c.mu.Unlock()
	if ok {
		signal(w)
	}
	if f != nil {
		f()
	}
	return ok
}

// Ready reports whether a read would return at once: a datagram or an
// error is pending, or c is closed.
func (c *Conn) Ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed || len(c.q) > 0 || c.failed != 0
}

// OnReady calls f once c is Ready: at once on this goroutine if it is,
// else on the goroutine that queues its next datagram (the hub's
// dispatcher) or closes it. A client's session waits for its reply this
// way without a goroutine (simclient.Notifier); a later OnReady replaces
// an f not yet called, whose wait has ended otherwise.
func (c *Conn) OnReady(f func()) {
	c.mu.Lock()
	if c.closed || len(c.q) > 0 || c.failed != 0 {
		c.mu.Unlock()
		f()
		return
	}
	c.notify = f
	c.mu.Unlock()
}

// SetReadDeadline bounds the wait of reads, as net.Conn's does: a read
// waiting then returns an error wrapping os.ErrDeadlineExceeded.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	closed := c.closed
	c.deadline = instant.Of(t)
	w := c.wake
	c.mu.Unlock()
	if closed {
		return c.opErr("set", net.ErrClosed)
	}
	signal(w)
	return nil
}

// ReadMsgUDPAddrPort waits for the flow's next datagram (until the read
// deadline) and copies it into b; flags has MSG_TRUNC when it was cut. No
// control messages are returned (StampInto gives the receive time). A
// pending error (Connect) is returned first, once, wrapping its errno.
func (c *Conn) ReadMsgUDPAddrPort(b, _ []byte) (n, oobn, flags int, from netip.AddrPort, err error) {
	for {
		if err := c.WaitReadable(); err != nil {
			return 0, 0, 0, from, err
		}
		c.mu.Lock()
		if err := c.takeFailed(); err != nil && !c.closed {
			c.mu.Unlock()
			return 0, 0, 0, from, err
		}
		if len(c.q) > 0 && !c.closed {
			p := c.q[0]
			c.q[0] = packet{}
			if len(c.q) == 1 {
				c.q = c.q[:0] // the next datagram reuses the array
			} else {
				c.q = c.q[1:]
			}
			c.mu.Unlock()
			return c.deliver(p, b)
		}
		c.mu.Unlock()
	}
}

// WaitReadable blocks until a datagram or an error (Connect) is pending
// for c, its read deadline passes or it closes, and returns the error a
// read would then return: nil when it would return either.
// It takes no buffer: a client waiting for a reply on a virtual flow
// needs none until the reply is there.
func (c *Conn) WaitReadable() error {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return c.opErr("read", net.ErrClosed)
		}
		if len(c.q) > 0 || c.failed != 0 {
			c.mu.Unlock()
			return nil
		}
		if c.wake == nil {
			c.wake = make(chan struct{}, 1)
		}
		dl, w := c.deadline.Time(), c.wake
		c.mu.Unlock()
		if err := c.wait(w, dl); err != nil {
			return err
		}
	}
}

func (c *Conn) deliver(p packet, b []byte) (n, oobn, flags int, from netip.AddrPort, err error) {
	n = copy(b, p.b)
	if n < len(p.b) || p.trunc {
		flags = unix.MSG_TRUNC
	}
	if c.stamp != nil {
		*c.stamp = p.ns
	}
	return n, 0, flags, p.from.AddrPort(), nil
}

// wait waits for a change (a datagram, a new deadline, Close: a signal
// on w, c.wake) or the deadline dl; an error once dl passed.
func (c *Conn) wait(w chan struct{}, dl time.Time) error {
	if dl.IsZero() {
		<-w
		return nil
	}
	d := time.Until(dl)
	if d <= 0 {
		return c.opErr("read", os.ErrDeadlineExceeded)
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-w:
	case <-c.timer.C:
	}
	c.timer.Stop()
	return nil
}

// WriteToUDPAddrPort sends b from the flow to addr (IPv4), in a batch
// with other flows' datagrams as WriteQueued does, with no send stamp.
func (c *Conn) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	return c.write(b, addr, nil)
}

// WriteQueued sends b from the flow to addr (IPv4) in a batch with other
// flows' datagrams (outq.go): it returns once b is copied into the hub's
// queue, and the writer flushing the queue (this one, when no flush was
// under way) sends it in a batch with others, writing the time just
// before the system call that carries it into *sent (ns since the epoch,
// CLOCK_REALTIME) in place of the value *sent holds now: the caller stores
// its own stamp there first, and reads the send's when its reply comes. A
// later store of the caller's is kept (the flusher's is a
// compare-and-swap). A failed send reaches the flow's next read.
func (c *Conn) WriteQueued(b []byte, addr netip.AddrPort, sent *atomic.Int64) (int, error) {
	return c.write(b, addr, sent)
}

// write queues b to addr (outq.go), its send stamped into sent unless
// sent is nil.
func (c *Conn) write(b []byte, addr netip.AddrPort, sent *atomic.Int64) (int, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return 0, c.opErr("write", net.ErrClosed)
	}
	to := netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	if err := c.h.queue(c, to, b, sent); err != nil {
		return 0, &net.OpError{Op: "write", Net: "udp", Source: c.LocalAddr(), Addr: net.UDPAddrFromAddrPort(to), Err: err}
	}
	return len(b), nil
}

// Close gives the flow back to the Hub; a waiting read returns
// net.ErrClosed. A second Close returns net.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	was := c.closed
	f, w := c.notify, c.wake
	c.closed, c.q, c.notify = true, nil, nil
	c.mu.Unlock()
	if was {
		return c.opErr("close", net.ErrClosed)
	}
	signal(w)
	if f != nil {
		f()
	}
	c.h.release(int(c.i))
	return nil
}

func (c *Conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "udp", Source: c.LocalAddr(), Err: err}
}
