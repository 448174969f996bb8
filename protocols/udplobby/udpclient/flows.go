package udpclient

import (
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/simclient"
)

// udpConn is what the transport uses of its socket: *net.UDPConn's
// methods, which a virtual flow (vflow.Conn) has too. A virtual flow has
// no descriptor (SyscallConn fails), so initIO leaves the transport on
// these methods: no raw reads, no precise polling, no suspending on a
// descriptor (waitFD is -1).
type udpConn interface {
	ReadMsgUDPAddrPort(b, oob []byte) (n, oobn, flags int, addr netip.AddrPort, err error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	SetReadDeadline(t time.Time) error
	LocalAddr() net.Addr
	Close() error
	SyscallConn() (syscall.RawConn, error)
}

// readableWaiter is a udpConn that can wait for a datagram without a
// buffer (vflow.Conn): readNet then takes its 64 KiB scratch only once
// the datagram is there, as the raw reads of a socket do.
type readableWaiter interface{ WaitReadable() error }

var (
	_ udpConn        = (*net.UDPConn)(nil)
	_ udpConn        = (*vflow.Conn)(nil)
	_ readableWaiter = (*vflow.Conn)(nil)
)

// openFlow gives t a virtual flow of h instead of a socket. Its reads say
// the kernel's receive time of each datagram in t.kns, as a socket's
// stamps do.
func (t *transport) openFlow(h *vflow.Hub, sw *simclient.Sweeper) error {
	c, err := h.Conn()
	if err != nil {
		return err
	}
	c.StampInto(&t.kns)
	t.attach(c, sw, 0)
	t.stamps = true
	return nil
}

// openOn opens t as run sh says: a virtual flow when the run has them
// (sh.Flows), else a socket on src.
func (t *transport) openOn(sh *simclient.Shared, src netip.Addr) error {
	if sh.Flows != nil {
		return t.openFlow(sh.Flows, sh.Sweeper)
	}
	return t.open(src, sh.SocketBuffer, sh.Sweeper, sh.PollWindow)
}
