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
	pollEmpty  pollEvent = iota // a non-blocking read found nothing
	pollGaveUp                  // the window ended with nothing read
	pollGot                     // a read returned a datagram or an error
)

// poller reads the socket without parking (run --precise): recvfrom(2)
// with MSG_DONTWAIT through the socket's syscall.RawConn, into the
// transport's receive buffer, with no allocation.
type poller struct {
	raw    syscall.RawConn
	loop   func(fd uintptr) bool // pollLoop, bound once
	until  time.Time
	rsa    unix.RawSockaddrAny
	rsaLen uint32
	n      int
	from   netip.AddrPort
	err    error
	got    bool
	// pollHook, when set (tests only), is told of each read's outcome and
	// of a window that ends empty.
	pollHook func(pollEvent)
}

// initPoll prepares the non-blocking reads (allocated only in precise
// mode: a default client does not carry them); false leaves precise mode
// off.
func (t *transport) initPoll() bool {
	raw, err := t.c.SyscallConn()
	if err != nil {
		return false
	}
	t.poller = &poller{raw: raw}
	t.loop = t.pollLoop
	return true
}

// poll reads one datagram into t.buf without parking, trying until until.
// got is false when nothing came (or the socket's read deadline has
// passed, or it is closed): the caller then reads as without precise mode,
// which reports those. Otherwise it returns what ReadMsgUDPAddrPort would
// have: the datagram's full length n (above len(t.buf) when truncated),
// its source, or the read's error (errCancelled after cancel).
func (t *transport) poll(until time.Time) (n int, from netip.AddrPort, err error, got bool) {
	t.until, t.got, t.err = until, false, nil
	if t.raw.Read(t.loop) != nil || !t.got {
		return 0, netip.AddrPort{}, nil, false
	}
	return t.n, t.from, t.err, true
}

// pollLoop is the body of poll, run by RawConn.Read on the socket's
// descriptor. It always returns true: RawConn.Read never parks.
func (t *transport) pollLoop(fd uintptr) bool {
	for range maxPolls {
		if t.cancelled.Load() {
			t.err, t.got = errCancelled, true
			return true
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
			if t.pollHook != nil {
				t.pollHook(pollGot)
			}
			return true
		}
		if t.pollHook != nil {
			t.pollHook(pollEmpty)
		}
		if !time.Now().Before(t.until) {
			break
		}
	}
	if t.pollHook != nil {
		t.pollHook(pollGaveUp)
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

// port converts a sockaddr's port, stored in network byte order.
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}
