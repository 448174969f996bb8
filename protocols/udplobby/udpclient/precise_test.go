//go:build linux

package udpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/simclient"
	"golang.org/x/sys/unix"
)

// preciseRig is a transport in precise mode (window) and a peer socket on
// another port that plays the server. No test asserts a duration: which
// path read a datagram is told by the transport's pollHook.
type preciseRig struct {
	t      *testing.T
	tr     *transport
	peer   *net.UDPConn
	events []pollEvent
}

func newPreciseRig(t *testing.T, window time.Duration) *preciseRig {
	t.Helper()
	sw := simclient.NewSweeper(time.Millisecond)
	t.Cleanup(sw.Stop)
	r := &preciseRig{t: t, tr: &transport{}}
	// A quiet port, not an ephemeral one: a late datagram for an earlier
	// holder of an ephemeral port (another test's) would be read by a
	// window the test wants empty.
	lo := netip.MustParseAddr("127.0.0.1")
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(lo, uint16(quietport.Pick(t, "udp4", 1, lo)))))
	if err != nil {
		t.Fatal(err)
	}
	r.tr.attach(c, sw, window)
	t.Cleanup(func() { r.tr.close() })
	if r.tr.window != window {
		t.Fatalf("transport window %v, want %v", r.tr.window, window)
	}
	peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	r.peer = peer
	r.tr.pollHook = func(e pollEvent) { r.events = append(r.events, e) }
	return r
}

// windowEndsEmpty makes the polling window end at its first empty poll,
// then calls then (if any): the rig's window is long (time.Hour), so that
// a test starved between its send and its recv still finds the window
// open, and it ends where the test says rather than after a real 50 µs.
func (r *preciseRig) windowEndsEmpty(then func()) {
	r.tr.pollHook = func(e pollEvent) {
		r.events = append(r.events, e)
		switch e {
		case pollEmpty:
			r.tr.until = time.Unix(1, 0) // passed: the poll loop ends
		case pollGaveUp:
			if then != nil {
				then()
			}
		}
	}
}

func (r *preciseRig) peerAddr() netip.AddrPort { return r.peer.LocalAddr().(*net.UDPAddr).AddrPort() }

// reply sends b from the peer to the transport.
func (r *preciseRig) reply(b []byte) {
	r.t.Helper()
	if _, err := r.peer.WriteToUDPAddrPort(b, r.tr.localAddr()); err != nil {
		r.t.Fatal(err)
	}
}

// waitQueued waits (poll(2), bounded) until a datagram sits in the
// transport's receive queue, without reading it.
func (r *preciseRig) waitQueued() {
	r.t.Helper()
	waitQueued(r.t, r.tr.c)
}

