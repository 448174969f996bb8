package levclient

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/alone"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/metrics"
	refsrv "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	"github.com/lobbybench/lobbybench/simclient"
)

// memoryFlows are one flow as built-in steps and as a script: connect,
// join the server, then think for a minute, parked mid-flow with a field
// captured.
var memoryFlows = []struct{ name, steps string }{
	{"built-in", `      - connect: {name: bench}
      - join_server
      - think: 60s
`},
	{"scripted", `      - send: Request Connect
      - expect: {message: Response Connect, where: "CheckValue == 42"}
      - send: Request Security
      - expect: Response Security
      - send: {message: Request Authenticate, fields: {UserName: bench}}
      - expect: Response Authenticate
      - send: Request JoinServer
      - expect: {message: Response ServerAllow, capture: {accepted: AcceptedType}}
      - think: 60s
`},
}

// parkedHeap runs n sessions of steps against a reference server (the
// engine's own timings: nothing to resend while they think) until every
// one has joined, and returns the heap and stack bytes they added, per
// session (memfig.Parked), the server's connections included (the same
// for both flows).
func parkedHeap(t *testing.T, steps string, n int) (heap, stack float64) {
	t.Helper()
	cfg := refsrv.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.MaxPlayers, cfg.MaxConnsPerIP = n, -1
	srv, err := refsrv.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close() // the next measurement starts without this one's connections
	p := plan(t, "", steps)
	sh, err := simclient.NewShared(p, srv.Addr(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	start := func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var wg sync.WaitGroup
		sessions := make([]simclient.Session, n)
		for i := range sessions {
			s, err := New(sh, i, &p.Flows[0], clientSrc)
			if err != nil {
				t.Fatal(err)
			}
			sessions[i] = s
			wg.Add(1)
			go func() { defer wg.Done(); s.Run(ctx, time.Now()) }()
		}
		return func() {
			cancel()
			for _, s := range sessions {
				s.Close()
			}
			wg.Wait()
		}
	}
	// Every join allowed, and a moment for its client to read the answer
	// and ack it.
	var joined time.Time
	parked := func() bool {
		if srv.Stats().PlayersJoined < uint64(n) {
			return false
		}
		if joined.IsZero() {
			joined = time.Now()
		}
		return time.Since(joined) > 200*time.Millisecond
	}
	return memfig.Parked(t, n, start, parked)
}

// TestScriptMemoryPerClient: a Leviathan session that played its
// handshake as a script keeps at most 1 KB of heap more than the same
// flow's built-in steps do (its captures and its catalog session, not an
// interpreter). It runs alone in a process of its own.
func TestScriptMemoryPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("500 and 1000 sessions")
	}
	if !alone.Run(t) {
		return
	}
	const n = 500
	heap := map[string]float64{}
	for _, tc := range memoryFlows {
		h, s := memfig.PerSession(n, func(n int) (float64, float64) { return parkedHeap(t, tc.steps, n) })
		heap[tc.name] = h
		t.Logf("%s: %.0f heap bytes, %.0f stack bytes per parked session", tc.name, h, s)
	}
	if d := heap["scripted"] - heap["built-in"]; d > 1024 {
		t.Errorf("a scripted session keeps %.0f heap bytes more than a built-in one, want at most 1024", d)
	}
}
