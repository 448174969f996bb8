package udpclient

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/impair"
	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/simclient"
)

var (
	// errTimeout: the deadline given to recv passed.
	errTimeout = errors.New("timeout")
	// errCancelled: the session's context ended.
	errCancelled = simclient.ErrCancelled
	// errWouldBlock: nothing to read yet, and the caller asked recv not to
	// park (noPark): it suspends the session instead (await).
	errWouldBlock = errors.New("no datagram yet")
)

// pastDeadline makes a read non-blocking.
var pastDeadline = time.Unix(1, 0)

// transport is one client's UDP socket with the run's sweeper for
// timeouts and the client-side impairment. It is used by one goroutine
// (the session's), except cancel and close.
type transport struct {
	c  udpConn // a *net.UDPConn, or a virtual flow (flows.go)
	sw *simclient.Sweeper
	// waker is the sweeper's for this socket's parked reads, made at the
	// first (armWaker): a client whose waits all suspend holds none.
	waker atomic.Pointer[simclient.Waker]
	rx    rxbuf.Buf // the last datagram read, valid until the next recv
	out   *impair.Impairer
	in    *impair.Impairer
	cur   []byte // held incoming datagram returned by the last recv, recycled at the next

	cancelled atomic.Bool
	closed    atomic.Bool
	// kns is the stamp of the datagram recv last returned (ns on
	// CLOCK_REALTIME), 0 when it came with none (stamps).
	kns int64
	// readAt is recv's clock reading just before the read that returned
	// its datagram, zero when that read parked (then the clock is read
	// again to time the reply: replyAt).
	readAt instant.Instant
	// io counts the payload bytes sent and received (the session's
	// simclient.Base.IO).
	io simclient.IOCount
	// sent is the send stamp of the datagram send last sent: taken just
	// before the system call that sent it (rawWrite, or write's net
	// package call), so that send lag counts all of the client's own
	// work. Through an outgoing impairment it is when the impairment
	// took the datagram (it may go out later: the delay is the network's
	// part of the latency, not the client's lag); after a failed send,
	// when send gave up.
	sent instant.Instant

	// window is how long recv polls the socket without parking after a
	// send (run --precise; 0: never), until pollUntil (zero: not armed).
	window    time.Duration
	pollUntil instant.Instant
	// *sockio is the socket's raw reads and writes (transport_linux.go),
	// nil where they are not available (a virtual flow, another OS): some
	// 250 bytes a virtual client does not hold.
	*sockio

	wmu sync.Mutex // serialises watch's changes and close
	// cset is the set whose context's end cancels the transport (watch),
	// cslot its place there.
	cset  atomic.Pointer[simclient.CancelSet]
	cslot int32

	// The flags last, beside cslot, where they take no padding.
	// stamps: the kernel stamps every datagram the socket receives
	// (SO_TIMESTAMPNS, Linux). noPark asks the next recv to return
	// errWouldBlock rather than park until its deadline, where it can
	// (canSuspend, nothing held, no polling window); each recv clears it.
	// nowait is that for one read.
	stamps bool
	noPark bool
	nowait bool
}

func (t *transport) open(src netip.Addr, bufSize int, sw *simclient.Sweeper, window time.Duration) error {
	la := &net.UDPAddr{}
	if src.IsValid() {
		la.IP = src.AsSlice()
	}
	c, err := net.ListenUDP("udp", la)
	if err != nil {
		return err
	}
	_ = simclient.SetBuffers(c, bufSize) // best effort: the OS caps it
	t.attach(c, sw, window)
	return nil
}

// attach makes c the transport's socket (open's, or openFlow's virtual
// flow), woken by the sweeper, polling for window after each send where
// it can.
func (t *transport) attach(c udpConn, sw *simclient.Sweeper, window time.Duration) {
	t.c = c
	t.sw = sw
	if t.initIO() && window > 0 && t.preciseOK() {
		t.window = window
	}
}

// cancel makes a blocked or later recv return errCancelled.
func (t *transport) cancel() {
	t.cancelled.Store(true)
	if t.c != nil {
		_ = t.c.SetReadDeadline(time.Now())
	}
}

