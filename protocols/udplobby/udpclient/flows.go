package udpclient

import (
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/simclient"
)

// udpConn is what the transport uses of its socket: *net.UDPConn's
// methods, which a virtual flow (vflow.Conn) has too. A virtual flow has
// no descriptor (SyscallConn fails), so initIO leaves the transport on
// these methods: no raw reads, no precise polling, no suspending on a
// descriptor (waitFD is -1).
type udpConn interface {
	rxbuf.Socket // reads, SyscallConn, LocalAddr
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	SetReadDeadline(t time.Time) error
	Close() error
}

var (
	_ udpConn              = (*net.UDPConn)(nil)
	_ udpConn              = (*vflow.Conn)(nil)
	_ rxbuf.ReadableWaiter = (*vflow.Conn)(nil)
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