// waitQueued waits (poll(2), bounded) until a datagram sits in c's receive
// queue, without reading it.
func waitQueued(t testing.TB, c udpConn) {
	t.Helper()
	sc, ok := c.(syscall.Conn)
	if !ok {
		t.Fatalf("%T has no descriptor to poll", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.Control(func(fd uintptr) {
		n, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10_000)
	}); err != nil || n != 1 {
		t.Fatalf("no datagram queued: %d, %v", n, err)
	}
}

// reqBytes is what request sends: a heap buffer, as a session's request
// buffer is (send keeps the slice while the socket takes it, so a
// conversion in the call would allocate on every call).
var reqBytes = []byte("req")

// request sends a request to the peer (which opens the window).
func (r *preciseRig) request() {
	r.t.Helper()
	if err := r.tr.send(r.peerAddr(), reqBytes); err != nil {
		r.t.Fatal(err)
	}
	if r.tr.pollUntil.IsZero() {
		r.t.Fatal("a send in precise mode did not open the polling window")
	}
}

func (r *preciseRig) count(e pollEvent) int {
	n := 0
	for _, x := range r.events {
		if x == e {
			n++
		}
	}
	return n
}

// TestPreciseReplyAlreadyThere: a reply waiting in the socket is read by
// the poll path, with the source the normal read gives.
func TestPreciseReplyAlreadyThere(t *testing.T) {
	r := newPreciseRig(t, time.Hour) // the window ends by maxPolls only
	r.request()
	r.reply([]byte("pong"))
	r.waitQueued()
	data, from, err := r.tr.recv(time.Now().Add(time.Minute))
	if err != nil || string(data) != "pong" || from != r.peerAddr() {
		t.Fatalf("recv = %q from %v, %v; want \"pong\" from %v", data, from, err, r.peerAddr())
	}
	if r.count(pollGot) != 1 || r.count(pollGaveUp) != 0 {
		t.Errorf("poll events %v: want the datagram read by the poll path", r.events)
	}
	// The poll path allocates nothing (a loopback datagram is queued when
	// sendto returns; one that is not yet goes to the netpoller, which
	// allocates nothing either).
	r.events = make([]pollEvent, 0, 1<<16)
	deadline := time.Now().Add(time.Minute)
	allocs := memfig.Allocs(50, func() {
		r.request()
		r.reply([]byte("pong"))
		if _, _, err := r.tr.recv(deadline); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per request and poll-path reply, want 0", allocs)
	}
	t.Logf("%d of 51 replies read by the poll path", r.count(pollGot))
}

// TestPreciseFallsBack: when nothing comes within the window, recv waits on
// the netpoller as without precise mode: a later reply is read there, and
// silence still ends in errTimeout at the deadline.
func TestPreciseFallsBack(t *testing.T) {
	t.Run("reply after the window", func(t *testing.T) {
		r := newPreciseRig(t, time.Hour)
		r.windowEndsEmpty(func() { r.reply([]byte("late")) }) // only once the window is over
		r.request()
		data, from, err := r.tr.recv(time.Now().Add(time.Minute))
		if err != nil || string(data) != "late" || from != r.peerAddr() {
			t.Fatalf("recv = %q from %v, %v; want \"late\" from %v", data, from, err, r.peerAddr())
		}
		if r.count(pollGaveUp) != 1 || r.count(pollGot) != 0 {
			t.Errorf("poll events %v: want one empty window, then the netpoller's read", r.events)
		}
		if !r.tr.pollUntil.IsZero() {
			t.Error("the window stayed open after it ended empty")
		}
	})
	t.Run("no reply", func(t *testing.T) {
		r := newPreciseRig(t, time.Hour)
		r.windowEndsEmpty(nil)
		r.request()
		_, _, err := r.tr.recv(time.Now().Add(10 * time.Millisecond))
		if !errors.Is(err, errTimeout) {
			t.Fatalf("recv = %v, want errTimeout", err)
		}
		if r.count(pollGaveUp) != 1 {
			t.Errorf("poll events %v: want one empty window", r.events)
		}
	})
	t.Run("datagram larger than the small buffer", func(t *testing.T) {
		r := newPreciseRig(t, time.Hour)
		r.request()
		want := bytes.Repeat([]byte{1}, rxbuf.Small+1)
		r.reply(want)
		r.waitQueued()
		data, from, err := r.tr.recv(time.Now().Add(time.Minute))
		if err != nil || from != r.peerAddr() || !bytes.Equal(data, want) {
			t.Fatalf("recv = %d bytes from %v, %v; want the %d bytes whole from %v", len(data), from, err, len(want), r.peerAddr())
		}
		if r.count(pollGot) != 1 {
			t.Errorf("poll events %v: want the datagram read by the poll path", r.events)
		}
	})
}

// TestPreciseCancelInWindow: cancel during the window ends recv with
// errCancelled at the next read, as it ends a parked read.
func TestPreciseCancelInWindow(t *testing.T) {
	r := newPreciseRig(t, time.Hour)
	r.tr.pollHook = func(e pollEvent) {
		r.events = append(r.events, e)
		if e == pollEmpty && len(r.events) == 1 {
			r.tr.cancel()
		}
	}
	r.request()
	_, _, err := r.tr.recv(time.Now().Add(time.Minute))
	if !errors.Is(err, errCancelled) {
		t.Fatalf("recv = %v, want errCancelled", err)
	}
	if len(r.events) != 1 {
		t.Errorf("poll events %v: want the window to stop at the first read after cancel", r.events)
	}
}

// TestPreciseReachesClient: Options.Precise gives every udp-lobby session
// a transport polling for simclient.PreciseWindow; without it, none.
func TestPreciseReachesClient(t *testing.T) {
	e := newEchoServer(t, 1)
	p := plan(t, "", "  - name: a\n    steps: [list_rooms]\n")
	for _, precise := range []bool{false, true} {
		sh, err := simclient.NewShared(p, e.addr(), metrics.NewCollector(time.Now()), simclient.Options{Precise: precise})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(sh, 0, &p.Flows[0], clientSrc)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(0)
		if precise {
			want = simclient.PreciseWindow
		}
		if got := s.(*session).tr.window; got != want {
			t.Errorf("Precise %v: transport window %v, want %v", precise, got, want)
		}
		if err := s.Run(context.Background(), time.Now()); err != nil {
			t.Errorf("Precise %v: %v", precise, err)
		}
		s.Close()
		sh.Close()
	}
}

// TestRawIOFamilies: the raw reads and writes (sockio) serve a socket of
// either family: bound to an IPv4 source (AF_INET) and unbound (the
// wildcard, AF_INET6 dual-stack where the machine has IPv6), sending to
// an IPv4 peer and reading its reply with the source the net package
// would give, in plain and in precise mode.
func TestRawIOFamilies(t *testing.T) {
	for _, src := range []netip.Addr{netip.MustParseAddr("127.0.0.1"), {}} {
		for _, window := range []time.Duration{0, time.Hour} {
			t.Run(fmt.Sprintf("src=%v,window=%v", src, window), func(t *testing.T) {
				sw := simclient.NewSweeper(time.Millisecond)
				t.Cleanup(sw.Stop)
				tr := &transport{}
				if err := tr.open(src, 0, sw, window); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tr.close() })
				if !tr.rawOK() {
					t.Fatal("no raw reads and writes on Linux")
				}
				t.Logf("socket family %d (AF_INET %d, AF_INET6 %d)", tr.family, unix.AF_INET, unix.AF_INET6)
				peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { peer.Close() })
				to := peer.LocalAddr().(*net.UDPAddr).AddrPort()
				if err := tr.send(to, reqBytes); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 16)
				_ = peer.SetReadDeadline(time.Now().Add(10 * time.Second))
				n, from, err := peer.ReadFromUDPAddrPort(buf)
				if err != nil || string(buf[:n]) != "req" {
					t.Fatalf("peer read %q, %v; want \"req\"", buf[:n], err)
				}
				if _, err := peer.WriteToUDPAddrPort([]byte("pong"), from); err != nil {
					t.Fatal(err)
				}
				data, got, err := tr.recv(time.Now().Add(10 * time.Second))
				if err != nil || string(data) != "pong" || got != to {
					t.Fatalf("recv = %q from %v, %v; want \"pong\" from %v", data, got, err, to)
				}
			})
		}
	}
}

