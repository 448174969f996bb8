package pktinfo

import (
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// echo serves c until it is closed, replying to each datagram from the
// address it arrived at.
func echo(t *testing.T, c *Conn) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, local, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			c.WriteTo(buf[:n], from, local)
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
}

// ask sends one datagram from an unconnected 127.0.0.1 socket to `to` and
// returns the source address of the reply.
func ask(t *testing.T, to netip.AddrPort) netip.AddrPort {
	t.Helper()
	cl, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.WriteToUDPAddrPort([]byte("hi"), to); err != nil {
		t.Fatal(err)
	}
	// A deadline only so a broken server fails the test instead of hanging it.
	cl.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	n, src, err := cl.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("no reply from %v: %v", to, err)
	}
	if string(buf[:n]) != "hi" {
		t.Fatalf("reply %q, want the echo", buf[:n])
	}
	return netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
}

// TestReplyFromDestination: one wildcard socket reached at 127.0.0.1 and at
// 127.0.0.2 answers each client from the address it wrote to. Without the
// option a client writing to 127.0.0.2 from 127.0.0.1 gets its reply from
// 127.0.0.1, the kernel's choice for that route.
func TestReplyFromDestination(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-datagram source addresses are implemented on Linux only")
	}
	for _, network := range []string{"udp", "udp4"} { // "udp" on 0.0.0.0 is a dual-stack AF_INET6 socket
		t.Run(network, func(t *testing.T) {
			c, err := Listen(network, &net.UDPAddr{IP: net.IPv4zero})
			if err != nil {
				t.Fatal(err)
			}
			if !c.Active() {
				t.Fatal("wildcard socket is not Active")
			}
			echo(t, c)
			port := c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
			for _, dst := range []string{"127.0.0.2", "127.0.0.1", "127.0.0.3"} {
				to := netip.AddrPortFrom(netip.MustParseAddr(dst), port)
				if got := ask(t, to); got != to {
					t.Errorf("sent to %v, reply came from %v", to, got)
				}
			}
		})
	}
}

// TestSpecificAddressIsPlain: a socket bound to one address needs nothing;
// ReadFrom reports no local address and WriteTo is a plain write.
func TestSpecificAddressIsPlain(t *testing.T) {
	c, err := Listen("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Active() {
		t.Fatal("a socket bound to 127.0.0.2 should not be Active")
	}
	echo(t, c)
	to := c.LocalAddr().(*net.UDPAddr).AddrPort()
	to = netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
	if got := ask(t, to); got != to {
		t.Errorf("sent to %v, reply came from %v", to, got)
	}
}

// TestParseRejectsTruncated: a control message shorter than its header or
// claiming more than the buffer yields no address, never a panic.
func TestParseRejectsTruncated(t *testing.T) {
	for _, m := range []mode{modeOff, 1, 2} {
		for _, oob := range [][]byte{nil, {1, 2, 3}, make([]byte, 15), {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
			if a := parse(m, oob); a.IsValid() {
				t.Errorf("mode %d, oob %x: parsed %v", m, oob, a)
			}
		}
	}
}

// TestBuildParseRoundTrip: what build writes, parse reads back (the kernel
// uses the same layout for both directions).
func TestBuildParseRoundTrip(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	for _, tc := range []struct {
		m    mode
		addr string
	}{{1, "127.0.0.2"}, {2, "127.0.0.2"}, {2, "::1"}, {2, "fe80::1"}} {
		oob := build(tc.m, netip.MustParseAddr(tc.addr), make([]byte, oobSize))
		if got := parse(tc.m, oob); got != netip.MustParseAddr(tc.addr) {
			t.Errorf("mode %d %s: round trip gave %v", tc.m, tc.addr, got)
		}
	}
}

func BenchmarkEcho(b *testing.B) {
	for _, bc := range []struct {
		name string
		ip   net.IP
	}{{"wildcard", net.IPv4zero}, {"specific", net.IPv4(127, 0, 0, 1)}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := Listen("udp", &net.UDPAddr{IP: bc.ip})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			port := c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
			cl, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(port)})
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			buf := make([]byte, 64)
			b.ReportAllocs()
			for b.Loop() {
				cl.Write(buf[:16])
				n, from, local, err := c.ReadFrom(buf)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.WriteTo(buf[:n], from, local); err != nil {
					b.Fatal(err)
				}
				cl.Read(buf)
			}
		})
	}
}
