//go:build linux

package vflow

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Message is one received datagram, read into Buf.
type Message struct {
	Buf []byte // the caller's buffer; the payload is Buf[:N]
	N   int
	// Flow is the address:port the datagram was sent to (IP_ORIGDSTADDR):
	// the flow it is for. Zero when the kernel did not say (Err tells why).
	Flow netip.AddrPort
	// From is the sender, the server: a reply from another port of the
	// target shows here, for the flow to judge.
	From netip.AddrPort
	// Time is when the kernel received the datagram; zero when not told.
	Time time.Time
	// Truncated: the datagram was longer than Buf, and cut.
	Truncated bool
	// Err: the control messages could not be read whole (Flow or Time may
	// be missing).
	Err error
	// Errno, when not 0, says this is no datagram but the kernel's report
	// of an error for one a flow sent (IP_RECVERR): ECONNREFUSED for an
	// ICMP port unreachable. Buf[:N] is what was sent (as far as the ICMP
	// message quoted it), From where it was sent, and Flow holds only the
	// flow's address: the kernel does not say its port.
	Errno syscall.Errno
}

// oobSize holds IP_ORIGDSTADDR (16+16) and SO_TIMESTAMPNS (16+16), or
// those and IP_RECVERR (16+32) on an error queue's message, with room.
const oobSize = 128

// Receiver reads the steered socket in batches with recvmmsg. Its buffers
// are allocated once; a Receive allocates nothing. One goroutine at a time.
type Receiver struct {
	rc    syscall.RawConn
	msgs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names [][unix.SizeofSockaddrInet4]byte
	oobs  [][oobSize]byte
	// the recvmmsg call in flight, as fields so that read, a method value
	// made once, closes over nothing new
	want  int
	got   int
	errq  bool // what was read is the error queue's
	errno syscall.Errno
	read  func(fd uintptr) bool
}

