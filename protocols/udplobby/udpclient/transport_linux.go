package udpclient

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxPolls bounds one polling window in reads, whatever the clock says (a
// non-blocking recvfrom takes ~0.3-1 µs, so a 50 µs window takes fewer).
const maxPolls = 4096

// pollEvent is what a test's pollHook is told.
type pollEvent uint8

const (
	pollEmpty  pollEvent = iota // a non-blocking read in the window found nothing
	pollGaveUp                  // the window ended with nothing read
	pollGot                     // a read in the window returned a datagram or an error
)

// sockio reads and writes the socket through its syscall.RawConn:
// recvfrom(2) and sendto(2) on the descriptor, parking on the netpoller
// (with the socket's deadlines) only when the socket has nothing to read
// or no room to write. Against ReadMsgUDPAddrPort and WriteToUDPAddrPort
// this is fewer calls between the session and the system call (a shallower
// goroutine stack, less CPU per request), and a read takes its receive
// buffer from rxPool only once a datagram is there: a client waiting for
// a reply holds no buffer. It also reads without parking for a window
// after a send (run --precise). Nothing here allocates.
type sockio struct {
	raw     syscall.RawConn
	readFn  func(fd uintptr) bool // rawRead, bound once
	writeFn func(fd uintptr) bool // rawWrite, bound once
	family  int                   // the socket's: AF_INET or AF_INET6

	fd int // the socket's descriptor (waitFD)

	// read state, for rawRead
	until  time.Time // spin (no parking) until then; zero: no spin
	rsa    unix.RawSockaddrAny
	rsaLen uint32
	n      int
	from   netip.AddrPort
	err    error
	got    bool

	// write state, for rawWrite
	wsa    unix.RawSockaddrInet6 // large enough for either family
	wsaLen uintptr
	wbuf   []byte
	werr   error

	// pollHook, when set (tests only), is told of each read in a window
	// and of a window that ends empty.
	pollHook func(pollEvent)
}

// initIO binds the raw reads and writes to t's socket; false (no raw
// access) leaves t on the net package's calls.
func (t *transport) initIO() bool {
	raw, err := t.c.SyscallConn()
	if err != nil {
		return false
	}
	fam := -1
	sfd := -1
	if raw.Control(func(fd uintptr) {
		sfd = int(fd)
		fam, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
	}) != nil || err != nil {
		return false
	}
	t.raw, t.family, t.fd = raw, fam, sfd
	t.readFn, t.writeFn = t.rawRead, t.rawWrite
	return true
}

// waitFD is the descriptor a session that recv left with errWouldBlock
// waits on (readable: its datagram is there), or -1 when recv never does
// (no raw reads): the socket's, valid while it is open.
func (t *transport) waitFD() int {
	if t.raw == nil {
		return -1
	}
	return t.fd
}

// preciseOK reports whether t can poll without parking (run --precise).
func (t *transport) preciseOK() bool { return t.raw != nil }

// read reads one datagram into t.buf (taken from rxPool when t has none),
// spinning without parking until spin (zero: not at all, and the window
// of a precise client ends there). It returns the datagram's full length
// n (trunc: it did not fit), its source, or the read's error.
func (t *transport) read(spin time.Time) (n int, trunc bool, from netip.AddrPort, err error) {
	if t.raw == nil {
		return t.readNet()
	}
	t.until, t.got, t.err = spin, false, nil
	if err := t.raw.Read(t.readFn); err != nil {
		return 0, false, netip.AddrPort{}, err
	}
	return t.n, t.n > len(t.buf), t.from, t.err
}

// rawRead is read's body, run by RawConn.Read on the descriptor: true
// once a datagram (or an error) is read, false to park until the socket
// is readable (or its read deadline passes).
func (t *transport) rawRead(fd uintptr) bool {
	spin := !t.until.IsZero()
	for range maxPolls {
		if t.cancelled.Load() {
			t.err, t.got = errCancelled, true
			return true
		}
		if t.buf == nil {
			t.buf = rxPool.Get().(*[initialBuf]byte)[:]
		}
		t.rsaLen = unix.SizeofSockaddrAny
		r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)),
			unix.MSG_DONTWAIT|unix.MSG_TRUNC, uintptr(unsafe.Pointer(&t.rsa)), uintptr(unsafe.Pointer(&t.rsaLen)))
		switch e {
		case 0:
			t.n, t.from, t.got = int(r), t.source(), true
		case unix.EAGAIN, unix.EINTR:
		default:
			t.err, t.got = &net.OpError{Op: "read", Net: "udp", Source: t.c.LocalAddr(), Err: os.NewSyscallError("recvfrom", e)}, true
		}
		if t.got {
			if spin && t.pollHook != nil {
				t.pollHook(pollGot)
			}
			return true
		}
		if e == unix.EINTR {
			continue
		}
		if !spin {
			break
		}
		if t.pollHook != nil {
			t.pollHook(pollEmpty)
		}
		if !time.Now().Before(t.until) {
			break
		}
	}
	if spin {
		// The window is over: park from now on, for this request.
		if t.pollHook != nil {
			t.pollHook(pollGaveUp)
		}
		t.until, t.pollUntil = time.Time{}, time.Time{}
	}
	t.idle() // nothing to read: wait without a buffer
	if t.nowait && !spin {
		t.err, t.got = errWouldBlock, true
		return true
	}
	return false
}

