package pktinfo

import (
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

type mode uint8

const (
	modeOff mode = iota
	mode4        // AF_INET socket: IP_PKTINFO
	mode6        // AF_INET6 socket (dual-stack included): IPV6_PKTINFO, v4 as v4-mapped
)

// enable turns on the destination report matching the socket's family. Go
// opens "udp" on 0.0.0.0 as a dual-stack AF_INET6 socket, so the family is
// asked of the socket, not read from its address.
func enable(c *net.UDPConn) (mode, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return modeOff, err
	}
	m := modeOff
	var serr error
	if err := rc.Control(func(fd uintptr) {
		dom, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
		if err != nil {
			serr = err
			return
		}
		switch dom {
		case unix.AF_INET:
			if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1); serr == nil {
				m = mode4
			}
		case unix.AF_INET6:
			if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1); serr == nil {
				m = mode6
			}
		}
	}); err != nil {
		return modeOff, err
	}
	return m, serr
}

const (
	hdrLen = unix.SizeofCmsghdr
	in4Len = unix.SizeofInet4Pktinfo
	in6Len = unix.SizeofInet6Pktinfo
)

// parse finds the pktinfo control message in oob without allocating. For
// IPv4 it takes ipi_spec_dst, the local address the kernel matched (the
// destination itself for unicast, the interface's address for a
// broadcast), which is the right source for a reply.
func parse(m mode, oob []byte) netip.Addr {
	for len(oob) >= hdrLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdrLen || l > len(oob) {
			return netip.Addr{}
		}
		data := oob[hdrLen:l]
		switch {
		case m == mode4 && h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= in4Len:
			info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			return netip.AddrFrom4(info.Spec_dst)
		case m == mode6 && h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= in6Len:
			info := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			return netip.AddrFrom16(info.Addr).Unmap()
		}
		sp := unix.CmsgSpace(l - hdrLen)
		if sp > len(oob) {
			return netip.Addr{}
		}
		oob = oob[sp:]
	}
	return netip.Addr{}
}

// build writes the control message that sets the source address into oob
// and returns it. The interface index stays 0: routing picks the interface.
func build(m mode, local netip.Addr, oob []byte) []byte {
	switch m {
	case mode4:
		if !local.Unmap().Is4() {
			return nil
		}
		oob = oob[:unix.CmsgSpace(in4Len)]
		clear(oob)
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
		h.SetLen(unix.CmsgLen(in4Len))
		info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&oob[hdrLen]))
		info.Spec_dst = local.Unmap().As4()
		return oob
	case mode6:
		oob = oob[:unix.CmsgSpace(in6Len)]
		clear(oob)
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
		h.SetLen(unix.CmsgLen(in6Len))
		info := (*unix.Inet6Pktinfo)(unsafe.Pointer(&oob[hdrLen]))
		info.Addr = local.As16() // an IPv4 address as v4-mapped, which Linux accepts on a dual-stack socket
		return oob
	}
	return nil
}
