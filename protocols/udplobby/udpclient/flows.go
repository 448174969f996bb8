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
// these methods: no raw reads, no precise polling, no descriptor (waitFD
// is -1); a waiting session suspends on the flow itself (await).
type udpConn interface {
	rxbuf.Socket // reads, SyscallConn, LocalAddr
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	SetReadDeadline(t time.Time) error
	Close() error
}

// flowWaiter is how a session waits for a virtual flow's datagram: parked
// (WaitReadable, holding no buffer), or suspended without its goroutine
// (Ready, and OnReady as the engine's simclient.Notifier).
type flowWaiter interface {
	rxbuf.ReadableWaiter
	Ready() bool
	simclient.Notifier
}

// flow is t's socket when it is a virtual flow, else nil. (Not a field:
// a client's transport is 16 bytes smaller without it.)
func (t *transport) flow() flowWaiter {
	f, _ := t.c.(flowWaiter)
	return f
}

var (
	_ udpConn    = (*net.UDPConn)(nil)
	_ udpConn    = (*vflow.Conn)(nil)
	_ flowWaiter = (*vflow.Conn)(nil)
)

// canSuspend reports whether a wait for a datagram can end in
// errWouldBlock, the session suspending until it comes (await): a socket
// read raw (waitFD), or a virtual flow.
func (t *transport) canSuspend() bool { return t.flow() != nil || t.waitFD() >= 0 }

// await suspends session b until t's next datagram, or until
// (simclient.ErrSuspended): on the socket's descriptor, or the virtual
// flow's readiness.
func (t *transport) await(b *simclient.Base, until time.Time) error {
	if f := t.flow(); f != nil {
		return b.AwaitOn(f, until)
	}
	return b.Await(t.waitFD(), until)
}

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
