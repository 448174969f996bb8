package udpclient

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/lobbybench/lobbybench/internal/testkit/alone"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/simclient"
)

// memoryFlows are one flow as built-in steps and as a script: create a
// room, join it and its instance, then wait for a game that never starts
// (nobody is ready), parked mid-flow with the room captured.
var memoryFlows = []memfig.Flow{
	{Name: "built-in", Steps: `  - steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - wait_game_start: 60s
`},
	{Name: "scripted", Steps: `  - steps:
` + joinScript + `      - expect: {message: SERVER_GAME_START, within: 60s}
`},
}

// joinScript is the script of create_room, join: {room: created}, hello
// and instance_join, steps of a flow (room: the room created).
const joinScript = `      - send: LOBBY_CREATE_ROOM
      - expect: {message: LOBBY_ROOM_CREATED, where: "roomId > 0", capture: {room: roomId}}
      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}
      - expect: LOBBY_JOIN_SUCCESS
      - send: CLIENT_HELLO
      - expect: SERVER_HELLO
      - send: CLIENT_JOIN_REQUEST
      - expect: SERVER_JOIN_ACCEPT
`

// parkedHeap runs n sessions of flow against a reference lobby until
// every one has joined its instance and waits, and returns the heap bytes
// and the goroutine stack bytes they added, per session (memfig.Parked).
// The reference server's rooms are in the heap figure too, the same for
// both flows.
func parkedHeap(t *testing.T, flow string, n int) (heap, stack float64) {
	t.Helper()
	srv := referenceServer(t, func(c *udpserver.Config) {
		c.MaxInstances, c.MaxRoomsPerIP, c.MaxHoldsPerIP = n, 0, 0
	})
	// Closed after the sessions: the next measurement starts without
	// this one's rooms (the server would keep them until the test ends).
	defer srv.Close()
	p := plan(t, "defaults: {timeout: 10s}", flow)
	sh, err := simclient.NewShared(p, srv.Addr(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	f, _ := simclient.Lookup("udp-lobby")
	start := func() *memfig.Played {
		return memfig.Play(t, n, func(i int) (memfig.Session, error) { return f(sh, i, &p.Flows[0], clientSrc) })
	}
	return memfig.Parked(t, n, start, func() bool { return srv.Stats().Players >= n })
}

// TestScriptMemoryPerClient: a session parked mid-flow in a script keeps
// at most 1 KB of heap more than the same flow's built-in steps do (the
// script's program is shared by every session: each keeps its captures,
// not an interpreter). It runs alone in a process of its own.
func TestScriptMemoryPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("500 and 1000 sessions")
	}
	memfig.SkipUnderRace(t)
	if !alone.Run(t) {
		return
	}
	memfig.ScriptedKeepsAtMost(t, 1024, 500, " (its room in the server included)", memoryFlows, func(flow string, n int) (float64, float64) {
		return parkedHeap(t, flow, n)
	})
}

// waitFlows are one request a silent lobby never answers, as a built-in
// step and as a script.
var waitFlows = []struct{ name, flow string }{
	{"built-in", "  - steps: [create_room]\n"},
	{"scripted", "  - steps: [{send: LOBBY_CREATE_ROOM}, {expect: LOBBY_ROOM_CREATED}]\n"},
}

// TestScriptWaitMemory: from simclient.SuspendWaitsFrom clients a session
// waiting for a reply gives up its goroutine (Base.Await), a script's
// expect as a built-in request's wait: with that many sessions waiting,
// few goroutines are left (none but those still on their way to their
// wait), and a scripted session keeps at most 1 KB of heap more than a
// built-in one.
func TestScriptWaitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("2 × 2000 sessions")
	}
	memfig.SkipUnderRace(t)
	if !alone.Run(t) {
		return
	}
	const n = simclient.SuspendWaitsFrom
	heap := map[string]float64{}
	for _, tc := range waitFlows {
		w := waitingMemory(t, tc.flow, n, n/20)
		heap[tc.name] = w.heap
		t.Logf("%s: %.0f heap bytes per waiting session, %d goroutines left, %.2f suspended", tc.name, w.heap, w.goroutines, w.suspended)
		if w.goroutines >= n/20 || w.suspended != 1 {
			t.Errorf("%s: %d goroutines left of %d sessions waiting, %.2f of them suspended: want under %d, all", tc.name, w.goroutines, n, w.suspended, n/20)
		}
	}
	if d := heap["scripted"] - heap["built-in"]; d > 1024 {
		t.Errorf("a scripted session waiting keeps %.0f heap bytes more than a built-in one, want at most 1024", d)
	}
}

