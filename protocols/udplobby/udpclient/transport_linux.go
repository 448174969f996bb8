package udpclient

import (
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/rxbuf"
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
	pollNoSlot                  // every polling slot was taken (polls): the read parks at once
)

// sockio reads and writes the socket through its syscall.RawConn:
// recvfrom(2) and sendto(2) on the descriptor, parking on the netpoller
// (with the socket's deadlines) only when the socket has nothing to read
// or no room to write. Against ReadMsgUDPAddrPort and WriteToUDPAddrPort
// this is fewer calls between the session and the system call (a shallower
// goroutine stack, less CPU per request), and a read takes a buffer
// (rxbuf) only while it reads: a client waiting for a reply holds none. It also reads without parking for a window
// after a send (run --precise). Nothing here allocates.
type sockio struct {
	raw     syscall.RawConn
	readFn  func(fd uintptr) bool // rawRead, bound once
	writeFn func(fd uintptr) bool // rawWrite, bound once
	family  int                   // the socket's: AF_INET or AF_INET6

	fd int // the socket's descriptor (waitFD)

	// read state, for rawRead
	until time.Time // spin (no parking) until then; zero: no spin
	slot  bool      // holds one of the polls' slots while it spins
	data  []byte
	from  netip.AddrPort
	err   error
	got   bool

	// write state, for rawWrite
	wsa    unix.RawSockaddrInet6 // large enough for either family
	wsaLen uintptr
	wbuf   []byte
	werr   error

	// pollHook, when set (tests only), is told of each read in a window
	// and of a window that ends empty. writeHook (tests only) runs in
	// rawWrite before the send stamp.
	pollHook  func(pollEvent)
	writeHook func()
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
	t.sockio = &sockio{raw: raw, family: fam, fd: sfd}
	t.readFn, t.writeFn = t.rawRead, t.rawWrite
	t.stamps = enableStamps(raw) == nil
	return true
}

// enableStamps turns the kernel's receive stamps on (a variable: tests
// make it refuse).
var enableStamps = rxbuf.EnableStamps

// waitFD is the descriptor a session that recv left with errWouldBlock
// waits on (readable: its datagram is there), or -1 when recv never does
// (no raw reads): the socket's, valid while it is open.
func (t *transport) waitFD() int {
	if !t.rawOK() {
		return -1
	}
	return t.fd
}

// preciseOK reports whether t can poll without parking (run --precise).
func (t *transport) preciseOK() bool { return t.rawOK() }

// rawOK reports whether t reads and writes raw (initIO).
func (t *transport) rawOK() bool { return t.sockio != nil && t.raw != nil }

// read reads one datagram, whole, into t.rx, spinning without parking
// until spin (zero: not at all, and the window of a precise client ends
// there). It returns the datagram and its source, or the read's error.
func (t *transport) read(spin time.Time) ([]byte, netip.AddrPort, error) {
	if !t.rawOK() {
		return t.readNet()
	}
	if !spin.IsZero() && !polls.take() {
		// Every slot is taken: park at once, for this request.
		spin, t.pollUntil = time.Time{}, 0
		if t.pollHook != nil {
			t.pollHook(pollNoSlot)
		}
	}
	t.until, t.got, t.data, t.err, t.slot = spin, false, nil, nil, !spin.IsZero()
	err := t.raw.Read(t.readFn)
	t.endSpin()
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	data := t.data
	t.data = nil
	return data, t.from, t.err
}

// rawRead is read's body, run by RawConn.Read on the descriptor: true
// once a datagram (or an error) is read, false to park until the socket
// is readable (or its read deadline passes).
func (t *transport) rawRead(fd uintptr) bool {
	spin := !t.until.IsZero()
	s := rxbuf.Get()
	for range maxPolls {
		if t.cancelled.Load() {
			s.Put()
			t.err, t.got = errCancelled, true
			return true
		}
		n, e := s.Recv(fd)
		switch e {
		case 0:
			t.from, t.kns, t.got = s.Source(), s.Stamp(), true
			t.data = t.rx.Keep(s, n)
		case unix.EAGAIN, unix.EINTR:
		default:
			s.Put()
			t.err, t.got = &net.OpError{Op: "read", Net: "udp", Source: t.c.LocalAddr(), Err: os.NewSyscallError("recvmsg", e)}, true
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
	s.Put()
	if spin {
		// The window is over: park from now on, for this request.
		if t.pollHook != nil {
			t.pollHook(pollGaveUp)
		}
		t.until, t.pollUntil = time.Time{}, 0
		t.endSpin() // before parking: a parked client holds no slot
	}
	t.idle() // nothing to read: wait without a buffer
	if t.nowait && !spin {
		t.err, t.got = errWouldBlock, true
		return true
	}
	t.readAt = 0 // parks: recv's clock reading is old by the time a datagram comes
	return false
}

// endSpin gives back the polling slot read took, if it holds it.
func (t *transport) endSpin() {
	if t.slot {
		t.slot = false
		polls.give()
	}
}

// write sends b to to. Unimpaired (t.out nil), it stamps t.sent just
// before the system call.
func (t *transport) write(b []byte, to netip.AddrPort) error {
	if !t.rawOK() || len(b) == 0 || !t.sockaddr(to) {
		t.stampSend()
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
	if t.writeHook != nil {
		t.writeHook()
	}
	for {
		t.stampSend()
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
		*sa = unix.RawSockaddrInet4{Family: unix.AF_INET, Port: rxbuf.Port(to.Port()), Addr: a.Unmap().As4()}
		t.wsaLen = unix.SizeofSockaddrInet4
	case t.family == unix.AF_INET6 && a.Zone() == "" && a.IsValid():
		t.wsa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Port: rxbuf.Port(to.Port()), Addr: a.As16()}
		t.wsaLen = unix.SizeofSockaddrInet6
	default:
		return false
	}
	return true
}