// watch makes ctx's end cancel the transport, through run sh's set for
// ctx (one context.AfterFunc for all its clients). A socket kept across a
// client's sessions joins the set once, not once per session. Leaving it
// is close's job. A session watching the context already watched takes
// no lock.
func (t *transport) watch(ctx context.Context, sh *simclient.Shared) {
	if c := t.cset.Load(); c != nil && c.Context() == ctx {
		return
	}
	set := sh.Cancels(ctx)
	t.wmu.Lock()
	defer t.wmu.Unlock()
	c := t.cset.Load()
	if c == set || t.closed.Load() {
		return
	}
	if c != nil {
		c.Remove(&t.cslot)
	}
	t.cset.Store(set)
	set.Add(t, &t.cslot)
}

// Cancel implements simclient.Canceler: cancel.
func (t *transport) Cancel() { t.cancel() }

func (t *transport) close() error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if c := t.cset.Swap(nil); c != nil {
		c.Remove(&t.cslot)
	}
	if t.c == nil || !t.closed.CompareAndSwap(false, true) {
		return nil
	}
	t.sw.Remove(t.waker.Load())
	return t.c.Close()
}

// localAddr returns the socket's address.
func (t *transport) localAddr() netip.AddrPort {
	if t.c == nil {
		return netip.AddrPort{}
	}
	return t.c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// send sends b to addr through the outgoing impairment. b may be reused by
// the caller as soon as send returns.
func (t *transport) send(to netip.AddrPort, b []byte) error {
	if t.closed.Load() {
		t.sent = instant.Now()
		return net.ErrClosed
	}
	if t.window > 0 {
		defer t.armPoll()
	}
	if t.out == nil {
		return t.put(b, to)
	}
	now := time.Now()
	t.sent = instant.Of(now) // the impairment takes it now, whenever it goes out
	if t.out.Apply(now, to, b) {
		if err := t.put(b, to); err != nil {
			return err
		}
	}
	return t.flushOut(now)
}

// queuer is a virtual flow's batched write (vflow.Conn.WriteQueued).
type queuer interface {
	WriteQueued(b []byte, addr netip.AddrPort, sent *atomic.Int64) (int, error)
}

// sendQueued is send for a request's first datagram: on an unimpaired
// virtual flow it is queued for the hub's batched send, and *cell, which
// holds t.sent's stamp once it returns, is given the time just before the
// system call that carries it when it goes (queuedSent reads it). Through
// a socket, or impaired, it is send, and *cell holds t.sent.
func (t *transport) sendQueued(to netip.AddrPort, b []byte, cell *atomic.Int64) error {
	q, ok := t.c.(queuer)
	if !ok || t.out != nil || t.window > 0 || t.closed.Load() {
		err := t.send(to, b)
		cell.Store(t.sent.Time().UnixNano())
		return err
	}
	now := time.Now()
	t.sent = instant.Of(now)
	cell.Store(now.UnixNano())
	if _, err := q.WriteQueued(b, to, cell); err != nil {
		return err
	}
	t.io.Sent(len(b))
	return nil
}

// queuedSent is the send stamp of a datagram sendQueued stamped sent: the
// flusher's, once it went.
func queuedSent(sent instant.Instant, cell *atomic.Int64) time.Time {
	t := sent.Time()
	if ns := cell.Load(); ns > t.UnixNano() {
		// A wall-clock stamp, compared with the reply's as a time.Time:
		// as an Instant it would count from the process's epoch on the
		// wall clock, and a step of that clock since would shift it.
		return time.Unix(0, ns)
	}
	return t
}

// put writes b to to, counting its bytes when it left. Unimpaired, write
// stamps t.sent.
func (t *transport) put(b []byte, to netip.AddrPort) error {
	err := t.write(b, to)
	if err == nil {
		t.io.Sent(len(b))
	}
	return err
}

// drainOut sends every held outgoing datagram at its due time (a few ms:
// the impairment's delay, jitter and reorder hold), for datagrams that draw
// no reply and so no receive loop that would flush them.
func (t *transport) drainOut() error {
	for t.out != nil && !t.closed.Load() {
		n := t.out.Next()
		if n.IsZero() {
			return nil
		}
		if d := time.Until(n); d > 0 {
			time.Sleep(d)
		}
		if err := t.flushOut(time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// flushOut sends the held outgoing datagrams that are due.
func (t *transport) flushOut(now time.Time) error {
	for {
		h, ok := t.out.Pop(now)
		if !ok {
			return nil
		}
		err := t.put(h.Data, h.Addr)
		t.out.Recycle(h.Data)
		if err != nil {
			return err
		}
	}
}

// recv returns the next datagram and its source, waiting until deadline
// (zero: no deadline), whole whatever its size (rxbuf). The datagram
// aliases a buffer valid until the next recv. It returns errTimeout once
// deadline passed, errCancelled after cancel, and socket errors as they
// are.
func (t *transport) recv(deadline time.Time) ([]byte, netip.AddrPort, error) {
	if t.cur != nil {
		t.in.Recycle(t.cur)
		t.cur = nil
	}
	noPark := t.noPark
	t.noPark = false
	for {
		if t.cancelled.Load() {
			return nil, netip.AddrPort{}, errCancelled
		}
		now := time.Now()
		wake := deadline
		if t.in != nil || t.out != nil {
			if data, from, got, err := t.held(now, &wake); got || err != nil {
				return data, from, err
			}
		}
		poll, again := t.arm(now, wake, deadline, noPark)
		if again {
			continue // a held datagram is due
		}
		t.readAt = instant.Of(now) // zeroed by a read that parks
		data, from, err := t.read(t.spinUntil(now, wake))
		t.nowait = false
		if err == nil {
			t.io.Received(len(data))
		}
		if poll {
			_ = t.c.SetReadDeadline(time.Time{})
		}
		if err != nil {
			if err = t.readFailed(err, poll, deadline); err != nil {
				return nil, netip.AddrPort{}, err
			}
			continue
		}
		t.disarmWaker()
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if t.in == nil {
			return data, from, nil
		}
		if t.in.Apply(now, from, data) {
			return data, from, nil
		}
	}
}

// arm prepares recv's read that waits until wake (deadline is recv's): a
// read deadline of its own (poll, cleared after the read), the sweeper's
// arming, or none for a caller that suspends instead of parking. again
// is true when a held datagram is due: recv looks again at once.
func (t *transport) arm(now, wake, deadline time.Time, noPark bool) (poll, again bool) {
	switch {
	case !wake.IsZero() && !now.Before(wake):
		if deadline.IsZero() || now.Before(deadline) {
			return false, true
		}
		// The deadline passed: still take what already arrived, with
		// a non-blocking read, before calling it a timeout.
		_ = t.c.SetReadDeadline(pastDeadline)
		return true, false
	case wake.IsZero():
		t.disarmWaker()
	case wake.Sub(now) < t.sw.Tick():
		// Closer than the sweeper's resolution (rate probes, ping
		// series, impairment delays): a deadline of our own, cleared
		// after the read.
		_ = t.c.SetReadDeadline(wake)
		return true, false
	case noPark && t.in == nil && t.out == nil && t.pollUntil.IsZero() && t.canSuspend():
		t.nowait = true // the caller suspends instead of parking
	default:
		t.armWaker(wake)
	}
	return false, false
}

// armWaker arms the sweeper to wake the read parked until at, making the
// socket's waker at its first arming (under wmu, as close removes it: a
// closed transport makes none, its read fails at once).
func (t *transport) armWaker(at time.Time) {
	w := t.waker.Load()
	if w == nil {
		t.wmu.Lock()
		if w = t.waker.Load(); w == nil && !t.closed.Load() {
			w = t.sw.Add(t.c)
			t.waker.Store(w)
		}
		t.wmu.Unlock()
		if w == nil {
			return
		}
	}
	w.Arm(at)
}

// disarmWaker cancels the sweeper's arming, if any.
func (t *transport) disarmWaker() {
	if w := t.waker.Load(); w != nil {
		w.Disarm()
	}
}

// spinUntil returns until when recv's read polls without parking: in
// precise mode, just after a send, until the window or the wake-up ends,
// whichever is first (zero: it parks; the window ends once passed).
func (t *transport) spinUntil(now, wake time.Time) time.Time {
	if t.pollUntil.IsZero() {
		return time.Time{}
	}
	spin := t.pollUntil.Time()
	if !wake.IsZero() && wake.Before(spin) {
		spin = wake
	}
	if !now.Before(spin) {
		spin, t.pollUntil = time.Time{}, 0
	}
	return spin
}

// readFailed judges recv's failed read (poll: under a deadline of its
// own): nil when recv should look again, else the error recv returns.
func (t *transport) readFailed(err error, poll bool, deadline time.Time) error {
	if t.cancelled.Load() {
		return errCancelled // closed or woken by Close/cancel
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if poll {
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return errTimeout
		}
		return nil
	}
	// Woken by the sweeper (maybe for an older arming) or by cancel:
	// clear the deadline and look at the clock.
	_ = t.c.SetReadDeadline(time.Time{})
	return nil
}

// held is recv's work for an impaired socket: it sends the outgoing
// datagrams that are due, returns an incoming one that is due (got; held
// in t.cur), or moves *wake to the next held datagram's due time if that
// comes before it. It is a function of its own so that an unimpaired
// recv's frame, on every client's goroutine stack, does not carry it.
//
//go:noinline
func (t *transport) held(now time.Time, wake *time.Time) (data []byte, from netip.AddrPort, got bool, err error) {
	if t.out != nil {
		if err := t.flushOut(now); err != nil {
			return nil, netip.AddrPort{}, false, err
		}
	}
	if h, ok := t.in.Pop(now); ok {
		t.cur, t.kns = h.Data, 0 // its time is when the impairment let it through
		return h.Data, h.Addr, true, nil
	}
	if n := t.out.Next(); !n.IsZero() && (wake.IsZero() || n.Before(*wake)) {
		*wake = n
	}
	if n := t.in.Next(); !n.IsZero() && (wake.IsZero() || n.Before(*wake)) {
		*wake = n
	}
	return nil, netip.AddrPort{}, false, nil
}

// readNet reads one datagram into t.rx with the net package, parked on
// the netpoller until one comes, holding a 64 KiB scratch while it waits:
// where raw reads are not available (initIO).
func (t *transport) readNet() ([]byte, netip.AddrPort, error) {
	if f := t.flow(); f != nil {
		if t.nowait && !f.Ready() {
			t.idle() // nothing to read: wait without a buffer
			return nil, netip.AddrPort{}, errWouldBlock
		}
		// Wait for the datagram holding no scratch.
		if err := f.WaitReadable(); err != nil {
			return nil, netip.AddrPort{}, err
		}
	}
	s := rxbuf.Get()
	t.kns, t.readAt = 0, 0
	n, _, _, from, err := t.c.ReadMsgUDPAddrPort(s.Bytes(), nil)
	if err != nil {
		s.Put()
		return nil, from, err
	}
	return t.rx.Keep(s, n), from, nil
}

// armPoll opens the window in which recv polls without parking, after a
// send in precise mode.
func (t *transport) armPoll() { t.pollUntil = instant.Now().Add(t.window) }

// idle gives the receive buffers back to their pools while the session
// waits without reading: a client waiting out a think time or a ping
// interval holds none (at 60,000 pollers, 2 KiB each would be 120 MiB).
// The caller must hold nothing recv returned (a step that completed has
// decoded and copied what it keeps). An impaired socket keeps its buffer.
func (t *transport) idle() {
	if t.in != nil || t.cur != nil {
		return
	}
	t.rx.Release()
}

// isRefused reports whether err is an ICMP port-unreachable reported on
// the socket.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// replyAt is when the datagram recv last returned reached this host: its
// kernel stamp mapped with recv's clock reading when the read did not
// park (no clock read here), else sh.ReplyAt's.
func (t *transport) replyAt(sh *simclient.Shared) time.Time {
	if t.kns != 0 && !t.readAt.IsZero() {
		if at, ok := rxbuf.AtRead(t.readAt.Time(), t.kns); ok {
			return at
		}
	}
	return sh.ReplyAt(t.stamps, t.kns)
}

// stampSend takes the send stamp just before the system call, unless the
// outgoing impairment took it already (send).
func (t *transport) stampSend() {
	if t.out == nil {
		t.sent = instant.Now()
	}
}
