package rxbuf

import (
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// oobLen holds the control messages a read asks for (one receive stamp:
// a 16-byte header and a 16-byte timespec) with room to spare.
const oobLen = 64

// Scratch is one read's room: the datagram, and what recvmsg(2) returns
// beside it (the source address, control messages). It is pooled, so a
// reader holds none of it between reads.
type Scratch struct {
	b   [Size]byte
	oob [oobLen]byte
	rsa unix.RawSockaddrAny
	iov unix.Iovec
	hdr unix.Msghdr
}

func newScratch() *Scratch {
	s := new(Scratch)
	s.iov.Base = &s.b[0]
	s.iov.SetLen(Size)
	s.hdr.Name = (*byte)(unsafe.Pointer(&s.rsa))
	s.hdr.Iov = &s.iov
	s.hdr.SetIovlen(1)
	s.hdr.Control = &s.oob[0]
	return s
}

// Supported reports whether Recv works here.
const Supported = true

// Recv reads one datagram from the socket fd into s without waiting
// (recvmsg with MSG_DONTWAIT): its length, or the errno (EAGAIN: nothing
// to read). It allocates nothing.
func (s *Scratch) Recv(fd uintptr) (int, syscall.Errno) {
	s.hdr.Namelen = unix.SizeofSockaddrAny
	s.hdr.SetControllen(oobLen)
	s.hdr.Flags = 0
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.hdr)), unix.MSG_DONTWAIT)
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}

// Source decodes the sender's address of the datagram Recv read.
func (s *Scratch) Source() netip.AddrPort {
	switch s.rsa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&s.rsa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), Port(sa.Port))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&s.rsa))
		a := netip.AddrFrom16(sa.Addr)
		if sa.Scope_id != 0 {
			// As the net package names it: the interface's name, or its index.
			if ifi, err := net.InterfaceByIndex(int(sa.Scope_id)); err == nil {
				a = a.WithZone(ifi.Name)
			} else {
				a = a.WithZone(strconv.Itoa(int(sa.Scope_id)))
			}
		}
		return netip.AddrPortFrom(a, Port(sa.Port))
	}
	return netip.AddrPort{}
}

// Port converts a port between host and network byte order (the same
// swap both ways).
func Port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}
