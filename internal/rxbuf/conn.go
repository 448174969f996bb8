package rxbuf

import (
	"net"
	"net/netip"
	"os"
	"syscall"
)

// Socket is what Conn reads from: a *net.UDPConn, or a socket without a
// descriptor (a virtual flow, whose SyscallConn fails), read with
// ReadMsgUDPAddrPort. One that can wait for a datagram without a buffer
// (ReadableWaiter) is waited on before a Scratch is taken.
type Socket interface {
	ReadMsgUDPAddrPort(b, oob []byte) (n, oobn, flags int, addr netip.AddrPort, err error)
	SyscallConn() (syscall.RawConn, error)
	LocalAddr() net.Addr
}

// ReadableWaiter is a socket that can wait for a datagram holding no
// buffer (a virtual flow, vflow.Conn): a reader takes its Scratch only
// once the datagram is there, as the raw reads of a socket do.
type ReadableWaiter interface{ WaitReadable() error }

// Conn reads whole datagrams from a UDP socket for one goroutine. On
// Linux it reads through the socket's syscall.RawConn, taking a Scratch
// only once a datagram is there: parked on the netpoller, it holds no
// buffer, not even the small one of its last datagram. Elsewhere it reads with the net package, holding a Scratch
// while parked.
type Conn struct {
	c   Socket
	raw syscall.RawConn    // nil: the net package's reads
	fn  func(uintptr) bool // rawRead, bound once

	data  []byte // rawRead's datagram
	from  netip.AddrPort
	errno syscall.Errno

	buf Buf

	// Stamp is the kernel's receive stamp of the datagram Read last
	// returned (Scratch.Stamp: ns on CLOCK_REALTIME), 0 when none came
	// with it (stamps not enabled, or not read here).
	Stamp int64
}

// NewConn returns a Conn reading from c.
func NewConn(c Socket) *Conn {
	r := &Conn{c: c}
	if Supported {
		if raw, err := c.SyscallConn(); err == nil {
			r.raw = raw
			r.fn = r.rawRead
		}
	}
	return r
}

// EnableStamps turns the kernel's receive stamps on (EnableStamps), for
// Stamp; false where they are not had.
func (r *Conn) EnableStamps() bool { return r.raw != nil && EnableStamps(r.raw) == nil }

// Read waits for the next datagram (within c's read deadline) and returns
// it, whole, and its source. The datagram is valid until the next Read or
// Release. Errors are the net package's (a deadline's is a timeout).
func (r *Conn) Read() ([]byte, netip.AddrPort, error) {
	if r.raw == nil {
		r.Stamp = 0
		if w, ok := r.c.(ReadableWaiter); ok {
			if err := w.WaitReadable(); err != nil {
				return nil, netip.AddrPort{}, err
			}
		}
		s := Get()
		n, _, _, from, err := r.c.ReadMsgUDPAddrPort(s.Bytes(), nil)
		if err != nil {
			s.Put()
			return nil, from, err
		}
		return r.buf.Keep(s, n), from, nil
	}
	r.data, r.errno, r.Stamp = nil, 0, 0
	if err := r.raw.Read(r.fn); err != nil {
		return nil, netip.AddrPort{}, err
	}
	if r.errno != 0 {
		return nil, netip.AddrPort{}, &net.OpError{Op: "read", Net: "udp", Source: r.c.LocalAddr(), Err: os.NewSyscallError("recvmsg", r.errno)}
	}
	data := r.data
	r.data = nil
	return data, r.from, nil
}

// rawRead is Read's body, run by RawConn.Read: false to park until the
// socket is readable.
func (r *Conn) rawRead(fd uintptr) bool {
	s := Get()
	for {
		n, e := s.Recv(fd)
		switch e {
		case 0:
			r.from, r.Stamp = s.Source(), s.Stamp()
			r.data = r.buf.Keep(s, n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			// Nothing yet: wait holding no buffer (the last datagram
			// is no longer valid: this is the next Read).
			s.Put()
			r.buf.Release()
			return false
		}
		s.Put()
		r.errno = e
		return true
	}
}

// Release gives back the buffers r holds: the last datagram Read returned
// is no longer valid.
func (r *Conn) Release() { r.buf.Release() }