// write sends b to to.
func (t *transport) write(b []byte, to netip.AddrPort) error {
	if t.raw == nil || len(b) == 0 || !t.sockaddr(to) {
		_, err := t.c.WriteToUDPAddrPort(b, to)
		return err
	}
	t.wbuf, t.werr = b, nil
	err := t.raw.Write(t.writeFn)
	t.wbuf = nil
	if err == nil {
		err = t.werr
	}
	return err
}

// rawWrite is write's body, run by RawConn.Write: false to park until the
// socket is writable.
func (t *transport) rawWrite(fd uintptr) bool {
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&t.wbuf[0])), uintptr(len(t.wbuf)),
			unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&t.wsa)), t.wsaLen)
		switch e {
		case 0:
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		t.werr = &net.OpError{Op: "write", Net: "udp", Source: t.c.LocalAddr(), Err: os.NewSyscallError("sendto", e)}
		return true
	}
}

// sockaddr writes to into t.wsa for the socket's family; false when the
// raw path does not take it (a zoned IPv6 address, an IPv6 address on an
// IPv4 socket): write then leaves it to the net package, which says why.
func (t *transport) sockaddr(to netip.AddrPort) bool {
	a := to.Addr()
	switch {
	case t.family == unix.AF_INET && a.Unmap().Is4():
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&t.wsa))
		*sa = unix.RawSockaddrInet4{Family: unix.AF_INET, Port: port(to.Port()), Addr: a.Unmap().As4()}
		t.wsaLen = unix.SizeofSockaddrInet4
	case t.family == unix.AF_INET6 && a.Zone() == "" && a.IsValid():
		t.wsa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Port: port(to.Port()), Addr: a.As16()}
		t.wsaLen = unix.SizeofSockaddrInet6
	default:
		return false
	}
	return true
}

// source decodes the sender's address recvfrom left in t.rsa.
func (t *transport) source() netip.AddrPort {
	switch t.rsa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&t.rsa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), port(sa.Port))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&t.rsa))
		a := netip.AddrFrom16(sa.Addr)
		if sa.Scope_id != 0 {
			// As the net package names it: the interface's name, or its index.
			if ifi, err := net.InterfaceByIndex(int(sa.Scope_id)); err == nil {
				a = a.WithZone(ifi.Name)
			} else {
				a = a.WithZone(strconv.Itoa(int(sa.Scope_id)))
			}
		}
		return netip.AddrPortFrom(a, port(sa.Port))
	}
	return netip.AddrPort{}
}

// port converts a port between host and network byte order (the same swap
// both ways).
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}