// Receivers returns a reader of each steered socket, taking up to batch
// datagrams per call: together they receive every flow's datagrams, each
// flow's always through the same one.
func (f *Flows) Receivers(batch int) ([]*Receiver, error) {
	rs := make([]*Receiver, len(f.conns))
	for k, c := range f.conns {
		var err error
		if rs[k], err = newReceiver(c, batch); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// newReceiver returns a reader of c taking up to batch datagrams per call.
func newReceiver(c *net.UDPConn, batch int) (*Receiver, error) {
	if batch < 1 {
		return nil, fmt.Errorf("vflow: receiver batch %d, want at least 1", batch)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &Receiver{
		rc:    rc,
		msgs:  make([]unix.Mmsghdr, batch),
		iovs:  make([]unix.Iovec, batch),
		names: make([][unix.SizeofSockaddrInet4]byte, batch),
		oobs:  make([][oobSize]byte, batch),
	}
	for i := range r.msgs {
		h := &r.msgs[i].Hdr
		h.Iov = &r.iovs[i]
		h.Iovlen = 1
	}
	r.read = r.recvmmsg
	return r, nil
}

// SetDeadline bounds the wait of every Receiver's Receive (the sockets'
// read deadline).
func (f *Flows) SetDeadline(t time.Time) error {
	var errs []error
	for _, c := range f.conns {
		errs = append(errs, c.SetReadDeadline(t))
	}
	return errors.Join(errs...)
}

// Receive waits for at least one datagram, or one report of an error for a
// datagram sent (Message.Errno), and fills up to len(ms) (at most the
// batch) of ms, each into its Buf; it returns how many. It returns an
// error when the deadline passes or the Flows are closed.
func (r *Receiver) Receive(ms []Message) (int, error) {
	n := min(len(ms), len(r.msgs))
	for i := range n {
		if len(ms[i].Buf) == 0 {
			return 0, fmt.Errorf("vflow: message %d has no buffer", i)
		}
		h := &r.msgs[i].Hdr
		r.iovs[i].Base = &ms[i].Buf[0]
		r.iovs[i].SetLen(len(ms[i].Buf))
		h.Name = &r.names[i][0]
		h.Namelen = unix.SizeofSockaddrInet4
		h.Control = &r.oobs[i][0]
		h.SetControllen(oobSize)
		h.Flags = 0
	}
	r.want, r.got, r.errq, r.errno = n, 0, false, 0
	if err := r.rc.Read(r.read); err != nil {
		return 0, err
	}
	if r.errno != 0 {
		return 0, fmt.Errorf("vflow: recvmmsg: %w", r.errno)
	}
	for i := range r.got {
		r.fill(i, &ms[i])
	}
	for i := range n {
		r.iovs[i].Base = nil // keep no hold on the caller's buffers
	}
	return r.got, nil
}

// recvmmsg reads a batch of datagrams, or of error reports: the kernel
// reports an ICMP error for a flow's datagram (the steered socket has
// IP_RECVERR) by queueing it on the socket's error queue and failing the
// next read once with its errno (sk_err), however many datagrams wait.
// That read is followed by one of the error queue and, when it is empty,
// by another of the datagrams.
func (r *Receiver) recvmmsg(fd uintptr) bool {
	for range 100 {
		got, e := mmsg(unix.SYS_RECVMMSG, fd, r.msgs[:r.want], unix.MSG_DONTWAIT)
		if e == unix.EAGAIN {
			return false // the poller waits for the socket and calls again
		}
		if !reported(e) {
			r.got, r.errno = got, e
			return true
		}
		got, e = mmsg(unix.SYS_RECVMMSG, fd, r.msgs[:r.want], unix.MSG_DONTWAIT|unix.MSG_ERRQUEUE)
		if e == 0 && got > 0 {
			r.got, r.errq = got, true
			return true
		}
	}
	r.errno = unix.EIO // errors reported without end: stop rather than spin
	return true
}

// reported reports whether e is an error the kernel reports on a socket
// for a datagram it sent (an ICMP error: net/ipv4/icmp.c's
// icmp_err_convert), not one of the read itself.
func reported(e syscall.Errno) bool {
	switch e {
	case unix.ECONNREFUSED, unix.EHOSTUNREACH, unix.ENETUNREACH, unix.EHOSTDOWN, unix.ENONET,
		unix.ENOPROTOOPT, unix.EMSGSIZE, unix.EOPNOTSUPP, unix.EACCES, unix.EPROTO:
		return true
	}
	return false
}

func (r *Receiver) fill(i int, m *Message) {
	mm := &r.msgs[i]
	m.N = int(mm.Len)
	m.Truncated = mm.Hdr.Flags&unix.MSG_TRUNC != 0
	m.From, _ = sockaddr4(r.names[i][:mm.Hdr.Namelen])
	a, err := parseCmsgs(r.oobs[i][:mm.Hdr.Controllen])
	if err == nil && mm.Hdr.Flags&unix.MSG_CTRUNC != 0 {
		err = errCtrunc
	}
	m.Flow, m.Time, m.Err, m.Errno = a.origDst, a.time, err, 0
	if r.errq {
		// The error queue's IP_ORIGDSTADDR is the flow's address with two
		// bytes of the payload as its port; no errno read is an error.
		m.Flow, m.Errno = netip.AddrPortFrom(m.Flow.Addr(), 0), a.errno
		if m.Errno == 0 {
			m.Errno = unix.EIO
		}
	}
}

var errCtrunc = errors.New("control messages truncated (MSG_CTRUNC)")

// mmsg makes a recvmmsg or sendmmsg call, retrying a bounded number of
// times when a signal interrupts it.
func mmsg(trap, fd uintptr, msgs []unix.Mmsghdr, flags int) (int, syscall.Errno) {
	var e syscall.Errno
	for range 100 {
		var n uintptr
		n, _, e = unix.Syscall6(trap, fd, uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), uintptr(flags), 0, 0)
		if e != unix.EINTR {
			return int(n), e
		}
	}
	return 0, e
}
