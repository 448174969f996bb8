//go:build linux

package vflow

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"
	"time"
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
//
// The socket is kept out of Go's netpoller: a socket in an epoll set is
// woken for every datagram sent (the kernel frees each one's buffer at
// once on loopback and tells the set there is room again), which cost
// about 4 % of a virtual client's CPU and woke idle threads. The kernel
// seldom lacks room; when it does, Send waits for it with poll(2).
type Sender struct {
	fd   int
	msgs []unix.Mmsghdr
	iovs [][2]unix.Iovec // header, payload
	hdrs [][headersLen]byte
	dsts []unix.RawSockaddrInet4
	id   uint16 // the IPv4 identification last written
	pfd  [1]unix.PollFd
	// roomWait bounds how long one Send waits, in all, for the kernel to
	// have room for its datagrams; past it the send fails with EAGAIN.
	roomWait time.Duration
}

// maxRoomWait is a Sender's roomWait.
const maxRoomWait = 5 * time.Second

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
		fd:       fd,
		msgs:     make([]unix.Mmsghdr, batch),
		iovs:     make([][2]unix.Iovec, batch),
		hdrs:     make([][headersLen]byte, batch),
		dsts:     make([]unix.RawSockaddrInet4, batch),
		pfd:      [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}},
		roomWait: maxRoomWait,
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
		k, errno := s.sendmmsg(n)
		for i := range n {
			s.iovs[i][1].Base = nil // keep no hold on the caller's payloads
		}
		sent += k
		if errno != 0 {
			return sent, fmt.Errorf("vflow: sendmmsg from %s to %s: %w", ds[k].Src, ds[k].Dst, errno)
		}
		ds = ds[n:]
	}
	return sent, nil
}

// sendmmsg sends msgs[:n], partly sent batches continuing, and returns how
// many went: all, or those before the one the kernel refused (its errno).
func (s *Sender) sendmmsg(n int) (int, syscall.Errno) {
	from := 0
	var waited time.Duration
	for from < n {
		k, e := mmsg(unix.SYS_SENDMMSG, uintptr(s.fd), s.msgs[from:n], 0)
		switch {
		case e == unix.EAGAIN:
			if e = s.waitRoom(&waited); e != 0 {
				return from, e
			}
			continue
		case e != 0:
			return from, e
		case k == 0: // sent none and no error: stop rather than spin
			return from, unix.EIO
		}
		from += k
	}
	return from, 0
}

// waitRoom waits until the socket has room to send, adding the wait to
// *waited; EAGAIN once *waited passes s.roomWait.
func (s *Sender) waitRoom(waited *time.Duration) syscall.Errno {
	for *waited < s.roomWait {
		step := min(s.roomWait-*waited, 100*time.Millisecond)
		start := time.Now()
		n, err := unix.Poll(s.pfd[:], int(max(step/time.Millisecond, 1)))
		*waited += time.Since(start)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return errnoOf(err)
		case n > 0:
			return 0
		}
	}
	return unix.EAGAIN
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
	s.id++
	if s.id == 0 { // 0 asks the kernel to choose one, which costs a hash a datagram
		s.id = 1
	}
	binary.BigEndian.PutUint16(h[4:], s.id)
	binary.BigEndian.PutUint16(h[6:], 0) // no fragment flags: the kernel never fragments what a raw socket writes
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

// Close closes the raw socket; call it after the last Send has returned.
func (s *Sender) Close() error { return unix.Close(s.fd) }
