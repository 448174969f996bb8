//go:build linux

package engine

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestOwnedExitWinsOverRefusal: an owned target killed twice (SIGKILL,
// restarted between) is each time an outage "exited (killed by
// SIGKILL)", in the report and in the line printed at once, although the
// watchdog's probe finds its port refused before its end is reaped (the
// kernel closes a killed process's sockets first; the probe here is
// refused from the moment the signal is sent, so the race goes the bad
// way every time).
func TestOwnedExitWinsOverRefusal(t *testing.T) {
	var checks atomic.Int32
	p, err := owned.Start(context.Background(), owned.Spec{
		Command: "sleep 60",
		Addr:    "127.0.0.1:1",
		// Odd checks are the "already in use?" check before each start,
		// even ones the readiness check after it.
		Ready: func(context.Context) error {
			if checks.Add(1)%2 == 1 {
				return errors.New("nothing answers yet")
			}
			return nil
		},
		ReadyTimeout: 20 * time.Second,
		Grace:        2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	var killed atomic.Bool
	refused := &net.OpError{Op: "read", Net: "udp", Err: os.NewSyscallError("recvfrom", syscall.ECONNREFUSED)}
	client := &simclient.Client{Reach: func(context.Context, netip.AddrPort, scenario.Options, time.Duration) (scenario.Options, error) {
		if killed.Load() {
			return nil, refused
		}
		return nil, nil
	}}
	var mu sync.Mutex
	var notes []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	x := startWatch(ctx, Config{Owned: p, Watchdog: 20 * time.Millisecond, WatchdogTimeout: time.Second},
		client, &scenario.Plan{}, netip.MustParseAddrPort("127.0.0.1:1"), metrics.NewCollector(start), start, func(s string) {
			mu.Lock()
			notes = append(notes, s)
			mu.Unlock()
		})
	defer func() { x.cancel(); <-x.done }()
	// waitFor polls cond (bounded: 20 s).
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for i := 0; i < 2000 && !cond(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !cond() {
			t.Fatalf("%s: not within 20 s; outages %+v", what, x.w.Outages())
		}
	}
	for kill := 1; kill <= 2; kill++ {
		killed.Store(true)
		if err := p.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor("down", func() bool { return len(x.w.Outages()) == kill })
		if err := p.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		killed.Store(false)
		waitFor("back", func() bool { return !x.w.Down() })
	}
	for i, o := range x.w.Outages() {
		if o.Kind != result.DownExited || o.Exit != "killed by SIGKILL" {
			t.Errorf("outage %d: kind %q, exit %q; want exited, killed by SIGKILL", i+1, o.Kind, o.Exit)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	down := 0
	for _, n := range notes {
		if strings.Contains(n, "TARGET DOWN") {
			down++
			if !strings.Contains(n, "exited (killed by SIGKILL)") {
				t.Errorf("printed %q, want exited (killed by SIGKILL)", n)
			}
		}
	}
	if down != 2 {
		t.Errorf("%d TARGET DOWN lines, want 2: %q", down, notes)
	}
}
