//go:build linux

package vflow

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

// hubRange is the hub tests' own range, apart from the other tests' and
// from the run's default; its flows are shared by three steered sockets,
// so that the hub's tests run with a dispatcher for each.
var hubRange = Config{Addrs: netip.MustParsePrefix("127.202.0.0/16"), Sockets: 3}

func openHub(t *testing.T, n int) *Hub {
	t.Helper()
	needPrivileges(t)
	h, err := OpenHub(hubRange, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestHubRoutesReplies: each Conn reads only its own flow's replies, with
// the server as source and a kernel receive time.
func TestHubRoutesReplies(t *testing.T) {
	h := openHub(t, 4)
	srv := echoServer(t)
	conns := make([]*Conn, 3)
	var stamps [3]int64
	for i := range conns {
		c, err := h.Conn()
		if err != nil {
			t.Fatal(err)
		}
		c.StampInto(&stamps[i])
		conns[i] = c
	}
	for i, c := range conns {
		if _, err := c.WriteToUDPAddrPort([]byte{byte('a' + i)}, srv); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 64)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, _, from, err := c.ReadMsgUDPAddrPort(buf, nil)
		if err != nil {
			t.Fatalf("flow %d: %v", i, err)
		}
		if got := string(buf[:n]); got != string(rune('a'+i)) || from != srv {
			t.Errorf("flow %d (%s) read %q from %s, want %q from %s", i, c.AddrPort(), got, from, string(rune('a'+i)), srv)
		}
		if stamps[i] == 0 {
			t.Errorf("flow %d: no kernel receive time", i)
		}
	}
	if u := h.Unrouted(); u != 0 {
		t.Errorf("%d datagrams unrouted", u)
	}
}

// TestConnDeadlineAndClose: a read ends at its deadline, when another
// goroutine moves the deadline to now, and when the Conn closes, each
// with the error a *net.UDPConn gives.
func TestConnDeadlineAndClose(t *testing.T) {
	h := openHub(t, 2)
	c, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	_ = c.SetReadDeadline(time.Now().Add(-time.Second))
	if _, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past deadline: %v, want ErrDeadlineExceeded", err)
	}
	for _, tc := range []struct {
		name string
		end  func()
		want error
	}{
		{"deadline moved to now", func() { _ = c.SetReadDeadline(time.Now()) }, os.ErrDeadlineExceeded},
		{"closed", func() { _ = c.Close() }, net.ErrClosed},
	} {
		_ = c.SetReadDeadline(time.Time{})
		done := make(chan error, 1)
		go func() { _, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); done <- err }()
		tc.end()
		select {
		case err := <-done:
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: read returned %v, want %v", tc.name, err, tc.want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the read did not return", tc.name)
		}
	}
}

// TestHubGivesOutFlows: flows are given out until all are in use, and one
// given back is given out again.
func TestHubGivesOutFlows(t *testing.T) {
	h := openHub(t, 2)
	a, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	if a.AddrPort() == b.AddrPort() {
		t.Fatalf("two open Conns share flow %s", a.AddrPort())
	}
	if _, err := h.Conn(); err == nil {
		t.Fatal("a third Conn of 2 flows: no error")
	}
	_ = a.Close()
	c, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	if c.AddrPort() != a.AddrPort() {
		t.Errorf("given back %s, then given out %s", a.AddrPort(), c.AddrPort())
	}
	if _, err := a.WriteToUDPAddrPort([]byte{1}, netip.MustParseAddrPort("127.0.0.1:9")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write on a closed Conn: %v, want net.ErrClosed", err)
	}
}

// TestConnOnReady: OnReady calls its function once the flow has a
// datagram or closes: at once when it already is ready, else when the
// datagram comes; an OnReady replaced before then is never called.
func TestConnOnReady(t *testing.T) {
	h := openHub(t, 2)
	srv := echoServer(t)
	c, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan string, 4)
	on := func(name string) func() { return func() { calls <- name } }
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-calls:
			if got != want {
				t.Fatalf("OnReady called %q, want %q", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("OnReady %q not called", want)
		}
	}
	if c.Ready() {
		t.Fatal("a new flow is ready")
	}
	c.OnReady(on("replaced"))
	c.OnReady(on("datagram"))
	if _, err := c.WriteToUDPAddrPort([]byte("x"), srv); err != nil {
		t.Fatal(err)
	}
	expect("datagram")
	if !c.Ready() {
		t.Fatal("not ready with a datagram queued")
	}
	c.OnReady(on("queued")) // at once, on this goroutine
	expect("queued")
	buf := make([]byte, 8)
	if _, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); err != nil {
		t.Fatal(err)
	}
	c.OnReady(on("closed"))
	_ = c.Close()
	expect("closed")
	c.OnReady(on("after close"))
	expect("after close")
	select {
	case got := <-calls:
		t.Errorf("OnReady %q called as well", got)
	default:
	}
}

// TestHubCountsLosses: datagrams past a flow's MaxQueued unread are
// dropped and counted (Dropped: the harness's loss, which a run reports
// apart from the target's), and a datagram for a flow no Conn holds is
// counted as unrouted.
func TestHubCountsLosses(t *testing.T) {
	h := openHub(t, 4)
	c, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	gone, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	_ = gone.Close()
	peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	const extra = 5
	for i := range MaxQueued + extra {
		if _, err := peer.WriteToUDPAddrPort([]byte{byte(i)}, c.AddrPort()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := peer.WriteToUDPAddrPort([]byte("late"), gone.AddrPort()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); (h.Dropped() < extra || h.Unrouted() < 1) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if d, u := h.Dropped(), h.Unrouted(); d != extra || u != 1 {
		t.Errorf("dropped %d, unrouted %d; want %d and 1", d, u, extra)
	}
	buf := make([]byte, 8)
	for i := range MaxQueued {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil)
		if err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("datagram %d: % x, %v; want the first %d in order", i, buf[:n], err, MaxQueued)
		}
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestHubDescriptors: a Hub holds HubDescriptors descriptors, however many
// flows it gives out (the open-files estimate of a run on virtual flows
// counts them, and no socket a client).
func TestHubDescriptors(t *testing.T) {
	needPrivileges(t)
	warm, err := OpenHub(Config{Addrs: netip.MustParsePrefix("127.214.0.0/24")}, 0) // the poller's own descriptors made
	if err != nil {
		t.Fatal(err)
	}
	warm.Close()
	before := openFDs(t)
	h, err := OpenHub(Config{Addrs: netip.MustParsePrefix("127.214.0.0/24")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for range 100 {
		if _, err := h.Conn(); err != nil {
			t.Fatal(err)
		}
	}
	if got := openFDs(t) - before; got != HubDescriptors() {
		t.Errorf("a hub with 100 flows given out holds %d descriptors, HubDescriptors says %d", got, HubDescriptors())
	}
}
