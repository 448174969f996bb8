package engine

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
)

// createsRooms reports whether a flow of plan creates UDP lobby rooms
// (which hold game instances until the embedded server's cleanup removes
// them). The TCP lobby's games also take UDP instances, but when those are
// freed is not checked here: full-match-tcp uses ~10 of 100 in its run.
func createsRooms(plan *scenario.Plan) bool {
	if plan.Protocol != udpwire.ProtocolName { // a TCP lobby room is not a game instance
		return false
	}
	for _, f := range plan.Flows {
		for _, st := range f.Steps {
			if st.CreatesRoom() {
				return true
			}
		}
	}
	return false
}

// exampleDuration is how long each example scenario runs in
// TestExampleScenarios under the race detector (a smoke run: the flows, the
// embedded server and the non-latency thresholds, not the figures).
const exampleDuration = 2 * time.Second

// cleanupsInCI is how many of its embedded server's cleanup intervals an
// example that creates rooms runs in TestExampleScenarios (without the race
// detector, and at most its full length): a room is held, emptied, then
// removed one to two intervals later, so five see rooms recycled.
const cleanupsInCI = 5

// ciThresholds keeps the thresholds of an example that hold on any machine
// in a short run: error rates, upper bounds on counts (violations == 0,
// errors == 0, dropped_starts == 0) and rate-probe limits. Latency limits
// are dropped (a loaded CI machine is not the reference machine), and so are
// lower bounds on counts and throughput, which scale with the duration.
// Under the race detector, which slows the harness several times over, the
// generator rather than the server is the bottleneck: dropped starts and a
// rate probe's limit then measure the detector, so they are dropped too.
func ciThresholds(ts []scenario.Threshold, race bool) (keep, dropped []scenario.Threshold) {
	for _, th := range ts {
		ok := false
		switch th.Unit {
		case scenario.Ratio:
			ok = true
		case scenario.Count:
			ok = (th.Op == "==" || th.Op == "<" || th.Op == "<=") && !(race && th.Metric == "dropped_starts")
		case scenario.Rate:
			ok = strings.HasSuffix(th.Metric, ".limit") && !race
		}
		if ok {
			keep = append(keep, th)
		} else {
			dropped = append(dropped, th)
		}
	}
	return keep, dropped
}

// TestExampleScenarios runs every example in scenarios/ against the
// embedded reference server, as `lobbybench run --duration D` would, and
// requires a clean run: no error, no protocol violation, every CI-safe
// threshold of the file passing. D is exampleDuration, except that an
// example that creates rooms runs cleanupsInCI of its embedded server's
// cleanup intervals (at most its full length) and must see the server
// remove an instance: rooms are recycled within the run, so a pool that
// fills up (as soak's did with the 30 s default) fails here. Under the
// race detector each runs for exampleDuration only, with a fast countdown.
//
// The examples whose CI thresholds read the harness's own pace (dropped
// starts, a rate probe's limit: loadSensitive) run in
// TestExampleScenariosAlone; the rest here, side by side (their runs are
// light and their thresholds error rates and counts), and beside the
// package's other waiting tests. Under the race detector, which slows
// everything several times over, they run one after another.
func TestExampleScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example scenario (~40 s; ~25 s under -race)")
	}
	waitsInParallel(t)
	var light []example
	for _, ex := range examples(t) {
		if !loadSensitive(ex.plan) {
			light = append(light, ex)
		}
	}
	// The longest first, exampleSlots at a time, each a subtest run from
	// a goroutine of this test: parallel subtests would queue behind
	// every other parallel test of the package, and soak's 25 s began
	// 14 s late. Under the race detector, one at a time.
	slices.SortStableFunc(light, func(a, b example) int { return cmp.Compare(exampleLength(b.plan), exampleLength(a.plan)) })
	slots := make(chan struct{}, exampleSlots)
	if raceOn {
		slots = make(chan struct{}, 1)
	}
	var wg sync.WaitGroup
	for _, ex := range light {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			t.Run(ex.name, func(t *testing.T) { runExample(t, ex.name, ex.plan) })
		}()
	}
	wg.Wait()
}

// exampleSlots is how many light examples TestExampleScenarios runs at
// once.
const exampleSlots = 4

// exampleLength is how long runExample plays plan outside the race
// detector (its order only matters). A scenario that sets its embedded
// server's seat hold leaves seats untaken on purpose: an instance is
// emptied only once that hold is over, so it counts before the cleanups
// (scripted-udp's 2.5 s run, 1 s of it the hold, once ended before its
// first instance was removed, on a loaded machine).
func exampleLength(plan *scenario.Plan) time.Duration {
	d := exampleDuration
	if createsRooms(plan) {
		d = min(max(d, plan.Embedded.SeatHold+cleanupsInCI*embeddedCleanup(plan)), plan.Load.Duration)
	}
	return d
}

// embeddedCleanup is the room cleanup interval of plan's embedded server.
func embeddedCleanup(plan *scenario.Plan) time.Duration {
	if c := plan.Embedded.CleanupInterval; c != 0 {
		return c
	}
	return udpserver.DefaultConfig().CleanupInterval
}

