package levconn

import (
	"bytes"
	"context"
	"net"
	"runtime"
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
