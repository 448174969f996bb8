package tcpclient

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestReuse: one client playing its flow several times, each session got
// through simclient.Renew as the closed model does. A flow that leaves
// its connection open and clean keeps it (the server accepts one
// connection) and still logs in with CONNECT_REQ each time; a flow that
// disconnects, is left in a room, or ran a robustness step gets a fresh
// connection each time.
func TestReuse(t *testing.T) {
	const iters = 3
	tests := []struct {
		name      string
		steps     string
		wantConns uint64
	}{
		{"a poller keeps its connection", "[connect, list, {think: 1ms}, list]", 1},
		{"list without connect keeps it too", "[list]", 1},
		{"a flow that disconnects does not", "[connect, list, disconnect]", iters},
		{"a flow left in a room does not", "[connect, create]", iters},
		{"a flow with a rate probe does not", "[connect, {rate_probe: {from: 10/s, to: 20/s, over: 100ms, timeout: 1s}}]", iters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startReference(t)
			p := plan(t, "", "  - name: a\n    steps: "+tc.steps+"\n")
			col := metrics.NewCollector(time.Now())
			sh, err := simclient.NewShared(p, srv.Addr(), col, simclient.Options{Tick: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var prev simclient.Session
			for id := range iters {
				s, err := simclient.Renew(New, sh, prev, id, &p.Flows[0], netip.MustParseAddr("127.0.0.1"))
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Run(ctx, time.Now()); err != nil {
					t.Fatalf("session %d: %v", id, err)
				}
				prev = s
			}
			prev.Close()
			if run, err := col.Snapshot(); err != nil || len(run.Violations) != 0 {
				t.Errorf("violations %+v (%v)", run.Violations, err)
			}
			st := srv.Stats()
			if st.ConnsAccepted != tc.wantConns {
				t.Errorf("server accepted %d connections over %d flows, want %d", st.ConnsAccepted, iters, tc.wantConns)
			}
			if strings.HasPrefix(tc.steps, "[connect") {
				if got := st.FramesIn["CONNECT_REQ"]; got != iters {
					t.Errorf("server saw %d CONNECT_REQ, want one per flow (%d)", got, iters)
				}
			}
		})
	}
}

// TestReuseAfterClose: a closed session, one that never connected, and a
// flow that is not the plan's are not reused.
func TestReuseAfterClose(t *testing.T) {
	addr := referenceServer(t)
	p := plan(t, "", "  - name: a\n    steps: [connect]\n  - name: b\n    steps: [think: 1ms]\n")
	sh, err := simclient.NewShared(p, addr, metrics.NewCollector(time.Now()), simclient.Options{Tick: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	run := func(id, flow int) simclient.Session {
		s, err := New(sh, id, &p.Flows[flow], netip.MustParseAddr("127.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
		return s
	}
	closed := run(0, 0)
	closed.Close()
	if _, ok := closed.(simclient.Reusable).Reuse(1, &p.Flows[0]); ok {
		t.Error("a closed session was reused")
	}
	idle := run(2, 1)
	defer idle.Close()
	if _, ok := idle.(simclient.Reusable).Reuse(3, &p.Flows[0]); ok {
		t.Error("a session without a connection was reused")
	}
	open := run(4, 0)
	defer open.Close()
	other := p.Flows[0]
	if _, ok := open.(simclient.Reusable).Reuse(5, &other); ok {
		t.Error("reused for a flow that is not the plan's")
	}
}
