package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/capacity"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/testkit/caplobby"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// cappedScenario is an open-model list_rooms poll of target, judged by
// its error rate (a lobby of known capacity drops what it cannot take).
func cappedScenario(t *testing.T, target netip.AddrPort) string {
	return writeScenario(t, fmt.Sprintf(`name: capped-poll
protocol: udp-lobby
target: %s
load:
  rate: 10/s
  duration: 2s
  max_clients: 1000
defaults:
  timeout: 1s
  retries: 0
flows:
  - name: poll
    steps:
      - list_rooms
thresholds:
  - errors.rate < 2%%
`, target))
}

// readCapacity reads a capacity document the command wrote.
func readCapacity(t *testing.T, path string) *result.Capacity {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c result.Capacity
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestCapacityWorkers: `capacity --workers 2` against a lobby of known
// capacity finds it within 10 %, every step played by the two workers
// (real processes of this binary) and judged on their merge.
func TestCapacityWorkers(t *testing.T) {
	// Not parallel: its verdict judges latency and errors at a load,
	// which other tests' load beside it would change.
	if testing.Short() {
		t.Skip("a real search, two processes a step")
	}
	// The workers are this test binary (TestMain sets asMainEnv).
	const R = 50.0
	lobby := &caplobby.Lobby{CapPerSec: R, Burst: 4} // two reachability checks at once
	js := filepath.Join(t.TempDir(), "c.json")
	// The server's capacity is the subject: a shared machine's send lag
	// is not judged (--lag-bound), and the lobby drops the watchdog's
	// probes with the rest (--watchdog 0).
	code, stdout, errs := runCLI(t, "capacity", "--workers", "2", "--step", "2s", "--warmup", "0s", "--grace", "500ms", "--start", "35",
		"--lag-bound", "10s", "--watchdog", "0", "--drain", "0s", "--json", js, cappedScenario(t, lobby.Start(t)))
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, errs)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	c := readCapacity(t, js)
	if c.Stop != result.StopPrecision || c.Sustainable < 0.9*R || c.Sustainable > 1.1*R {
		t.Errorf("stop %q, sustainable %v/s: want within 10%% of the server's %v/s", c.Stop, c.Sustainable, R)
	}
	for _, st := range c.Steps {
		if st.Workers != 2 || st.Run != nil {
			t.Errorf("%v/s: %d workers (run kept: %v), want 2 and no run (not a shard)", st.Load, st.Workers, st.Run != nil)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), "each step played by up to 2 local worker processes") || !strings.Contains(errs, "workers 2") {
		t.Errorf("the outputs do not say the workers played the steps")
	}
}

// TestCapacityWorkerStep: a worker plays exactly its share of the step's
// flat load (its schedule is the step plan's, split by shard), the
// workers aim at the step's embedded server, and the step's figures are
// the sum of the workers'.
func TestCapacityWorkerStep(t *testing.T) {
	t.Parallel()
	// The workers are this test binary (TestMain sets asMainEnv).
	sc := writeScenario(t, `name: flat
protocol: udp-lobby
load:
  stages:
    - {rate: 40/s, for: 1s}
    - {rate: 5/s, for: 1s}
  max_clients: 100
defaults: {timeout: 1s, retries: 0}
flows:
  - name: poll
    steps: [list_rooms]
thresholds:
  - errors.rate < 5%
`)
	plan, err := scenario.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	srv := startRefPart(t, "udp-lobby")
	run, done, err := capacityWorkers(plan, 2, 500*time.Millisecond, 0, "", sc)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	const load, hold = 30, 1500 * time.Millisecond
	step := capacity.StepPlan(plan, load, hold)
	res, err := run(context.Background(), engine.Config{Plan: step, EmbeddedAt: srv.Addr("udp-lobby"), Grace: 500 * time.Millisecond, Watchdog: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine.Workers != 2 || len(res.WorkerRuns) != 2 {
		t.Fatalf("%d workers, %d results", res.Engine.Workers, len(res.WorkerRuns))
	}
	// The step plan's schedule, arrival k owned by shard k mod 2 (one
	// flow, groups of one).
	var owned [2]int64
	sched := step.Load.Schedule(step.Seed)
	for k := 0; ; k++ {
		if _, ok := sched.Next(); !ok {
			break
		}
		owned[k%2]++
	}
	if owned[0]+owned[1] != load*1.5 {
		t.Fatalf("the step plan schedules %d arrivals, want a flat %d/s for %v", owned[0]+owned[1], load, hold)
	}
	var sum int64
	for _, w := range res.WorkerRuns {
		i := int(w.ShardRuns[0].Shard[0] - '0')
		s := w.Sessions
		if got := s.Started + s.DroppedNoSlot + s.DroppedLate; got != owned[i] || w.ShardRuns[0].Shard != fmt.Sprintf("%d/2", i) {
			t.Errorf("worker %s: %d arrivals (%d started), want its share %d", w.ShardRuns[0].Shard, got, s.Started, owned[i])
		}
		sum += w.After(0).Requests
	}
	j := capacity.DefaultJudgement
	j.Warmup, j.Workers, j.Embedded, j.LagBound = 0, true, true, 10*time.Second
	st := j.Judge(res.Run, load, res.WorkerRuns...)
	if st.Requests == 0 || st.Requests != sum || st.Verdict != result.CapPass {
		t.Errorf("step: %d requests (%s %s), want the workers' sum %d and a pass", st.Requests, st.Verdict, st.Why, sum)
	}
	if n := refserver.PartStats[refudp.Stats](srv.Stats(), "udp-lobby").Requests["LOBBY_LIST_ROOMS"]; n < uint64(sum) {
		t.Errorf("the step's server answered %d LOBBY_LIST_ROOMS, the workers made %d requests: they did not aim at it", n, sum)
	}
}

// TestCapacityWorkersOwnedAborts: with --workers, the workers see only
// that the address stopped answering; the server started by --target-cmd
// aborting is still said as its end in words (exited: killed by SIGABRT),
// first, with exit 7.
func TestCapacityWorkersOwnedAborts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a real search, two processes a step")
	}
	// The workers are this test binary (TestMain sets asMainEnv). The
	// server aborts 2.5 s after it starts: after the workers' checks
	// (slow to start under -race on a busy machine: with 1 s they found it
	// gone, and no step ran), within the step.
	addr := freeUDPPort(t)
	js := filepath.Join(t.TempDir(), "c.json")
	code, stdout, errs := runCLI(t, "capacity", "--workers", "2", "--step", "3s", "--warmup", "0s", "--grace", "300ms", "--start", "20",
		"--lag-bound", "10s", "--watchdog", "50ms", "--drain", "0s", "--json", js,
		"--target-cmd", serveCmd(t, addr, abortEnv+"=2500ms"), ownedScenario(t, addr, "2s"))
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, errs)
	if code != exitTargetDown {
		t.Fatalf("exit %d, want %d", code, exitTargetDown)
	}
	c := readCapacity(t, js)
	if h := c.Headline().Text; !strings.HasPrefix(h, "TARGET DOWN · ") || !strings.Contains(h, "exited: killed by SIGABRT") {
		t.Errorf("headline %q: want TARGET DOWN first, with how the server ended", h)
	}
	if first := strings.SplitN(stdout, "\n", 2)[0]; !strings.HasPrefix(first, "TARGET DOWN · ") {
		t.Errorf("stdout's first line %q", first)
	}
}
