// Package faultproxy is a loopback proxy in front of a server, for tests
// of what a load or a suite does when its target fails mid-run: after a
// given number of client packets (datagrams, or TCP reads) it either dies
// (closes its listening socket and every connection for good: the
// target refuses), hangs (keeps every socket open and forwards nothing
// more: the target is silent), closes or resets every TCP connection, as
// it accepts it too (the target closes connections unanswered), or
// answers every datagram with bytes of no protocol (Junk: the target
// garbles). It listens on 127.0.0.1 port 0, or where Options.Listen says.
//
// A proxy started with Options.Record keeps every packet it forwards, each
// way, in order (Recorded, Sent): the recording relay of the tests that
// compare what two clients sent. Options.Copies sends every server
// datagram more than once (a lobby that answers twice).
package faultproxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
)

// Mode is what the proxy does once its budget of packets is spent.
type Mode int

// Modes.
const (
	Healthy Mode = iota // forwards for ever
	Die                 // closes everything: refused
	Hang                // keeps the sockets, forwards nothing: silent
	Close               // TCP: closes each connection (FIN), new ones as accepted
	Reset               // TCP: resets each connection (RST), new ones as accepted
	Garble              // UDP: answers each datagram with Junk instead
	Trickle             // TCP: forwards everything, the server's bytes one per TrickleEvery
)

// TrickleEvery is how long a Trickle proxy takes over each byte of the
// server's it delivers.
var TrickleEvery = 100 * time.Millisecond

// Junk is what a Garble proxy answers: 16 bytes of no protocol.
var Junk = []byte{0xde, 0xad, 0xbe, 0xef, 0x13, 0x37, 0x42, 0x99, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}

// Options are a proxy's extras; the zero value is a plain proxy.
type Options struct {
	// Record keeps every packet forwarded, each way (Recorded).
	Record bool
	// Copies is how many times a UDP proxy sends each server datagram to
	// its client (0 and 1: once).
	Copies int
	// Listen is where the proxy listens; unset, 127.0.0.1 on a free port.
	Listen netip.AddrPort
}

// Packet is one packet the proxy forwarded: a datagram, or what one TCP
// read got.
type Packet struct {
	FromClient bool
	Conn       int // TCP: the connection's number, from 0 as accepted; UDP: 0
	B          []byte
}

// Proxy forwards to a server until its fault.
type Proxy struct {
	mode  Mode
	after int64
	opt   Options
	recmu sync.Mutex
	log   []Packet
	pipes sync.WaitGroup // TCP client-to-server pipes, for Recorded
	// mark is a UDP recorder's own client (Recorded's settle): its
	// datagram, read after every one sent before it, is not forwarded.
	mark    *net.UDPConn
	markAt  netip.AddrPort
	marked  chan uint64 // the number each mark read carried
	marks   uint64      // marks sent, under settlem
	settlem sync.Mutex
	n       atomic.Int64
	empty   atomic.Int64
	// Fault is closed when the fault happened.
	Fault chan struct{}
	once  sync.Once

	mu      sync.Mutex
	closers []io.Closer
	clients []*net.TCPConn // TCP client connections, for Close and Reset
	closed  bool
	wg      sync.WaitGroup
	addr    netip.AddrPort
}

// Addr is where clients send.
func (p *Proxy) Addr() netip.AddrPort { return p.addr }

// Faulted reports whether the fault happened.
func (p *Proxy) Faulted() bool {
	select {
	case <-p.Fault:
		return true
	default:
		return false
	}
}

// count counts one client packet and reports whether it may be
// forwarded; the packet that spends the budget triggers the fault.
func (p *Proxy) count() bool {
	if p.mode == Healthy {
		return true
	}
	if p.n.Add(1) <= p.after {
		return true
	}
	p.Trip()
	return false
}

// Trip makes the fault happen now, whatever is left of the budget (a
// Healthy proxy ignores it).
func (p *Proxy) Trip() {
	if p.mode == Healthy {
		return
	}
	p.once.Do(func() {
		close(p.Fault)
		switch p.mode {
		case Die:
			p.closeAll()
		case Close, Reset:
			p.mu.Lock()
			cs := p.clients
			p.mu.Unlock()
			for _, c := range cs {
				p.end(c)
			}
		}
	})
}

// end ends client connection c as Close or Reset do: a reset at once, or a
// close after reading what the client sends until it closes too, so that
// the client reads the end of the stream, not a reset for data the proxy
// left unread.
func (p *Proxy) end(c *net.TCPConn) {
	if p.mode == Reset {
		c.SetLinger(0)
		c.Close()
		return
	}
	c.CloseWrite()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		io.Copy(io.Discard, c) // until the client closes, or Close closes c
		c.Close()
	}()
}

