package tcpclient

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
)

// TestWatch: the watchdog's probe of a TCP lobby passes on a lobby that
// answers LIST_ROOMS_REQ, and fails on one whose kernel accepts the
// connection but which answers nothing (silent, where reach passes) and
// on a port nothing listens on (refused).
func TestWatch(t *testing.T) {
	cfg, err := refserver.Loopback().Only(tcpwire.ProtocolName, udpwire.ProtocolName)
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
	goneAddr := deadport.TCP(t)
	tests := []struct {
		name      string
		addr      netip.AddrPort
		kind      string // "" = answers
		says      string // in the error
		reachable bool
		either    bool // reach may pass or fail (a reset as it accepts)
		// wait is watch's timeout; 0: 2 s, for a lobby that must answer
		// or close within it however loaded the machine.
		wait time.Duration
	}{
		{"reference lobby", srv.Addr(tcpwire.ProtocolName), "", "", true, false, 0},
		// A hung lobby never answers: any wait ends silent, and 500 ms
		// still leaves the loopback connect (from the kernel's backlog)
		// far more than it takes.
		{"hung lobby", hung.Addr().(*net.TCPAddr).AddrPort(), result.DownSilent, "no reply", true, false, 500 * time.Millisecond},
		{"nothing listening", goneAddr, result.DownRefused, "refused", false, false, 0},
		{"accepts then closes", closingServer(t, srv.Addr(tcpwire.ProtocolName), false), result.DownClosed, "closed the connection after accept", true, false, 0},
		{"accepts then resets", closingServer(t, srv.Addr(tcpwire.ProtocolName), true), result.DownClosed, "reset the connection", true, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wait := tc.wait
			if wait == 0 {
				wait = 2 * time.Second
			}
			err := watch(context.Background(), tc.addr, nil, wait)
			if got := liveness.Classify(err); got != tc.kind {
				t.Errorf("watch = %v (%q), want %q", err, got, tc.kind)
			}
			if err != nil && !strings.Contains(err.Error(), tc.says) {
				t.Errorf("watch = %v, want it to say %q", err, tc.says)
			}
			_, rerr := reach(context.Background(), tc.addr, nil, 200*time.Millisecond)
			if rerr != nil && tc.either && !strings.Contains(rerr.Error(), tc.says) {
				t.Errorf("reach = %v, want it to say %q", rerr, tc.says)
			}
			if (rerr == nil) != tc.reachable && !tc.either {
				t.Errorf("reach = %v, want reachable %v", rerr, tc.reachable)
			}
		})
	}
}

// closingServer is a proxy in front of lobby that closes every connection
// it accepts, unanswered (FIN), or with reset, resets it (RST).
func closingServer(t *testing.T, lobby netip.AddrPort, reset bool) netip.AddrPort {
	t.Helper()
	mode := faultproxy.Close
	if reset {
		mode = faultproxy.Reset
	}
	p, err := faultproxy.TCP(lobby, mode, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	p.Trip()
	return p.Addr()
}
