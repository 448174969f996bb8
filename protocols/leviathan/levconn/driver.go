package levconn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/impair"
	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// ErrTimeout is returned by Driver.Next when its deadline passes first.
var ErrTimeout = errors.New("levconn: timed out")

// DriverOptions configure a Driver. The zero value is usable.
type DriverOptions struct {
	// Config configures the connection engine.
	Config Config
	// Local is the local address to bind (the zero Addr: the OS chooses).
	Local netip.Addr
	// KernelStamps asks the kernel to stamp each datagram's arrival
	// (rxbuf.EnableStamps), for ReceivedAt.
	KernelStamps bool
	// SocketBuffer sets SO_RCVBUF/SO_SNDBUF when positive.
	SocketBuffer int
	// In and Out impair received and sent datagrams, drawn from Rand
	// (required when either is set).
	In, Out Impair
	Rand    *rand.Rand
	// Wake, when set, replaces per-read socket deadlines: the driver calls
	// Wake(t) before a blocking read that must end at t (the zero t:
	// disarm), and Wake's owner makes the read return at t, typically by
	// SetReadDeadline(now) on Driver.Socket from one sweeper goroutine
	// (simclient.Sweeper). Without it the driver sets the read deadline.
	Wake func(t time.Time)
	// OnSend and OnRecv, when set, see every datagram written to or read
	// from the socket (after Out impairment / before In impairment), e.g.
	// for a conformance wire log. They must not keep b.
	OnSend, OnRecv func(b []byte)
	// OnMalformed, when set, is told about every received datagram the
	// engine could not fully decode (it still acted on the decodable
	// prefix, see Conn.Receive), e.g. to record a violation.
	OnMalformed func(b []byte, err error)
	// Flow, when set, is the connection's address instead of a socket of
	// its own: a virtual flow (vflow.Conn), which the Driver then owns
	// (Close closes it). Local and SocketBuffer do not apply; kernel
	// stamps come with the flow's reads.
	Flow Flow
	// OnStray, when set, is told about every datagram a Flow received
	// from another address than the peer's (a connected socket never
	// receives those): it is dropped, not handed to the engine.
	OnStray func(b []byte, from netip.AddrPort)
}

// socket is what the Driver uses of its socket: a connected
// *net.UDPConn, or a Flow.
type socket interface {
	rxbuf.Socket
	SetReadDeadline(t time.Time) error
	Close() error
}

// Flow is a virtual flow (vflow.Conn): an address:port with no socket of
// its own, which sends to any address, stamps each datagram it reads with
// the kernel's receive time (StampInto) and, connected to the peer
// (Connect), reads the kernel's errors for what it sent there (an ICMP
// port unreachable as ECONNREFUSED), as the connected socket it replaces.
type Flow interface {
	socket
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	StampInto(p *int64)
	Connect(peer netip.AddrPort)
}

// Driver is the thin socket driver of one client connection: a connected
// UDP socket and a Conn, run on the caller's goroutine (Next blocks and
// runs timers and I/O until an event is available). Send*, Next and the
// accessors must be called from one goroutine; Close may be called from any.
type Driver struct {
	c      *Conn
	sock   socket
	peer   netip.AddrPort
	send   func(b []byte) (int, error) // to the peer
	flow   bool                        // sock is a Flow: sources are checked
	opt    DriverOptions
	in     *impair.Impairer
	out    *impair.Impairer
	rx     *rxbuf.Conn // whole datagrams, whatever their size
	queue  []Event
	qpos   int
	held   []byte // impaired datagram whose events are queued
	closed atomic.Bool
	// stamps: the socket has kernel receive stamps; kns is the stamp of
	// the datagram whose events Next returns (0: none).
	stamps bool
	kns    int64
	// covered is the context whose end the driver's owner has cancel its
	// reads already (CancelledBy): Next makes no context.AfterFunc of its
	// own for it.
	covered context.Context
}