// BenchmarkScriptWaitMemory: from simclient.SuspendWaitsFrom clients a
// session waiting for a reply gives up its goroutine (Base.Await), a
// script's expect too. Each round, n sessions of each flow send one
// request to a lobby that never answers; reported are the stack and heap
// bytes their waits keep per session and how many suspended.
func BenchmarkScriptWaitMemory(b *testing.B) {
	for _, tc := range waitFlows {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				w := waitingMemory(b, tc.flow, 1000, 1000)
				b.ReportMetric(w.stack, "stack-B/client")
				b.ReportMetric(w.heap, "heap-B/client")
				b.ReportMetric(w.suspended, "suspended/client")
			}
		})
	}
}

// waiting is what n sessions waiting keep: stack and heap bytes per
// session, the goroutines they hold, and the share that suspended.
type waiting struct {
	stack, heap, suspended float64
	goroutines             int
}

// waitingMemory runs n sessions of flow, whose first request a silent
// lobby never answers, with waits that may suspend, and returns what they
// keep once every request has come and fewer than most goroutines are
// left (waiting up to 10 s for them to go: a session's goroutine ends
// once it suspended).
func waitingMemory(tb testing.TB, flow string, n, most int) waiting {
	silent, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	defer silent.Close()
	silent.SetReadBuffer(8 << 20)
	came := make(chan error, 1)
	go func() { // counts the requests, never answers
		buf := make([]byte, 2048)
		silent.SetReadDeadline(time.Now().Add(time.Minute))
		for got := 0; got < n; got++ {
			if _, err := silent.Read(buf); err != nil {
				came <- fmt.Errorf("%d of %d requests came: %v", got, n, err)
				return
			}
		}
		came <- nil
	}()
	p := plan(tb, "defaults: {timeout: 60s, retries: 1}", flow)
	sh, err := simclient.NewShared(p, silent.LocalAddr().(*net.UDPAddr).AddrPort(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		tb.Fatal(err)
	}
	defer sh.Close()
	sh.Suspend, sh.SuspendWaits = true, true
	f, _ := simclient.Lookup("udp-lobby")
	ctx, cancel := context.WithCancel(context.Background())
	var before, after runtime.MemStats
	memfig.Settle()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	var wg sync.WaitGroup
	var susp atomic.Int64
	sessions := make([]simclient.Session, n)
	defer func() {
		cancel()
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
		wg.Wait()
	}()
	for i := range sessions {
		if sessions[i], err = f(sh, i, &p.Flows[0], clientSrc); err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sessions[i].Run(ctx, time.Now()) == simclient.ErrSuspended {
				susp.Add(1)
			}
		}()
	}
	if err := <-came; err != nil { // every request sent
		tb.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); runtime.NumGoroutine()-goroutines >= most && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	memfig.Settle()
	runtime.ReadMemStats(&after)
	return waiting{
		stack:      float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(n),
		heap:       float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n),
		suspended:  float64(susp.Load()) / float64(n),
		goroutines: max(runtime.NumGoroutine()-goroutines, 0),
	}
}

// TestClientSizes: a client's session and transport, one each per client
// (a quarter of a million with virtual flows), stay in the allocator's
// 576- and 192-byte size classes. They took the 1,024- and 288-byte
// classes: their waits' deadlines and send stamps are now 8-byte instants
// (internal/instant), not 24-byte time.Times, the pending request's too;
// the lobby's address is the run's; the copy of the last instance event
// is made only where the impairment can repeat one, and the room lists
// only where a client lists rooms; a decoded reply is on the stack of the
// function that reads it (handle), not kept; the transport's virtual flow is its
// socket (transport.flow); small counts are int32s, and the flags of both,
// and of simclient.Base, take no padding.
func TestClientSizes(t *testing.T) {
	for _, c := range []struct {
		what      string
		size, max uintptr
	}{
		{"session", unsafe.Sizeof(session{}), 576},
		{"transport", unsafe.Sizeof(transport{}), 192},
	} {
		if c.size > c.max {
			t.Errorf("a %s is %d bytes, over the %d-byte size class", c.what, c.size, c.max)
		}
	}
}
