package tcpclient

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/alone"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/simclient"
)

// memoryFlows are one flow as built-in steps and as a script: log in,
// list the rooms, then wait for a game that never starts (the client is
// in no room), parked mid-flow with the player's hash captured.
var memoryFlows = []memfig.Flow{
	{Name: "built-in", Steps: `  - steps:
      - connect
      - list_rooms
      - wait_game_start: 60s
`},
	{Name: "scripted", Steps: `  - steps:
      - send: {message: CONNECT_REQ, fields: {playerName: "bot${client}"}}
      - expect: {message: CONNECT_ACK, where: "success", capture: {hash: playerHash}}
      - send: LIST_ROOMS_REQ
      - expect: LIST_ROOMS_ACK
      - expect: {message: GAME_START, within: 60s}
`},
}

// parkedHeap runs n sessions of flow against a reference lobby until
// every one has its room list and waits, and returns the heap and stack
// bytes they added, per session (memfig.Parked), the server's
// connections included (the same for both flows).
func parkedHeap(t *testing.T, flow string, n int) (heap, stack float64) {
	t.Helper()
	srv := startServer(t, func(c *tcpserver.Config) { c.MaxConnsPerIP = -1 })
	defer srv.Close() // the next measurement starts without this one's connections
	p := plan(t, "defaults: {timeout: 10s}", flow)
	sh, err := simclient.NewShared(p, srv.Addr(), metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	f, _ := simclient.Lookup("tcp-lobby")
	start := func() *memfig.Played {
		return memfig.Play(t, n, func(i int) (memfig.Session, error) { return f(sh, i, &p.Flows[0], netip.MustParseAddr("127.0.0.1")) })
	}
	// Every list answered, and a moment for its client to read it.
	parked := memfig.Settled(func() bool { return srv.Stats().FramesOut["LIST_ROOMS_ACK"] >= uint64(n) }, 200*time.Millisecond)
	return memfig.Parked(t, n, start, parked)
}

// TestScriptMemoryPerClient: a tcp-lobby session parked mid-flow in a
// script keeps at most 1 KB of heap more than the same flow's built-in
// steps do (each keeps its captures and its catalog session, not an
// interpreter). It runs alone in a process of its own.
func TestScriptMemoryPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("500 and 1000 sessions")
	}
	memfig.SkipUnderRace(t)
	if !alone.Run(t) {
		return
	}
	memfig.ScriptedKeepsAtMost(t, 1024, 500, "", memoryFlows, func(flow string, n int) (float64, float64) {
		return parkedHeap(t, flow, n)
	})
}