// TestExampleScenariosAlone runs the load-sensitive examples one after
// another, before and apart from the package's parallel tests: a
// dropped_starts == 0 or a probe's limit holds on a loaded machine only
// when nothing else of the package's runs beside it.
func TestExampleScenariosAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the load-sensitive example scenarios (~15 s)")
	}
	n := 0
	for _, ex := range examples(t) {
		if loadSensitive(ex.plan) {
			n++
			t.Run(ex.name, func(t *testing.T) { runExample(t, ex.name, ex.plan) })
		}
	}
	if n == 0 {
		t.Fatal("no example has a load-sensitive threshold: the split has nothing to keep apart")
	}
}

type example struct {
	name string
	plan *scenario.Plan
}

// examples loads every example in scenarios/.
func examples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 {
		t.Fatalf("found %d example scenarios, want at least 9: %v", len(files), files)
	}
	var exs []example
	for _, f := range files {
		plan, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		exs = append(exs, example{strings.TrimSuffix(filepath.Base(f), ".yaml"), plan})
	}
	return exs
}

// loadSensitive reports whether one of plan's CI-safe thresholds (outside
// the race detector) reads the harness's own pace: dropped starts, or a
// rate probe's limit.
func loadSensitive(plan *scenario.Plan) bool {
	keep, _ := ciThresholds(plan.Thresholds, false)
	for _, th := range keep {
		if th.Metric == "dropped_starts" || strings.HasSuffix(th.Metric, ".limit") {
			return true
		}
	}
	return false
}

// runExample runs one example as TestExampleScenarios says.
func runExample(t *testing.T, name string, plan *scenario.Plan) {
	if plan.Target != "" {
		t.Fatalf("example %s names a target (%s): examples must run against the embedded server", name, plan.Target)
	}
	d := exampleDuration
	if createsRooms(plan) && !raceOn {
		if cleanup := embeddedCleanup(plan); cleanup > 10*time.Second {
			t.Errorf("example %s creates rooms with the embedded server's cleanup every %v: set embedded_server.cleanup_interval (at most 10s) so CI sees rooms recycled within %d intervals", name, cleanup, cleanupsInCI)
		}
		d = exampleLength(plan)
	}
	for i := range plan.Flows {
		for j := range plan.Flows[i].Steps {
			st := &plan.Flows[i].Steps[j]
			if st.Kind == scenario.RateProbe && st.Probe.Over > d {
				// The whole ramp, compressed, so the probe finds the limit.
				st.Probe.Over = d
				d += time.Second // and the last window is answered
			}
		}
	}
	if err := plan.Apply(scenario.Overrides{Duration: d}); err != nil {
		t.Fatal(err)
	}
	// Matches wait for a 3-tick countdown: in a smoke run, tick
	// faster so the short run's matches start within it.
	if raceOn && (plan.Embedded.CountdownInterval == 0 || plan.Embedded.CountdownInterval > 100*time.Millisecond) {
		plan.Embedded.CountdownInterval = 100 * time.Millisecond
	}
	var dropped []scenario.Threshold
	plan.Thresholds, dropped = ciThresholds(plan.Thresholds, raceOn)
	if len(plan.Thresholds) == 0 {
		t.Fatalf("no CI-safe threshold left of %d", len(dropped))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := Run(ctx, Config{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	if res.Engine.Interrupted {
		t.Error("the run was interrupted")
	}
	var viol int64
	for _, v := range res.Violations {
		viol += v.Count
		t.Errorf("violation %s ×%d", v.Rule, v.Count)
	}
	s := res.Engine.Sessions
	if s.Started == 0 || s.Completed+s.Aborted == 0 {
		t.Errorf("sessions %+v: nothing ran", s)
	}
	for _, r := range res.Thresholds {
		if !r.Pass {
			t.Errorf("threshold %q failed: observed %v", r.Name, r.Observed)
		} else {
			t.Logf("threshold %q: observed %v", r.Name, r.Observed)
		}
	}
	if createsRooms(plan) && !raceOn {
		// The pool was recycled: the run passed a cleanup.
		if sv := res.Engine.Server; sv == nil || udpserver.StatsOf(sv.Stats) == nil || udpserver.StatsOf(sv.Stats).InstancesClosed == 0 {
			t.Errorf("no game instance was cleaned up in %v: the run never passed a cleanup interval", d)
		}
	}
	// How long the run took past its duration is logged, not
	// asserted: a wall-clock figure a loaded machine breaks.
	t.Logf("%v: %d requests, %.2f%% errors, sessions %d started %d completed %d failed %d cut; %d CI thresholds (dropped %d machine-dependent ones: latency, count floors, and under -race dropped starts and probe limits)",
		took.Round(time.Millisecond), res.Totals.Requests, 100*res.Totals.ErrorRate(), s.Started, s.Completed, s.Failed, s.Aborted,
		len(plan.Thresholds), len(dropped))
}