// Dial opens a UDP socket connected to peer and a connection engine for it.
func Dial(peer netip.AddrPort, opt DriverOptions) (*Driver, error) {
	now := time.Now()
	c, err := New(opt.Config, now)
	if err != nil {
		return nil, err
	}
	if (!opt.In.IsZero() || !opt.Out.IsZero()) && opt.Rand == nil {
		return nil, errors.New("levconn: impairment needs DriverOptions.Rand")
	}
	d := &Driver{
		c:    c,
		peer: peer,
		opt:  opt,
		in:   impair.New(opt.In, opt.Rand, maxHeld),
		out:  impair.New(opt.Out, opt.Rand, maxHeld),
	}
	if opt.Flow != nil {
		f := opt.Flow
		d.sock, d.flow = f, true
		f.Connect(peer)
		d.send = func(b []byte) (int, error) { return f.WriteToUDPAddrPort(b, peer) }
		d.rx = rxbuf.NewConn(f)
		f.StampInto(&d.rx.Stamp)
		d.stamps = opt.KernelStamps
		return d, nil
	}
	var laddr *net.UDPAddr
	if opt.Local.IsValid() {
		laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(opt.Local, 0))
	}
	sock, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(peer))
	if err != nil {
		return nil, err
	}
	if opt.SocketBuffer > 0 {
		sock.SetReadBuffer(opt.SocketBuffer)
		sock.SetWriteBuffer(opt.SocketBuffer)
	}
	d.sock, d.send, d.rx = sock, sock.Write, rxbuf.NewConn(sock)
	d.stamps = opt.KernelStamps && d.rx.EnableStamps()
	return d, nil
}

// KernelStamps reports whether the socket's datagrams come with the
// kernel's receive stamps.
func (d *Driver) KernelStamps() bool { return d.stamps }

// Stamp is the kernel's receive stamp of the datagram whose events Next
// returns (ns on CLOCK_REALTIME; rxbuf.At converts it), 0 when it came
// with none or the impairment held it.
func (d *Driver) Stamp() int64 { return d.kns }

// Conn returns the connection engine (for Stats and settings).
func (d *Driver) Conn() *Conn { return d.c }

// SetReadDeadline sets the socket's read deadline (for a Wake owner).
func (d *Driver) SetReadDeadline(t time.Time) error { return d.sock.SetReadDeadline(t) }

