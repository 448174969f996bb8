//go:build linux

package vflow

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Datagram is one UDP datagram to send from a flow.
type Datagram struct {
	Src     netip.AddrPort // the flow: any IPv4 address:port, normally of the range
	Dst     netip.AddrPort // the server
	Payload []byte
}

const (
	ipv4HeaderLen = 20
	udpHeaderLen  = 8
	headersLen    = ipv4HeaderLen + udpHeaderLen
	// MaxPayload is the largest payload of one datagram.
	MaxPayload = 65535 - headersLen
)

// Sender sends UDP datagrams from any source address:port through a raw
// IPv4 socket (IPPROTO_RAW: the IPv4 and UDP headers are written here), in
// batches with sendmmsg. Its headers, iovecs and addresses are allocated
// once; a Send allocates nothing. One goroutine at a time.
type Sender struct {
	f     *os.File
	rc    syscall.RawConn
	msgs  []unix.Mmsghdr
	iovs  [][2]unix.Iovec // header, payload
	hdrs  [][headersLen]byte
	dsts  []unix.RawSockaddrInet4
	from  int // the sendmmsg call in flight
	to    int
	errno syscall.Errno
	write func(fd uintptr) bool
}

// NewSender opens the raw socket; batch is the most datagrams one sendmmsg
// call carries. It needs CAP_NET_RAW.
func NewSender(batch int) (*Sender, error) {
	if batch < 1 {
		return nil, fmt.Errorf("vflow: sender batch %d, want at least 1", batch)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return nil, refused("opening the raw socket", err, needNetRaw)
	}
	s := &Sender{
		f:    os.NewFile(uintptr(fd), "vflow-raw"),
		msgs: make([]unix.Mmsghdr, batch),
		iovs: make([][2]unix.Iovec, batch),
		hdrs: make([][headersLen]byte, batch),
		dsts: make([]unix.RawSockaddrInet4, batch),
	}
	if s.rc, err = s.f.SyscallConn(); err != nil {
		s.f.Close()
		return nil, err
	}
	for i := range s.msgs {
		h := &s.msgs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&s.dsts[i]))
		h.Namelen = unix.SizeofSockaddrInet4
		h.Iov = &s.iovs[i][0]
		h.Iovlen = 2
		s.iovs[i][0].Base = &s.hdrs[i][0]
		s.iovs[i][0].SetLen(headersLen)
		s.dsts[i].Family = unix.AF_INET
	}
	s.write = s.sendmmsg
	return s, nil
}

// Send sends ds, batch by batch, and returns how many were sent: all of
// them, or those before the error.
func (s *Sender) Send(ds []Datagram) (int, error) {
	sent := 0
	for len(ds) > 0 {
		n := min(len(ds), len(s.msgs))
		for i := range n {
			if err := s.fill(i, &ds[i]); err != nil {
				return sent, err
			}
		}
		s.from, s.to, s.errno = 0, n, 0
		err := s.rc.Write(s.write)
		for i := range n {
			s.iovs[i][1].Base = nil // keep no hold on the caller's payloads
		}
		sent += s.from
		if err != nil {
			return sent, err
		}
		if s.errno != 0 {
			return sent, fmt.Errorf("vflow: sendmmsg from %s to %s: %w", ds[s.from].Src, ds[s.from].Dst, s.errno)
		}
		ds = ds[n:]
	}
	return sent, nil
}

// sendmmsg sends msgs[from:to], partly sent batches continuing; it is done
// when all went or the kernel refused one.
func (s *Sender) sendmmsg(fd uintptr) bool {
	for s.from < s.to {
		n, e := mmsg(unix.SYS_SENDMMSG, fd, s.msgs[s.from:s.to], 0)
		switch {
		case e == unix.EAGAIN:
			return false
		case e != 0:
			s.errno = e
			return true
		case n == 0: // sent none and no error: stop rather than spin
			s.errno = unix.EIO
			return true
		}
		s.from += n
	}
	return true
}

// fill writes datagram d's headers into slot i. The kernel fills the IPv4
// total length, identification and checksum; the UDP checksum is 0, which
// IPv4 allows (no checksum).
func (s *Sender) fill(i int, d *Datagram) error {
	if !d.Src.Addr().Is4() || !d.Dst.Addr().Is4() {
		return fmt.Errorf("vflow: datagram from %s to %s is not IPv4", d.Src, d.Dst)
	}
	if len(d.Payload) > MaxPayload {
		return fmt.Errorf("vflow: payload of %d bytes from %s exceeds %d", len(d.Payload), d.Src, MaxPayload)
	}
	h := &s.hdrs[i]
	src, dst := d.Src.Addr().As4(), d.Dst.Addr().As4()
	h[0] = 0x45 // version 4, 5 words
	h[1] = 0
	binary.BigEndian.PutUint16(h[2:], uint16(headersLen+len(d.Payload)))
	binary.BigEndian.PutUint32(h[4:], 0) // id (kernel fills), no fragment flags
	h[8] = 64                            // TTL
	h[9] = unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(h[10:], 0)
	copy(h[12:16], src[:])
	copy(h[16:20], dst[:])
	u := h[ipv4HeaderLen:]
	binary.BigEndian.PutUint16(u[0:], d.Src.Port())
	binary.BigEndian.PutUint16(u[2:], d.Dst.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(udpHeaderLen+len(d.Payload)))
	binary.BigEndian.PutUint16(u[6:], 0)
	pl := &s.iovs[i][1]
	pl.Base, pl.Len = nil, 0
	if len(d.Payload) > 0 {
		pl.Base = &d.Payload[0]
		pl.SetLen(len(d.Payload))
	}
	s.dsts[i].Addr = dst
	s.dsts[i].Port = 0 // ignored by raw sockets
	return nil
}

// Close closes the raw socket.
func (s *Sender) Close() error { return s.f.Close() }
