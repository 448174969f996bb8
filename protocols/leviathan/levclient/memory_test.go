package levclient

import (
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
var memoryFlows = []memfig.Flow{
	{Name: "built-in", Steps: `      - connect: {name: bench}
      - join_server
      - think: 60s
`},
	{Name: "scripted", Steps: scriptedHandshake + `      - send: Request JoinServer
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
	start := func() *memfig.Played {
		return memfig.Play(t, n, func(i int) (memfig.Session, error) { return New(sh, i, &p.Flows[0], clientSrc) })
	}
	// Every join allowed, and a moment for its client to read the answer
	// and ack it.
	parked := memfig.Settled(func() bool { return srv.Stats().PlayersJoined >= uint64(n) }, 200*time.Millisecond)
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
	memfig.SkipUnderRace(t)
	if !alone.Run(t) {
		return
	}
	memfig.ScriptedKeepsAtMost(t, 1024, 500, "", memoryFlows, func(steps string, n int) (float64, float64) {
		return parkedHeap(t, steps, n)
	})
}
