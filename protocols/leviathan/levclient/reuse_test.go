package levclient

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestReuse: one client playing its flow several times, each session got
// through simclient.Renew as the closed model does. A flow that neither
// closes its connection nor joins the server keeps it (the server opens
// one connection) and runs the whole login again each time; a flow that
// closes, joins, or ran a robustness step gets a fresh one each time.
func TestReuse(t *testing.T) {
	const iters = 3
	tests := []struct {
		name      string
		steps     string
		wantConns uint64
	}{
		{"connect and echo keep the connection", "      - connect\n      - echo: {count: 2}\n", 1},
		{"a flow that closes does not", "      - connect\n      - echo\n      - close\n", iters},
		{"a flow that joins the server does not", "      - connect\n      - join_server\n", iters},
		{"a flow with a malformed step does not", "      - connect\n      - malformed: {count: 1, share: 100%, silence: 20ms}\n", iters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, nil)
			p := plan(t, "", tc.steps)
			col := metrics.NewCollector(time.Now())
			sh := fastShared(t, p, srv, col)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var prev simclient.Session
			var addrs []netip.AddrPort
			for id := range iters {
				s, err := simclient.Renew(New, sh, prev, id, &p.Flows[0], clientSrc)
				if err != nil {
					t.Fatal(err)
				}
				addrs = append(addrs, s.(*session).Driver().LocalAddr())
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
			if st.ConnsOpened != tc.wantConns {
				t.Errorf("server opened %d connections over %d flows (client addresses %v), want %d", st.ConnsOpened, iters, addrs, tc.wantConns)
			}
			if got := st.Requests["Connect"]; got != iters {
				t.Errorf("server answered %d Connect requests, want one per flow (%d)", got, iters)
			}
		})
	}
}

// TestReuseAfterClose: a closed session and a flow that is not the plan's
// are not reused.
func TestReuseAfterClose(t *testing.T) {
	srv := startServer(t, nil)
	p := plan(t, "", "      - connect\n")
	sh, err := simclient.NewShared(p, srv.Addr(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	s, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	other := p.Flows[0]
	if _, ok := s.(simclient.Reusable).Reuse(1, &other); ok {
		t.Error("reused for a flow that is not the plan's")
	}
	s.Close()
	if _, ok := s.(simclient.Reusable).Reuse(2, &p.Flows[0]); ok {
		t.Error("a closed session was reused")
	}
}
