package engine

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestRunLatencyEnd: the run's harness says where its latencies end, as
// its clients' sockets told the shared state; nothing when none told.
func TestRunLatencyEnd(t *testing.T) {
	waitsInParallel(t)
	for _, tc := range []struct {
		name   string
		kernel func(id int) *bool // nil: the session says nothing
		want   string
	}{
		{"silent", func(int) *bool { return nil }, ""},
		{"stamped", func(int) *bool { v := true; return &v }, result.LatencyEndKernel},
		{"refused", func(int) *bool { v := false; return &v }, result.LatencyEndUser},
		{"some refused", func(id int) *bool { v := id%2 == 0; return &v }, result.LatencyEndMixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitsInParallel(t)
			inner := fakeFactory(time.Millisecond)
			f := func(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
				if k := tc.kernel(id); k != nil {
					sh.ReceiveStamps(*k)
				}
				return inner(sh, id, flow, src)
			}
			res, err := Run(context.Background(), Config{Plan: mustPlan(t, fakeYAML), Factory: f})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Engine.Harness.LatencyEnd; got != tc.want {
				t.Errorf("harness latency_end = %q, want %q", got, tc.want)
			}
		})
	}
}
