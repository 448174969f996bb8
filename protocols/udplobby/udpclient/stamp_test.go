package udpclient

import (
	"context"
	"runtime"
	"strings"
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
				if _, kernel := tr.receivedAt(); kernel == refused {
					t.Errorf("session %d: its reply timed by the kernel: %v, want %v", i, kernel, !refused)
				}
			}
			if got := sh.LatencyEnd(); got != tc.want {
				t.Errorf("LatencyEnd = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReceivedAt: a kernel stamp becomes a time on both clocks, before
// now by the datagram's age; an absent stamp, or one out of bounds (a
// wall clock step), gives now.
func TestReceivedAt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		age        time.Duration // of the stamp against the wall clock now
		none       bool
		wantKernel bool
	}{
		{"fresh", 40 * time.Microsecond, false, true},
		{"no stamp", 0, true, false},
		{"from the future", -time.Second, false, false},
		{"too old", 2 * maxStampAge, false, false},
	} {
		var tr transport
		before := time.Now()
		if !tc.none {
			tr.kns = before.Add(-tc.age).UnixNano()
		}
		at, kernel := tr.receivedAt()
		after := time.Now()
		if kernel != tc.wantKernel {
			t.Errorf("%s: kernel = %v, want %v", tc.name, kernel, tc.wantKernel)
			continue
		}
		if !strings.Contains(at.String(), " m=") {
			t.Errorf("%s: %v has no monotonic reading", tc.name, at)
		}
		// time.Now reads the wall and monotonic clocks one after the
		// other: they may disagree by a few nanoseconds.
		const slack = time.Microsecond
		lo, hi := before.Add(-slack), after.Add(slack)
		if kernel {
			lo, hi = lo.Add(-tc.age), hi.Add(-tc.age)
		}
		if at.Before(lo) || at.After(hi) {
			t.Errorf("%s: receivedAt = %v, want within [%v, %v]", tc.name, at, lo, hi)
		}
	}
}
