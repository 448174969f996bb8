package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/testkit/samerun"
	"github.com/lobbybench/lobbybench/internal/vflow"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

const workersRun = `
name: workers
protocol: udp-lobby
load: {model: closed, clients: 6, duration: DURATION}
flows:
  - name: poll
    steps: [list_rooms, {think: 50ms}]
thresholds:
  - list_rooms.count > 0
  - sessions.failed == 0
`

// workersDoc is what a --workers test reads of the merged JSON.
type workersDoc struct {
	result.Run
	Engine engine.Info `json:"engine"`
}

// runWorkersCmd runs `lobbybench run --workers ...` as a real process (its
// workers are real processes of the same binary) and returns its exit
// code, stderr and merged result.
func runWorkersCmd(t *testing.T, env []string, interruptAfter time.Duration, args ...string) (int, string, *workersDoc, string) {
	t.Helper()
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	cmd := lobbybenchCmd(t, env, append([]string{"run", "--json", jsonPath}, args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if interruptAfter > 0 {
		time.AfterFunc(interruptAfter, func() { cmd.Process.Signal(syscall.SIGINT) })
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	cmd.Wait()
	var doc *workersDoc
	if b, err := os.ReadFile(jsonPath); err == nil {
		doc = &workersDoc{}
		if err := json.Unmarshal(b, doc); err != nil {
			t.Fatalf("merged JSON: %v", err)
		}
	}
	return cmd.ProcessState.ExitCode(), errb.String(), doc, dir
}

// TestRunWorkers: --workers 2 runs two shard processes against the
// parent's embedded server and writes one merged result (each shard's
// kept beside it) whose session counts add up and whose thresholds were
// evaluated on the merge.
func TestRunWorkers(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, strings.Replace(workersRun, "DURATION", "500ms", 1))
	code, errs, doc, dir := runWorkersCmd(t, nil, 0, "--workers", "2", "--quiet", sc)
	if code != exitOK || doc == nil {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, errs)
	}
	if doc.Shards != 2 || doc.Engine.Workers != 2 || len(doc.ShardRuns) != 2 || doc.Sessions == nil {
		t.Fatalf("merged: %d shards, %d workers, %d shard runs", doc.Shards, doc.Engine.Workers, len(doc.ShardRuns))
	}
	var started int64
	for i, sr := range doc.ShardRuns {
		started += sr.Sessions.Started
		p := filepath.Join(dir, "r.shard-"+sr.Shard[:1]+"-of-2.json")
		if _, err := os.Stat(p); err != nil || sr.Shard != []string{"0/2", "1/2"}[i] {
			t.Errorf("shard run %d (%s): result beside the merge: %v", i, sr.Shard, err)
		}
	}
	if started == 0 || doc.Sessions.Started != started || doc.Engine.Sessions.Started != started {
		t.Errorf("merged sessions %d (engine %d), shards' sum %d", doc.Sessions.Started, doc.Engine.Sessions.Started, started)
	}
	// The scenario's two and the default gates, carried by the workers
	// and judged again on the merge.
	if len(doc.Thresholds) != 4 || !doc.Thresholds[2].Default || !doc.Thresholds[3].Default || !doc.Thresholds[0].Pass || doc.Thresholds[0].Observed != float64(doc.Steps[0].Requests) {
		t.Errorf("thresholds %+v: want list_rooms.count judged on the merged count %d", doc.Thresholds, doc.Steps[0].Requests)
	}
	if !doc.Engine.Embedded || doc.Engine.Server == nil || refudp.StatsOf(doc.Engine.Server.Stats).Requests["LOBBY_LIST_ROOMS"] < uint64(doc.Steps[0].Requests) {
		t.Errorf("the parent's embedded server did not serve the workers: %+v", doc.Engine.Server)
	}
}

// TestRunWorkersVirtual: with --workers 2 --flows virtual each worker
// process plays its share on a virtual range of its own (two processes
// on one machine take disjoint blocks: they used to be refused, when
// every worker would have steered the same one), every request is
// answered, and the merge and every shard say virtual.
func TestRunWorkersVirtual(t *testing.T) {
	t.Parallel()
	if err := vflow.Available(); err != nil {
		t.Skipf("virtual flows cannot run on this machine: %v", err)
	}
	sc := writeScenario(t, strings.Replace(workersRun, "DURATION", "500ms", 1))
	code, errs, doc, _ := runWorkersCmd(t, nil, 0, "--workers", "2", "--flows", "virtual", "--quiet", sc)
	if code != exitOK || doc == nil {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, errs)
	}
	if doc.Engine.Harness.Flows != string(scenario.FlowsVirtual) || len(doc.ShardRuns) != 2 {
		t.Fatalf("merged harness flows %q over %d shard runs, want virtual over 2", doc.Engine.Harness.Flows, len(doc.ShardRuns))
	}
	for _, sr := range doc.ShardRuns {
		if sr.Harness.Flows != string(scenario.FlowsVirtual) || sr.Sessions.Started == 0 {
			t.Errorf("shard %s: flows %q, sessions %+v", sr.Shard, sr.Harness.Flows, sr.Sessions)
		}
	}
	if doc.Totals.Requests == 0 || doc.Totals.Failures != 0 {
		t.Errorf("%d requests, %d failed: want some, none failed", doc.Totals.Requests, doc.Totals.Failures)
	}
}

