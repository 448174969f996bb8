// Package deadport gives a test an address on 127.0.0.1 where nothing
// answers, held for the test: a port found free and closed again could
// be taken by another test (of this package or another, running beside
// it) before it is dialled, and then something answered where the test
// wanted a refusal (TestWatch's "nothing listening" was answered by a
// lobby under load).
package deadport

import (
	"net"
	"net/netip"
	"syscall"
	"testing"
)

// UDP returns a UDP address whose datagrams draw an ICMP port
// unreachable (a refusal): its port is bound by a socket connected to
// another address, which the kernel does not deliver them to.
func UDP(tb testing.TB) netip.AddrPort {
	tb.Helper()
	c, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// TCP returns a TCP address that refuses connections (a reset): its port
// is bound by a socket that never listens.
func TCP(tb testing.TB) netip.AddrPort {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(sa.(*syscall.SockaddrInet4).Port))
}
