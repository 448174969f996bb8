//go:build linux

package vflow

import (
	"errors"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
)

// TestReceiverReportsErrors: a datagram from a flow to a closed port draws
// an ICMP port unreachable, which Receive returns as an error report
// (Errno ECONNREFUSED, where it was sent, the flow's address, what was
// sent), beside the replies to datagrams sent to an echo server at the
// same time: neither hides the other.
func TestReceiverReportsErrors(t *testing.T) {
	needPrivileges(t)
	f := openFlows(t, Config{Addrs: netip.MustParsePrefix("127.212.0.0/24"), Sockets: 1})
	server, dead := echoServer(t), deadport.UDP(t)
	flows := flowAddrs(f.Config(), 6, 10)
	var ds []Datagram
	for i, fl := range flows {
		to := server
		if i%2 == 1 {
			to = dead
		}
		ds = append(ds, Datagram{Src: fl, Dst: to, Payload: []byte("from " + fl.String())})
	}
	if n, err := newSender(t, 8).Send(ds); err != nil || n != len(ds) {
		t.Fatalf("sent %d of %d: %v", n, len(ds), err)
	}
	r := oneReceiver(t, f, 4)
	replies, reports := map[netip.AddrPort]string{}, map[netip.Addr]Message{}
	ms := make([]Message, 4)
	for i := 0; len(replies)+len(reports) < len(flows) && i < 100; i++ {
		for j := range ms {
			ms[j] = Message{Buf: make([]byte, 2048)}
		}
		f.SetDeadline(time.Now().Add(10 * time.Second))
		n, err := r.Receive(ms)
		if err != nil {
			t.Fatalf("after %d replies and %d reports: %v", len(replies), len(reports), err)
		}
		for _, m := range ms[:n] {
			if m.Errno != 0 {
				reports[m.Flow.Addr()] = m
			} else {
				replies[m.Flow] = string(m.Buf[:m.N])
			}
		}
	}
	for i, fl := range flows {
		sent := "from " + fl.String()
		if i%2 == 0 {
			if replies[fl] != sent {
				t.Errorf("flow %s: reply %q, want %q", fl, replies[fl], sent)
			}
			continue
		}
		m, ok := reports[fl.Addr()]
		switch {
		case !ok:
			t.Errorf("flow %s: no error report for its datagram to %s", fl, dead)
		case m.Errno != syscall.ECONNREFUSED || m.From != dead || m.Flow.Port() != 0 || string(m.Buf[:m.N]) != sent:
			t.Errorf("flow %s: report %v from %s for %s carrying %q, want ECONNREFUSED from %s for %s:0 carrying %q",
				fl, m.Errno, m.From, m.Flow, m.Buf[:m.N], dead, fl.Addr(), sent)
		}
	}
}

// TestConnRefused: a Conn hears the kernel's error for a datagram it sent
// only when connected to where it sent it (Connect), once, as a connected
// socket does; an unconnected Conn, or one connected elsewhere, reads
// silence. Two Conns on one address connected to the same peer cannot be
// told apart: neither is charged, and the error counts as unrouted.
func TestConnRefused(t *testing.T) {
	h := openHub(t, 1<<16+1) // flows 0 and 65,536 share an address
	dead, server := deadport.UDP(t), echoServer(t)
	conns := make([]*Conn, 1<<16+1)
	for i := range conns {
		c, err := h.Conn()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	refusedOnce := func(t *testing.T, c *Conn) {
		t.Helper()
		buf := make([]byte, 64)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("read returned %v, want ECONNREFUSED", err)
		}
		silent(t, c)
	}
	for _, tc := range []struct {
		name    string
		c       *Conn
		connect netip.AddrPort // zero: not connected
		check   func(*testing.T, *Conn)
	}{
		{"connected to the closed port", conns[1], dead, refusedOnce},
		{"not connected", conns[2], netip.AddrPort{}, silent},
		{"connected elsewhere", conns[3], server, silent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.connect.IsValid() {
				tc.c.Connect(tc.connect)
			}
			if _, err := tc.c.WriteToUDPAddrPort([]byte("hello"), dead); err != nil {
				t.Fatal(err)
			}
			tc.check(t, tc.c)
		})
	}
	t.Run("two connected on one address", func(t *testing.T) {
		a, b := conns[0], conns[1<<16]
		if a.AddrPort().Addr() != b.AddrPort().Addr() {
			t.Fatalf("flows %s and %s do not share an address", a.AddrPort(), b.AddrPort())
		}
		a.Connect(dead)
		b.Connect(dead)
		before := h.Unrouted()
		if _, err := a.WriteToUDPAddrPort([]byte("hello"), dead); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for h.Unrouted() == before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if h.Unrouted() == before {
			t.Fatal("the error was not counted as unrouted")
		}
		silent(t, a)
		silent(t, b)
	})
}

// silent fails unless a read of c waits out a short deadline.
func silent(t *testing.T, c *Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, _, _, _, err := c.ReadMsgUDPAddrPort(make([]byte, 64), nil); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read returned %v, want a timeout", err)
	}
}