// EmptyConns counts the TCP client connections that ended without
// sending a byte: a reachability check's connect-and-close, told apart
// from clients and probes, which all send.
func (p *Proxy) EmptyConns() int64 { return p.empty.Load() }

func (p *Proxy) track(c io.Closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.closers = append(p.closers, c)
	return true
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	cs := p.closers
	p.closers, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

// Close closes every socket and waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.closeAll()
	p.wg.Wait()
}

func newProxy(mode Mode, after int, opt Options) *Proxy {
	return &Proxy{mode: mode, after: int64(after), opt: opt, Fault: make(chan struct{})}
}

// record keeps a copy of b, when the proxy records.
func (p *Proxy) record(fromClient bool, conn int, b []byte) {
	if !p.opt.Record {
		return
	}
	p.recmu.Lock()
	p.log = append(p.log, Packet{FromClient: fromClient, Conn: conn, B: bytes.Clone(b)})
	p.recmu.Unlock()
}

// Recorded is every packet forwarded so far, each way, in the order the
// proxy read them (Options.Record). On TCP it first waits until every
// client connection has ended, so that all a client sent is in.
//
// On UDP it first settles: a datagram a client sent before the call may
// still wait in the proxy's socket. The proxy sends itself a mark, and
// the socket's queue is read in order, so once the mark is read every
// datagram sent before it is recorded (or the proxy is closed, or 5 s
// passed: a guard, not a wait the tests count on).
func (p *Proxy) Recorded() []Packet {
	p.pipes.Wait()
	p.settle()
	p.recmu.Lock()
	defer p.recmu.Unlock()
	return slices.Clone(p.log)
}

// settle waits until the UDP proxy has read its mark (Recorded). Each
// mark carries its number, so one left over from a settle that gave up
// is not taken for this one's.
func (p *Proxy) settle() {
	if p.mark == nil {
		return
	}
	p.settlem.Lock()
	defer p.settlem.Unlock()
	p.marks++
	if _, err := p.mark.Write(binary.BigEndian.AppendUint64(nil, p.marks)); err != nil {
		return
	}
	guard := time.After(5 * time.Second)
	for {
		select {
		case n := <-p.marked:
			if n == p.marks {
				return
			}
		case <-guard:
			return
		}
	}
}

// Sent is what the clients sent, as Recorded.
func (p *Proxy) Sent() [][]byte {
	var out [][]byte
	for _, pk := range p.Recorded() {
		if pk.FromClient {
			out = append(out, pk.B)
		}
	}
	return out
}

// listen binds with bind at opt.Listen, or at a quiet port of 127.0.0.1.
func (o Options) listen(bind func(ip net.IP, port int) error) error {
	if o.Listen.IsValid() {
		return bind(o.Listen.Addr().AsSlice(), int(o.Listen.Port()))
	}
	return quietport.Bind(func(port int) error { return bind(net.IPv4(127, 0, 0, 1), port) })
}

// TCP proxies to the TCP server at to.
func TCP(to netip.AddrPort, mode Mode, after int) (*Proxy, error) {
	return TCPWith(to, mode, after, Options{})
}

// TCPWith is TCP with options.
func TCPWith(to netip.AddrPort, mode Mode, after int, opt Options) (*Proxy, error) {
	var ln *net.TCPListener
	err := opt.listen(func(ip net.IP, port int) (err error) {
		ln, err = net.ListenTCP("tcp4", &net.TCPAddr{IP: ip, Port: port})
		return err
	})
	if err != nil {
		return nil, err
	}
	p := newProxy(mode, after, opt)
	p.addr = ln.Addr().(*net.TCPAddr).AddrPort()
	p.track(ln)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for conn := 0; ; conn++ {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			if !p.track(c) {
				return
			}
			p.mu.Lock()
			p.clients = append(p.clients, c)
			p.mu.Unlock()
			if p.Faulted() {
				if p.mode == Close || p.mode == Reset {
					p.end(c)
				}
				continue // hung: accepted by the kernel, never answered
			}
			up, err := net.Dial("tcp", to.String())
			if err != nil || !p.track(up) {
				c.Close()
				continue
			}
			p.wg.Add(2)
			p.pipes.Add(1)
			go func() {
				defer p.wg.Done()
				defer p.pipes.Done()
				if p.pipe(c, up, conn, true) == 0 {
					p.empty.Add(1)
				}
			}()
			go func() { defer p.wg.Done(); p.pipe(up, c, conn, false) }()
		}
	}()
	return p, nil
}

