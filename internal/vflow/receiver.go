//go:build linux

package vflow

import (
	"errors"
	"fmt"
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
}

// oobSize holds IP_ORIGDSTADDR (16+16) and SO_TIMESTAMPNS (16+16) with room.
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
	errno syscall.Errno
	read  func(fd uintptr) bool
}

// Receiver returns a reader of the steered socket taking up to batch
// datagrams per call.
func (f *Flows) Receiver(batch int) (*Receiver, error) {
	if batch < 1 {
		return nil, fmt.Errorf("vflow: receiver batch %d, want at least 1", batch)
	}
	rc, err := f.conn.SyscallConn()
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

// SetDeadline bounds the wait of Receive (the socket's read deadline).
func (f *Flows) SetDeadline(t time.Time) error { return f.conn.SetReadDeadline(t) }

// Receive waits for at least one datagram and fills up to len(ms) (at most
// the batch) of ms, each into its Buf; it returns how many. It returns an
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
	r.want, r.got, r.errno = n, 0, 0
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

func (r *Receiver) recvmmsg(fd uintptr) bool {
	got, e := mmsg(unix.SYS_RECVMMSG, fd, r.msgs[:r.want], unix.MSG_DONTWAIT)
	if e == unix.EAGAIN {
		return false // the poller waits for the socket and calls again
	}
	r.got, r.errno = got, e
	return true
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
	m.Flow, m.Time, m.Err = a.origDst, a.time, err
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
