package tcpclient

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// TestWatch: the watchdog's probe of a TCP lobby passes on a lobby that
// answers LIST_ROOMS_REQ, and fails on one whose kernel accepts the
// connection but which answers nothing (silent, where reach passes) and
// on a port nothing listens on (refused).
func TestWatch(t *testing.T) {
	cfg, err := refserver.Loopback().Only(tcplobby.ProtocolName, udplobby.ProtocolName)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// hung: listening, never accepting: the kernel completes the
	// handshake from its backlog, as for a hung process.
	hung, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	gone, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	goneAddr := gone.Addr().(*net.TCPAddr).AddrPort()
	gone.Close()
	tests := []struct {
		name      string
		addr      netip.AddrPort
		kind      string // "" = answers
		reachable bool
	}{
		{"reference lobby", srv.Addr(tcplobby.ProtocolName), "", true},
		{"hung lobby", hung.Addr().(*net.TCPAddr).AddrPort(), result.DownSilent, true},
		{"nothing listening", goneAddr, result.DownRefused, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := watch(context.Background(), tc.addr, nil, 200*time.Millisecond)
			if got := liveness.Classify(err); got != tc.kind {
				t.Errorf("watch = %v (%q), want %q", err, got, tc.kind)
			}
			if _, rerr := reach(context.Background(), tc.addr, nil, 200*time.Millisecond); (rerr == nil) != tc.reachable {
				t.Errorf("reach = %v, want reachable %v", rerr, tc.reachable)
			}
		})
	}
}
