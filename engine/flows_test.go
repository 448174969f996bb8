package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/samerun"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestVirtualFlowsSameVerdicts plays full-match-udp (lobby, then the
// instance handshake on the port the lobby returned: replies from another
// port of the target) and leviathan-join (the handshake, Leviathan's
// resends and acks) against the embedded server with a socket per client
// and with virtual flows, and requires the same run: the same steps with
// requests within timing's slack, the same failures, violations by rule
// and threshold verdicts, kernel receive stamps ending the latencies
// ways where they do with sockets, and the harness section saying which
// mode ran.
func TestVirtualFlowsSameVerdicts(t *testing.T) {
	if err := vflow.Available(); err != nil {
		t.Skipf("virtual flows unavailable here: %v", err)
	}
	waitsInParallel(t) // light runs against their own embedded servers; counts, not figures
	for _, name := range []string{"full-match-udp", "leviathan-join"} {
		t.Run(name, func(t *testing.T) {
			runs := map[scenario.FlowsMode]*Result{}
			for _, mode := range []scenario.FlowsMode{scenario.FlowsSockets, scenario.FlowsVirtual} {
				runs[mode] = playFlows(t, name, mode)
			}
			s, v := runs[scenario.FlowsSockets], runs[scenario.FlowsVirtual]
			samerun.Compare(t, "with sockets", s.Run, "on virtual flows", v.Run)
			// Where latencies end: the same both ways; every udp-lobby
			// reply's at its kernel stamp (Leviathan's: mixed, some of its
			// steps end where the engine handed the event over).
			if a, b := s.Engine.Harness.LatencyEnd, v.Engine.Harness.LatencyEnd; a != b || name == "full-match-udp" && a != result.LatencyEndKernel {
				t.Errorf("latencies end at %q with sockets, %q with virtual flows", a, b)
			}
			if v.Totals.Successes == 0 {
				t.Error("the virtual run had no successful request")
			}
		})
	}
}

// playFlows plays example scenario name for 2 s in flows mode against the
// embedded server, with its CI thresholds (ciThresholds).
func playFlows(t *testing.T, name string, mode scenario.FlowsMode) *Result {
	t.Helper()
	plan, err := scenario.Load(filepath.Join("..", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Apply(scenario.Overrides{Duration: 2 * time.Second, Flows: mode}); err != nil {
		t.Fatal(err)
	}
	plan.Embedded.CountdownInterval = 100 * time.Millisecond // matches start within the short run
	plan.Thresholds, _ = ciThresholds(plan.Thresholds, raceOn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{Plan: plan})
	if err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	if got := res.Engine.Harness.Flows; got != string(mode) {
		t.Errorf("%s run: harness flows %q", mode, got)
	}
	return res
}
