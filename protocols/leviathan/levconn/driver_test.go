package levconn

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// dialPeer is a driver with opt connected to a loopback socket of the
// test's, the peer; both close when the test ends.
func dialPeer(t *testing.T, opt DriverOptions) (*net.UDPConn, *Driver) {
	t.Helper()
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	d, err := Dial(peer.LocalAddr().(*net.UDPAddr).AddrPort(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return peer, d
}

// TestDriverReadsLargeDatagramWhole: a datagram larger than the 2 KiB a
// driver used to start with is read whole the first time, its message
// delivered; the peer need not send it again.
func TestDriverReadsLargeDatagramWhole(t *testing.T) {
	for _, size := range []int{10, 2048, 10_000, levwire.MaxDatagram - 64} {
		peer, d := dialPeer(t, DriverOptions{})
		payload := bytes.Repeat([]byte{0x5a}, size)
		dg := levwire.AppendNormalHeader(nil, 5, 0, nil, 1)
		dg = levwire.AppendRequestHeader(dg, 3, levwire.ReqIdentification)
		dg = append(dg, payload...)
		if _, err := peer.WriteToUDPAddrPort(dg, d.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		ev, err := d.Next(context.Background(), time.Now().Add(10*time.Second))
		if err != nil {
			t.Fatalf("%d-byte payload: Next: %v", size, err)
		}
		if ev.Kind != EventMessage || !bytes.Equal(ev.Msg.Payload, payload) {
			t.Fatalf("%d-byte payload: event %v with a %d-byte payload, want the message whole", size, ev.Kind, len(ev.Msg.Payload))
		}
	}
}

// TestDriverStamp: a driver asked for kernel stamps gives each datagram's
// (between its send and Next's return); one not asked gives none.
func TestDriverStamp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	for _, want := range []bool{true, false} {
		peer, d := dialPeer(t, DriverOptions{KernelStamps: want})
		if d.KernelStamps() != want {
			t.Fatalf("KernelStamps = %v, want %v", d.KernelStamps(), want)
		}
		dg := levwire.AppendNormalHeader(nil, 5, 0, nil, 1)
		dg = levwire.AppendRequestHeader(dg, 3, levwire.ReqIdentification)
		before := time.Now().UnixNano()
		if _, err := peer.WriteToUDPAddrPort(dg, d.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Next(context.Background(), time.Now().Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		after := time.Now().UnixNano()
		switch ns := d.Stamp(); {
		case want && (ns < before || ns > after):
			t.Errorf("stamp %d not between the send (%d) and Next's return (%d)", ns, before, after)
		case !want && ns != 0:
			t.Errorf("a stamp (%d) on a driver not asked for them", ns)
		}
	}
}

// testFlow is a Flow over an unconnected loopback socket, as a virtual
// flow is to the driver: no descriptor (SyscallConn fails), datagrams from
// any address, each read stamped with stamp; it keeps whom it was
// connected to.
type testFlow struct {
	*net.UDPConn
	stamp     int64
	into      *int64
	connected netip.AddrPort
}

func (f *testFlow) Connect(peer netip.AddrPort) { f.connected = peer }

func (f *testFlow) SyscallConn() (syscall.RawConn, error) {
	return nil, errors.New("a flow has no descriptor")
}
func (f *testFlow) StampInto(p *int64) { f.into = p }
func (f *testFlow) ReadMsgUDPAddrPort(b, oob []byte) (int, int, int, netip.AddrPort, error) {
	n, oobn, flags, from, err := f.UDPConn.ReadMsgUDPAddrPort(b, oob)
	if err == nil && f.into != nil {
		*f.into = f.stamp
	}
	return n, oobn, flags, from, err
}

// TestDriverFlow: a driver on a Flow connects it to its peer (so that it
// hears the peer's port refuse), sends to its peer from the flow's
// address, hands the engine what the peer sends, with the flow's stamp,
// and drops a datagram from any other address (OnStray), which the
// connected socket it stands in for would never have read.
func TestDriverFlow(t *testing.T) {
	listen := func() *net.UDPConn {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	peer, stranger := listen(), listen()
	flow := &testFlow{UDPConn: listen(), stamp: 12345}
	var strays []netip.AddrPort
	d, err := Dial(peer.LocalAddr().(*net.UDPAddr).AddrPort(), DriverOptions{Flow: flow, KernelStamps: true,
		OnStray: func(_ []byte, from netip.AddrPort) { strays = append(strays, from) }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if want := peer.LocalAddr().(*net.UDPAddr).AddrPort(); flow.connected != want {
		t.Errorf("flow connected to %s, want the peer %s", flow.connected, want)
	}
	msg := func(payload string) []byte {
		dg := levwire.AppendNormalHeader(nil, 5, 0, nil, 1)
		dg = levwire.AppendRequestHeader(dg, 3, levwire.ReqIdentification)
		return append(dg, payload...)
	}
	at := d.LocalAddr()
	if _, err := stranger.WriteToUDPAddrPort(msg("stranger"), at); err != nil {
		t.Fatal(err)
	}
	if _, err := peer.WriteToUDPAddrPort(msg("peer"), at); err != nil {
		t.Fatal(err)
	}
	ev, err := d.Next(context.Background(), time.Now().Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != EventMessage || string(ev.Msg.Payload) != "peer" {
		t.Fatalf("event %v, payload %q: want the peer's message", ev.Kind, ev.Msg.Payload)
	}
	if len(strays) != 1 || strays[0] != stranger.LocalAddr().(*net.UDPAddr).AddrPort() {
		t.Errorf("strays %v, want the stranger's one datagram", strays)
	}
	if !d.KernelStamps() || d.Stamp() != flow.stamp {
		t.Errorf("stamps %v, stamp %d: want the flow's %d", d.KernelStamps(), d.Stamp(), flow.stamp)
	}
	if err := d.WriteRaw([]byte("to the peer")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64)
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, from, err := peer.ReadFromUDPAddrPort(b)
	if err != nil || string(b[:n]) != "to the peer" || from != at {
		t.Errorf("the peer read %q from %v (%v), want the driver's datagram from %v", b[:n], from, err, at)
	}
}

// TestDriverCancelledBy: a driver whose owner cancels it when its context
// ends (CancelledBy, a run's CancelSet) registers nothing with that
// context at a Next, where it otherwise makes a context.AfterFunc each
// time; another context still gets one. Cancel ends a blocked Next, which
// then returns the context's error, even where nothing else would ever end
// the read (a Wake owner that sets no deadline).
func TestDriverCancelledBy(t *testing.T) {
	_, d := dialPeer(t, DriverOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other, cancelOther := context.WithCancel(context.Background())
	defer cancelOther()
	past := time.Now().Add(-time.Second) // Next returns ErrTimeout without reading
	allocs := func(c context.Context) float64 {
		return testing.AllocsPerRun(50, func() {
			if _, err := d.Next(c, past); !errors.Is(err, ErrTimeout) {
				t.Fatalf("Next: %v, want ErrTimeout", err)
			}
		})
	}
	if a := allocs(ctx); a == 0 {
		t.Fatal("a Next on a context no owner watches allocates nothing: the test measures no AfterFunc")
	}
	d.CancelledBy(ctx)
	if a := allocs(ctx); a != 0 {
		t.Errorf("a Next on the owner's context allocates %v times, want 0", a)
	}
	if a := allocs(other); a == 0 {
		t.Error("a Next on another context registers nothing with it")
	}
	d.CancelledByNone()
	if a := allocs(ctx); a == 0 {
		t.Error("after CancelledByNone, a Next registers nothing with its context")
	}

	_, w := dialPeer(t, DriverOptions{Wake: func(time.Time) {}})
	w.CancelledBy(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := w.Next(ctx, time.Time{})
		done <- err
	}()
	cancel()
	w.Cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a blocked Next after Cancel: %v, want context.Canceled", err)
	}
}