// TestPreciseBudget: a client that finds every polling slot taken parks at
// once (its reply is read by the netpoller's path, no poll is tried); a
// window, whether it ends with a datagram or empty, gives its slot back.
func TestPreciseBudget(t *testing.T) {
	old := polls
	polls = &pollBudget{max: 1}
	t.Cleanup(func() { polls = old })

	t.Run("no slot", func(t *testing.T) {
		r := newPreciseRig(t, time.Hour)
		if !polls.take() { // another client polls
			t.Fatal("the test's budget refused its first take")
		}
		defer polls.give()
		r.request()
		r.reply([]byte("pong"))
		data, _, err := r.tr.recv(time.Now().Add(time.Minute))
		if err != nil || string(data) != "pong" {
			t.Fatalf("recv = %q, %v; want \"pong\"", data, err)
		}
		if r.count(pollNoSlot) != 1 || r.count(pollEmpty)+r.count(pollGot)+r.count(pollGaveUp) != 0 {
			t.Errorf("poll events %v: want no slot, and no poll", r.events)
		}
		if !r.tr.pollUntil.IsZero() {
			t.Error("the window stayed open without a slot")
		}
	})
	t.Run("slot given back", func(t *testing.T) {
		r := newPreciseRig(t, time.Hour)
		r.windowEndsEmpty(func() { r.reply([]byte("late")) }) // read after the window, parked
		r.request()
		if _, _, err := r.tr.recv(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if n := polls.n.Load(); n != 0 {
			t.Errorf("%d slots taken after a window that ended empty, want 0", n)
		}
		r.tr.pollHook = func(e pollEvent) { r.events = append(r.events, e) }
		r.request()
		r.reply([]byte("pong"))
		r.waitQueued()
		if _, _, err := r.tr.recv(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if n := polls.n.Load(); n != 0 {
			t.Errorf("%d slots taken after a window that read a reply, want 0", n)
		}
		if r.count(pollNoSlot) != 0 || r.count(pollGaveUp) != 1 || r.count(pollGot) != 1 {
			t.Errorf("poll events %v: want an empty window, then a window that read the reply", r.events)
		}
	})
}