// LocalAddr returns the socket's local address.
func (d *Driver) LocalAddr() netip.AddrPort {
	if a, ok := d.sock.LocalAddr().(*net.UDPAddr); ok {
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

// ImpairStats returns what the impairment did so far, per direction.
func (d *Driver) ImpairStats() (in, out ImpairStats) {
	return d.in.Stats(), d.out.Stats()
}

// Close closes the socket; a blocked Next returns ErrClosed. It does not
// send anything: send a CloseConnection response first to tell the peer.
func (d *Driver) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	return d.sock.Close()
}

// Cancel makes a blocked Next return, to find its context ended: what a
// context's end does for the owner that watches it for the driver
// (CancelledBy). It implements simclient.Canceler. Safe from any
// goroutine.
func (d *Driver) Cancel() { d.sock.SetReadDeadline(time.Now()) }

// CancelledBy says that the driver's owner calls Cancel when ctx ends (a
// run's simclient.CancelSet, one context.AfterFunc for all its clients),
// until CancelledByNone: Next then registers nothing with ctx, where it
// otherwise makes a context.AfterFunc at every call that blocks, an
// allocation and a turn of the context's lock, which every client of a
// run shares. Call it from Next's goroutine.
func (d *Driver) CancelledBy(ctx context.Context) { d.covered = ctx }

// CancelledByNone ends CancelledBy's: Next watches every context itself.
func (d *Driver) CancelledByNone() { d.covered = nil }

// Closed reports whether Close was called.
func (d *Driver) Closed() bool { return d.closed.Load() }

// SendRequest queues a request (see Conn.SendRequest) and writes what is
// due.
func (d *Driver) SendRequest(rel Reliability, t levwire.RequestType, payload []byte) (uint32, error) {
	now := time.Now()
	n, err := d.c.SendRequest(now, rel, t, payload)
	if err == nil {
		err = d.flush(now)
	}
	return n, err
}

// SendResponse queues a response (see Conn.SendResponse) and writes what
// is due.
func (d *Driver) SendResponse(rel Reliability, t levwire.ResponseType, responseTo uint32, payload []byte) (uint32, error) {
	now := time.Now()
	n, err := d.c.SendResponse(now, rel, t, responseTo, payload)
	if err == nil {
		err = d.flush(now)
	}
	return n, err
}

// SendMessage queues an encoded message as it is (see Conn.SendMessage)
// and writes what is due.
func (d *Driver) SendMessage(rel Reliability, msg []byte) (uint32, error) {
	now := time.Now()
	n, err := d.c.SendMessage(now, rel, msg)
	if err == nil {
		err = d.flush(now)
	}
	return n, err
}

// WriteRaw writes b to the peer as is, bypassing the engine (for
// conformance probes: malformed packets). Out impairment does not apply.
func (d *Driver) WriteRaw(b []byte) error {
	if d.opt.OnSend != nil {
		d.opt.OnSend(b)
	}
	_, err := d.send(b)
	return err
}

// Flush writes the datagrams the engine has due now (acks waiting for
// AckDelay are sent by Next when due).
func (d *Driver) Flush() error { return d.flush(time.Now()) }

func (d *Driver) flush(now time.Time) error {
	var first error
	for b := d.c.Poll(now); b != nil; b = d.c.Poll(now) {
		if d.out != nil && !d.out.Apply(now, netip.AddrPort{}, b) {
			continue
		}
		if err := d.write(b); err != nil && first == nil {
			first = err
		}
	}
	for {
		h, ok := d.out.Pop(now)
		if !ok {
			break
		}
		if err := d.write(h.Data); err != nil && first == nil {
			first = err
		}
		d.out.Recycle(h.Data)
	}
	return first
}

func (d *Driver) write(b []byte) error {
	if d.opt.OnSend != nil {
		d.opt.OnSend(b)
	}
	_, err := d.send(b)
	if err != nil && d.closed.Load() {
		return ErrClosed
	}
	return err
}

func earliest(ts ...time.Time) time.Time {
	var d time.Time
	for _, t := range ts {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	return d
}

// maxBlock bounds one blocking read without a Wake owner, so a cancelled
// context is noticed within it even if its wake-up raced a deadline reset.
const maxBlock = 250 * time.Millisecond

// Next runs the connection (reads, timers, resends, acks) until it has an
// event and returns it. It returns ErrTimeout when deadline (zero: none)
// passes first, ctx's error when ctx ends, ErrClosed after Close, and a
// socket error otherwise (e.g. ECONNREFUSED when the peer port is closed;
// see IsRefused). An EventMessage's payload is valid until the next call.
func (d *Driver) Next(ctx context.Context, deadline time.Time) (Event, error) {
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		if d.qpos < len(d.queue) {
			e := d.queue[d.qpos]
			d.qpos++
			return e, nil
		}
		d.queue, d.qpos = d.queue[:0], 0
		if d.held != nil {
			d.in.Recycle(d.held)
			d.held = nil
		}
		if d.closed.Load() {
			return Event{}, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		if stop == nil && ctx.Done() != nil && ctx != d.covered {
			stop = context.AfterFunc(ctx, func() { d.sock.SetReadDeadline(time.Now()) })
		}
		now := time.Now()
		if h, ok := d.in.Pop(now); ok {
			d.held, d.kns = h.Data, 0
			d.receive(now, h.Data)
			continue
		}
		if !deadline.IsZero() && !now.Before(deadline) {
			return Event{}, ErrTimeout
		}
		d.c.Tick(now)
		d.queue = append(d.queue, d.c.Events()...)
		if err := d.flush(now); err != nil {
			return Event{}, err
		}
		if len(d.queue) > 0 {
			continue
		}
		if err := d.readOne(now, deadline); err != nil {
			return Event{}, err
		}
	}
}

// readOne waits for one datagram until the connection's next timer, the
// deadline or maxBlock, and hands it to the connection, whole whatever
// its size (rxbuf). Its error ends Next; a read that timed out is none.
func (d *Driver) readOne(now, deadline time.Time) error {
	wake := earliest(d.c.Deadline(), d.in.Next(), d.out.Next(), deadline)
	if d.opt.Wake != nil {
		d.opt.Wake(wake)
	} else {
		if wake.IsZero() || wake.Sub(now) > maxBlock {
			wake = now.Add(maxBlock)
		}
		d.sock.SetReadDeadline(wake)
	}
	b, from, err := d.rx.Read()
	if d.opt.Wake != nil {
		d.opt.Wake(time.Time{})
	}
	if err != nil {
		if d.closed.Load() {
			return ErrClosed
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if d.opt.Wake != nil {
				d.sock.SetReadDeadline(time.Time{})
			}
			return nil
		}
		return fmt.Errorf("levconn: read: %w", err)
	}
	if d.flow && from != d.peer {
		if d.opt.OnStray != nil {
			d.opt.OnStray(b, from)
		}
		return nil // a connected socket would not have read it
	}
	now, d.kns = time.Now(), d.rx.Stamp
	if d.opt.OnRecv != nil {
		d.opt.OnRecv(b)
	}
	if d.in != nil && !d.in.Apply(now, netip.AddrPort{}, b) {
		return nil // dropped or held
	}
	d.receive(now, b)
	return nil
}

func (d *Driver) receive(now time.Time, b []byte) {
	if err := d.c.Receive(now, b); err != nil && d.opt.OnMalformed != nil && !errors.Is(err, ErrClosed) {
		d.opt.OnMalformed(b, err)
	}
	d.queue = append(d.queue, d.c.Events()...)
	d.flush(now)
}

// IsRefused reports whether err says the peer's port is closed (an ICMP
// port unreachable surfaced on the connected socket).
func IsRefused(err error) bool {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return errors.Is(se.Err, syscall.ECONNREFUSED)
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