// TestRunWorkersDeath: a worker that dies is named with its stderr tail,
// the merged result of the others says it is incomplete, and the exit is
// 6.
func TestRunWorkersDeath(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, strings.Replace(workersRun, "DURATION", "500ms", 1))
	md := filepath.Join(t.TempDir(), "r.md")
	code, errs, doc, _ := runWorkersCmd(t, []string{dieEnv + "=1/2"}, 0, "--workers", "2", "--quiet", "--markdown", md, sc)
	if code != exitIncomplete || !strings.Contains(errs, "worker 1/2 died") || !strings.Contains(errs, "worker exploding on purpose") {
		t.Errorf("exit %d, want %d, naming the dead worker and its stderr; stderr:\n%s", code, exitIncomplete, errs)
	}
	if doc == nil || len(doc.Incomplete) != 1 || doc.Shards != 1 || !strings.Contains(doc.Incomplete[0], "exploding") {
		t.Errorf("merged result: %+v", doc)
	}
	// The Markdown of the merged result leads with INCOMPLETE, whatever
	// the thresholds said of the surviving shard.
	b, err := os.ReadFile(md)
	if first, _, _ := strings.Cut(string(b), "\n"); err != nil || !strings.HasPrefix(first, "**INCOMPLETE · the load was not all generated (1 worker left no result)") {
		t.Errorf("Markdown (%v): first line %q", err, first)
	}
	if !strings.Contains(string(b), "- INCOMPLETE: worker 1/2 died") {
		t.Errorf("Markdown does not name the dead worker:\n%s", b)
	}
}

// TestRunWorkersInterrupt: Ctrl-C on the parent stops every worker, and
// the merged result is still written, marked interrupted (exit 5).
func TestRunWorkersInterrupt(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, strings.Replace(workersRun, "DURATION", "1h", 1))
	// Ctrl-C a second after the run's start instant, given: interrupted
	// 1.5 s after launch, a CI run under the race detector stopped the
	// workers while they waited for the start, nothing measured and no
	// result to merge.
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	code, errs, doc, _ := runWorkersCmd(t, nil, 4*time.Second, "--workers", "2", "--quiet", "--grace", "500ms", "--start-at", start, sc)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, errs)
	}
	if doc == nil || doc.Shards != 2 || !doc.Engine.Interrupted {
		t.Fatalf("merged result after Ctrl-C: %+v", doc)
	}
	for _, sr := range doc.ShardRuns {
		if !sr.Interrupted {
			t.Errorf("shard %s was not interrupted", sr.Shard)
		}
	}
}

func TestParseWorkers(t *testing.T) {
	plan := &scenario.Plan{Load: scenario.LoadShape{MaxClients: 3 * engine.ClientsPerProcess(engine.OpenFilesLimit())}}
	for _, tc := range []struct {
		v       string
		want    int
		wantErr bool
	}{
		{"1", 1, false}, {"4", 4, false}, {"auto", 3, false},
		{"0", 0, true}, {"-2", 0, true}, {"many", 0, true}, {"257", 0, true},
	} {
		n, err := parseWorkers(tc.v, plan)
		if (err != nil) != tc.wantErr || n != tc.want {
			t.Errorf("%q: %d, %v; want %d (error %v)", tc.v, n, err, tc.want, tc.wantErr)
		}
	}
	code, _, errs := runCLI(t, "run", "--workers", "2", "--shard", "0/2", writeScenario(t, shortRun))
	if code != exitUsage || !strings.Contains(errs, "--shard cannot be used with --workers") {
		t.Errorf("--workers with --shard: exit %d, %s", code, errs)
	}
}

const workersMatch = `
name: workers-match
protocol: udp-lobby
seed: 11
embedded_server: {countdown_interval: 100ms, cleanup_interval: 3s}
load: {rate: 8/s, duration: 2s, max_clients: 64}
flows:
  - name: match
    group_size: 4
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - barrier: {n: 4, timeout: 10s}
      - ready
      - ping: {count: 3, interval: 50ms}
      - wait_game_start: 5s
      - leave: {reason: 0}
thresholds:
  - instance_join.error_rate == 0
  - wait_game_start.errors == 0
  - violations == 0
`

// TestRunWorkersSameVerdictsBothWays: a match's whole journey (the lobby,
// then the instance handshake on the port the lobby returned: replies from
// another port of the target) played by --workers 2 on sockets and on
// virtual flows makes the same run: the same exit, the same steps with
// requests within timing's slack, the same failures by reason, violations
// by rule and threshold verdicts.
func TestRunWorkersSameVerdictsBothWays(t *testing.T) {
	t.Parallel()
	if err := vflow.Available(); err != nil {
		t.Skipf("virtual flows cannot run on this machine: %v", err)
	}
	sc := writeScenario(t, workersMatch)
	type run struct {
		code int
		doc  *workersDoc
	}
	runs := map[string]run{}
	for _, mode := range []string{"sockets", "virtual"} {
		code, errs, doc, _ := runWorkersCmd(t, nil, 0, "--workers", "2", "--flows", mode, "--quiet", sc)
		if doc == nil || doc.Engine.Harness.Flows != mode {
			t.Fatalf("%s: exit %d, no merged result on %s flows; stderr:\n%s", mode, code, mode, errs)
		}
		runs[mode] = run{code, doc}
	}
	s, v := runs["sockets"], runs["virtual"]
	if s.code != v.code {
		t.Errorf("exit %d on sockets, %d on virtual flows", s.code, v.code)
	}
	samerun.Compare(t, "on sockets", &s.doc.Run, "on virtual flows", &v.doc.Run)
	if v.doc.Totals.Successes == 0 {
		t.Error("the run on virtual flows had no successful request")
	}
}
