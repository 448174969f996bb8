package udpclient

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// testFlowsModes are the flows modes a test plays its sessions in: sockets,
// and virtual flows where this machine allows them (the reason logged
// where not).
func testFlowsModes(t *testing.T) []scenario.FlowsMode {
	t.Helper()
	if err := vflow.Available(); err != nil {
		t.Logf("virtual flows unavailable here, sockets only: %v", err)
		return []scenario.FlowsMode{scenario.FlowsSockets}
	}
	return []scenario.FlowsMode{scenario.FlowsSockets, scenario.FlowsVirtual}
}

// TestSessionTakesVirtualFlow: in a run with virtual flows a session's
// address is a flow of the range, not a socket's, it polls nothing
// (precise mode needs a descriptor), its replies carry kernel receive
// stamps, and its flow is given back when it closes.
func TestSessionTakesVirtualFlow(t *testing.T) {
	if err := vflow.Available(); err != nil {
		t.Skipf("virtual flows unavailable here: %v", err)
	}
	f := newFakeLobby(t, udpwire.ProfileSpec, func(*fakeLobby) {})
	p := plan(t, "flows_mode: virtual", "  - steps:\n      - list_rooms\n")
	sh, err := simclient.NewShared(p, f.addr(), metrics.NewCollector(time.Now()), simclient.Options{Precise: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if sh.Flows == nil || sh.FlowsMode() != scenario.FlowsVirtual {
		t.Fatalf("flows_mode virtual: hub %v, mode %q", sh.Flows, sh.FlowsMode())
	}
	ss, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	s := ss.(*session)
	if a, r := s.LocalAddr(), sh.Flows.Config().Addrs; !r.Contains(a.Addr()) {
		t.Errorf("session address %s, want a flow of %s", a, r)
	}
	if s.tr.window != 0 || s.tr.waitFD() != -1 {
		t.Errorf("a virtual flow polls for %v and waits on descriptor %d", s.tr.window, s.tr.waitFD())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Run(ctx, time.Now()); err != nil {
		t.Fatalf("session: %v", err)
	}
	if got := sh.LatencyEnd(); got != result.LatencyEndKernel {
		t.Errorf("latencies end at %q, want %q", got, result.LatencyEndKernel)
	}
	// The request went through the hub's batched send, and its send stamp
	// is the flusher's (wall clock only), not the one taken when queued.
	if s.p.sent.Time().UnixNano() != s.sentNS.Load() {
		t.Errorf("send stamp %v (cell %d): not the flusher's", s.p.sent, s.sentNS.Load())
	}
	first := s.LocalAddr()
	_ = s.Close()
	next, err := sh.Flows.Conn()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if next.AddrPort() == first {
		t.Errorf("flow %s given out again at once, before the unused ones", first)
	}
}

// TestVirtualWaitHoldsNoScratch: clients waiting for a reply on virtual
// flows hold no 64 KiB read buffer each (readNet waits before it takes
// one), as socket clients on raw reads do not.
func TestVirtualWaitHoldsNoScratch(t *testing.T) {
	if err := vflow.Available(); err != nil {
		t.Skipf("virtual flows unavailable here: %v", err)
	}
	const n = 500
	h, err := vflow.OpenHub(vflow.Config{}, n)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sw := simclient.NewSweeper(time.Second)
	defer sw.Stop()
	trs := make([]*transport, n)
	for i := range trs {
		trs[i] = new(transport)
		if err := trs[i].openFlow(h, sw); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	memfig.Settle()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var waiting atomic.Int64
	for _, tr := range trs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			waiting.Add(1)
			_, _, _ = tr.readNet() // ends when the flow closes
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); waiting.Load() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // into their waits (a wait past this only lowers the figure)
	memfig.Settle()
	runtime.ReadMemStats(&after)
	for _, tr := range trs {
		_ = tr.c.Close()
	}
	wg.Wait()
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d heap bytes per waiting client", per)
	if per > rxbuf.Size/4 {
		t.Errorf("a waiting client holds %d heap bytes: a %d-byte scratch each", per, rxbuf.Size)
	}
}

// TestQueuedSent: a request's send stamp is the flusher's once it replaced
// the one taken when the datagram was queued, and the queued one until
// then (or through a socket, where the cell holds the same).
func TestQueuedSent(t *testing.T) {
	queued := instant.Now()
	ns := queued.Time().UnixNano()
	for _, tc := range []struct {
		name string
		cell int64
		want time.Time
	}{
		{"not flushed yet, or a socket", ns, queued.Time()},
		{"flushed", ns + 1500, time.Unix(0, ns+1500)},
		{"a stale cell", ns - 1, queued.Time()},
	} {
		var cell atomic.Int64
		cell.Store(tc.cell)
		if got := queuedSent(queued, &cell); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