// pipe copies from src to dst; client-side reads count against the
// budget. It returns how many bytes it read.
func (p *Proxy) pipe(src, dst net.Conn, conn int, fromClient bool) (read int64) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		read += int64(n)
		if n > 0 && (fromClient || !p.Faulted()) {
			p.record(fromClient, conn, buf[:n])
		}
		if n > 0 && p.mode == Trickle {
			if fromClient {
				p.count() // spends the budget; the client's bytes still go
			} else if p.Faulted() {
				if !trickle(dst, buf[:n]) {
					return read
				}
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return read
			}
		} else if n > 0 {
			if fromClient && !p.count() || !fromClient && p.Faulted() {
				if p.mode == Hang {
					continue // swallow: keep reading so nothing backs up
				}
				return read // dead, or the connection ended (Close, Reset)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return read
			}
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				dst.Close()
			}
			return read
		}
	}
}

// trickle writes b to dst a byte at a time, TrickleEvery apart (a slow
// link, or a server that dribbles); false when dst is gone.
func trickle(dst net.Conn, b []byte) bool {
	for i := range b {
		time.Sleep(TrickleEvery)
		if _, err := dst.Write(b[i : i+1]); err != nil {
			return false
		}
	}
	return true
}

// UDP proxies to the UDP server at to: one upstream socket per client
// address.
func UDP(to netip.AddrPort, mode Mode, after int) (*Proxy, error) {
	return UDPWith(to, mode, after, Options{})
}

// UDPWith is UDP with options.
func UDPWith(to netip.AddrPort, mode Mode, after int, opt Options) (*Proxy, error) {
	var ln *net.UDPConn
	err := opt.listen(func(ip net.IP, port int) (err error) {
		ln, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ip, Port: port})
		return err
	})
	if err != nil {
		return nil, err
	}
	p := newProxy(mode, after, opt)
	copies := max(opt.Copies, 1)
	p.addr = ln.LocalAddr().(*net.UDPAddr).AddrPort()
	p.track(ln)
	if opt.Record {
		// A recorder must not lose what it records: the default buffer
		// (about 250 small datagrams) overflowed under a rate probe's
		// 2,000 a second on a CPU-starved machine (906 of 1,005 kept).
		_ = sockbuf.SetRead(ln, 8<<20)
		if p.mark, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(p.addr)); err != nil {
			ln.Close()
			return nil, err
		}
		p.track(p.mark)
		p.markAt, p.marked = p.mark.LocalAddr().(*net.UDPAddr).AddrPort(), make(chan uint64, 4)
	}
	ups := map[netip.AddrPort]*net.UDPConn{}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, from, err := ln.ReadFromUDPAddrPort(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			if p.mark != nil && from == p.markAt {
				if n == 8 {
					select {
					case p.marked <- binary.BigEndian.Uint64(buf[:8]):
					default: // nobody waits for it any more
					}
				}
				continue
			}
			if !p.count() {
				if p.mode == Garble {
					ln.WriteToUDPAddrPort(Junk, from)
				}
				continue
			}
			up := ups[from]
			if up == nil {
				up, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(to))
				if err != nil || !p.track(up) {
					continue
				}
				ups[from] = up
				p.wg.Add(1)
				go func() {
					defer p.wg.Done()
					b := make([]byte, 64<<10)
					for {
						n, err := up.Read(b)
						if err != nil {
							if errors.Is(err, net.ErrClosed) {
								return
							}
							continue
						}
						if p.Faulted() {
							continue
						}
						p.record(false, 0, b[:n])
						for range copies {
							ln.WriteToUDPAddrPort(b[:n], from)
						}
					}
				}()
			}
			p.record(true, 0, buf[:n])
			up.Write(buf[:n])
		}
	}()
	return p, nil
}

// Relay is a Healthy proxy of network ("udp" or "tcp") to the server at
// to, for test t: t fails if it cannot listen, and it closes when t ends.
func Relay(t testing.TB, network string, to netip.AddrPort, opt Options) *Proxy {
	t.Helper()
	start := UDPWith
	if network == "tcp" {
		start = TCPWith
	}
	p, err := start(to, Healthy, 0, opt)
	if err != nil {
		t.Fatalf("%s relay to %v: %v", network, to, err)
	}
	t.Cleanup(p.Close)
	return p
}
