package udpclient

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestLatencyEnd: on Linux a client's replies are timed by the kernel's
// receive stamp, and the run says so; where the socket refuses stamps
// (the option injected to fail) they are timed when the client saw them
// and the run says that; sockets of both kinds make it mixed.
func TestLatencyEnd(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	refuse := func(syscall.RawConn) error { return syscall.ENOPROTOOPT }
	for _, tc := range []struct {
		name    string
		refused []bool // one session per entry: its socket refuses stamps
		want    string
	}{
		{"stamps", []bool{false}, result.LatencyEndKernel},
		{"refused", []bool{true}, result.LatencyEndUser},
		{"some refused", []bool{false, true}, result.LatencyEndMixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec)
			p := plan(t, "defaults: {timeout: 5s}", "  - steps: [list_rooms]\n")
			sh, err := simclient.NewShared(p, f.addr(), metrics.NewCollector(time.Now()), simclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Close()
			for i, refused := range tc.refused {
				old := enableStamps
				if refused {
					enableStamps = refuse
				}
				s, err := New(sh, i, &p.Flows[0], clientSrc)
				enableStamps = old
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.Run(context.Background(), time.Now()); err != nil {
					t.Fatal(err)
				}
				tr := s.(*session).tr
				if tr.stamps == refused {
					t.Errorf("session %d: stamps %v on a socket that refused them: %v", i, tr.stamps, refused)
				}
				if stamped := tr.kns != 0; stamped == refused {
					t.Errorf("session %d: its reply came with a kernel stamp: %v, want %v", i, stamped, !refused)
				}
			}
			if got := sh.LatencyEnd(); got != tc.want {
				t.Errorf("LatencyEnd = %q, want %q", got, tc.want)
			}
		})
	}
}
