package udpclient

import (
	"context"
	"testing"
	"time"

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
	if a := s.LocalAddr(); !vflow.DefaultAddrs.Contains(a.Addr()) {
		t.Errorf("session address %s, want a flow of %s", a, vflow.DefaultAddrs)
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
