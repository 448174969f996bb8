// Package pktinfo makes a UDP socket bound to a wildcard address answer from
// the local address each request was sent to.
//
// A socket bound to 0.0.0.0 or [::] on a host with several addresses (a
// Kubernetes node, a host with 127.0.0.1 and 127.0.0.2, any multi-homed
// server) sends with whatever source address the routing table picks, which
// need not be the address the client wrote to. A connected client socket, or
// a NAT, then drops the reply, and the client sees an unreachable server.
// Conn asks the kernel for each datagram's destination (IP_PKTINFO /
// IPV6_RECVPKTINFO) and sends replies with that address as their source.
//
// On a socket bound to a specific address, and on platforms without
// IP_PKTINFO, Conn is a plain *net.UDPConn: the local address returned by
// ReadFrom is the zero Addr, and WriteTo with a zero Addr is a plain
// WriteToUDPAddrPort.
package pktinfo

import (
	"net"
	"net/netip"
)

// oobSize holds one IPv4 or IPv6 pktinfo control message. ReadFrom and
// WriteTo keep their buffer on the stack: neither allocates.
const oobSize = 64

// Conn is a UDP socket whose replies can leave from a chosen local address.
// Reads and writes may run concurrently, as on a *net.UDPConn.
type Conn struct {
	*net.UDPConn
	mode mode
}

// New wraps c. When c is bound to an unspecified address it turns on the
// socket option that reports each datagram's destination; an error doing so
// is returned with a usable Conn that behaves as c alone.
func New(c *net.UDPConn) (*Conn, error) {
	pc := &Conn{UDPConn: c}
	la, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok || !la.IP.IsUnspecified() {
		return pc, nil
	}
	m, err := enable(c)
	if err != nil {
		return pc, err
	}
	pc.mode = m
	return pc, nil
}

// Listen is net.ListenUDP followed by New. Failing to enable the option
// closes the socket and returns the error: a wildcard server that would
// answer from the wrong address is not one to start.
func Listen(network string, laddr *net.UDPAddr) (*Conn, error) {
	c, err := net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	pc, err := New(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return pc, nil
}

// Active reports whether replies are sent from each request's destination
// address (the socket is bound to a wildcard address and the option is on).
func (c *Conn) Active() bool { return c.mode != modeOff }

// ReadFrom reads one datagram into buf. local is the address the datagram
// was sent to, for WriteTo; the zero Addr when the socket is not Active.
// from is as ReadFromUDPAddrPort returns it.
func (c *Conn) ReadFrom(buf []byte) (n int, from netip.AddrPort, local netip.Addr, err error) {
	if c.mode == modeOff {
		n, from, err = c.ReadFromUDPAddrPort(buf)
		return n, from, netip.Addr{}, err
	}
	var oob [oobSize]byte
	n, oobn, _, from, err := c.ReadMsgUDPAddrPort(buf, oob[:])
	if err != nil {
		return n, from, netip.Addr{}, err
	}
	return n, from, parse(c.mode, oob[:oobn]), nil
}

// WriteTo sends b to `to` from the local address local (as returned by
// ReadFrom). A zero local, or a Conn that is not Active, lets the kernel
// choose the source as WriteToUDPAddrPort does.
func (c *Conn) WriteTo(b []byte, to netip.AddrPort, local netip.Addr) (int, error) {
	if c.mode == modeOff || !local.IsValid() {
		return c.WriteToUDPAddrPort(b, to)
	}
	var oob [oobSize]byte
	n, _, err := c.WriteMsgUDPAddrPort(b, build(c.mode, local, oob[:]), to)
	return n, err
}
