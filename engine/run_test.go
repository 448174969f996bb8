package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// pingSession is a fake simulated client: each step "succeeds" after hold,
// recorded through the run's shared recorder like a real session.
type pingSession struct {
	sh   *simclient.Shared
	id   int
	flow int
	hold time.Duration
}

func (s *pingSession) Run(ctx context.Context, due time.Time) error {
	if due.IsZero() {
		due = time.Now()
	}
	rec := s.sh.Recorder(s.id)
	for i := range s.sh.Plan.Flows[s.flow].Steps {
		sent := time.Now()
		t := time.NewTimer(s.hold)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		rec.Record(s.sh.StepKey(s.flow, i), due, sent, time.Now())
		due = time.Now()
	}
	return nil
}

func (s *pingSession) Close() error { return nil }

func fakeFactory(hold time.Duration) simclient.Factory {
	return func(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
		return &pingSession{sh: sh, id: id, flow: sh.FlowIndex(flow), hold: hold}, nil
	}
}

func mustPlan(t *testing.T, yaml string) *scenario.Plan {
	t.Helper()
	p, err := scenario.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return p
}

const fakeYAML = `
protocol: udp-lobby
seed: 1
load: {rate: 40/s, duration: 1s, max_clients: 100}
flows:
  - name: p
    steps:
      - list_rooms
      - ping: 1
thresholds:
  - list_rooms.count == 40
  - ping.p99 < 1s
  - sessions.completed == 40
  - dropped_starts == 0
  - ping.p50 > 1h
`

// TestRunEmbedded runs a plan through the whole pipeline (embedded server,
// reachability check, executor, recorders, snapshot, thresholds) with fake sessions.
func TestRunEmbedded(t *testing.T) {
	plan := mustPlan(t, fakeYAML)
	res, err := Run(context.Background(), Config{Plan: plan, Factory: fakeFactory(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Engine.Embedded || res.Engine.Server == nil || refudp.StatsOf(res.Engine.Server.Stats) == nil {
		t.Errorf("no embedded server counters: %+v", res.Engine)
	}
	if refudp.StatsOf(res.Engine.Server.Stats).Requests["LOBBY_LIST_ROOMS"] == 0 {
		t.Errorf("the reachability check's LIST is not in the server's counters: %v", refudp.StatsOf(res.Engine.Server.Stats).Requests)
	}
	if res.Totals.SessionsStarted != 40 || res.Engine.Sessions.Completed != 40 || res.Totals.Requests != 80 {
		t.Errorf("sessions %d/%d requests %d, want 40/40 and 80", res.Totals.SessionsStarted, res.Engine.Sessions.Completed, res.Totals.Requests)
	}
	if res.Engine.Harness.PeakHeapBytes <= 0 || res.Engine.Shard != "0/1" {
		t.Errorf("engine info %+v", res.Engine)
	}
	// The scenario's five, then the default gates (it names no overall
	// error threshold): no request failed, none was cut silent.
	want := []bool{true, true, true, true, false, true, true}
	if len(res.Thresholds) != len(want) || !res.Thresholds[5].Default || !res.Thresholds[6].Default {
		t.Fatalf("thresholds %+v", res.Thresholds)
	}
	for i, w := range want {
		if res.Thresholds[i].Pass != w {
			t.Errorf("threshold %q: pass %v, want %v (observed %v)", res.Thresholds[i].Name, res.Thresholds[i].Pass, w, res.Thresholds[i].Observed)
		}
	}
	if res.ThresholdsOK {
		t.Error("ThresholdsOK with a failing threshold")
	}
	// The JSON is a result run document with the engine info beside it.
	var buf bytes.Buffer
	if err := reports.WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadRun(bytes.NewReader(buf.Bytes()))
	if err != nil || back.Totals.Requests != 80 || len(back.Thresholds) != 7 || !back.Thresholds[5].Default || !back.Thresholds[6].Default {
		t.Fatalf("ReadRun: %v %+v", err, back)
	}
	var raw struct {
		Status, Verdict string
		Engine          Info `json:"engine"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil || raw.Engine.Sessions.Started != 40 {
		t.Errorf("engine info in JSON: %v %+v", err, raw.Engine)
	}
	// It leads with the run's headline, as every format does.
	if hl := res.Headline(); raw.Status != result.StatusFail || raw.Verdict != hl.Text {
		t.Errorf("JSON status %q verdict %q, want %q %q", raw.Status, raw.Verdict, result.StatusFail, hl.Text)
	}
}

// TestRunInterrupted: cancelling the run still yields the whole result.
func TestRunInterrupted(t *testing.T) {
	plan := mustPlan(t, strings.Replace(fakeYAML, "duration: 1s", "duration: 1h", 1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupted once its first session is made, not after a wall-clock
	// wait that a busy machine's setup could outlast (then no session had
	// started). That it returns at all is the check that it stops (the
	// sessions would run for an hour); how fast is a wall-clock figure, not
	// tested.
	made := fakeFactory(time.Hour)
	factory := func(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
		defer cancel()
		return made(sh, id, flow, src)
	}
	res, err := Run(ctx, Config{Plan: plan, Factory: factory, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Engine.Interrupted || res.Engine.Sessions.Started == 0 || res.Engine.Sessions.Aborted != res.Engine.Sessions.Started {
		t.Errorf("interrupted %v, sessions %+v", res.Engine.Interrupted, res.Engine.Sessions)
	}
}

// TestRunUnreachable: nothing listens on the target's UDP port.
func TestRunUnreachable(t *testing.T) {
	plan := mustPlan(t, fakeYAML)
	plan.Target = "127.0.0.1:9" // discard: nobody listens on loopback
	_, err := Run(context.Background(), Config{Plan: plan, Factory: fakeFactory(time.Millisecond), ReachTimeout: time.Second})
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an UnreachableError", err)
	}
}

// TestRunShardsMerge runs a plan as three shards against one server and
// merges their JSON results: the merged run has exactly the sessions and
// requests of the whole run, and thresholds on the engine's session
// metrics evaluate on it as on the whole run.
func TestRunShardsMerge(t *testing.T) {
	yaml := strings.NewReplacer("ping.p50 > 1h", "ping.p50 >= 0s", "rate: 40/s, duration: 1s", "rate: 80/s, duration: 500ms",
		"  - dropped_starts == 0\n", "  - dropped_starts == 0\n  - sessions.failed == 0\n  - clients.max >= 3\n").Replace(fakeYAML)
	whole, err := Run(context.Background(), Config{Plan: mustPlan(t, yaml), Factory: fakeFactory(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	var parts []*result.Run
	for i := range 3 {
		res, err := Run(context.Background(), Config{Plan: mustPlan(t, yaml), Shard: Shard{i, 3}, Factory: fakeFactory(time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Shard{i, 3}).String(); res.Engine.Shard != want || len(res.ShardRuns) != 1 || res.ShardRuns[0].Shard != want {
			t.Errorf("shard recorded as %q, shard runs %+v", res.Engine.Shard, res.ShardRuns)
		}
		// through the shard file, as `report merge` reads it
		var buf bytes.Buffer
		if err := reports.WriteJSON(&buf, res); err != nil {
			t.Fatal(err)
		}
		back, err := result.ReadRun(&buf)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, back)
	}
	merged, err := result.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Totals.SessionsStarted != whole.Totals.SessionsStarted || merged.Totals.Requests != whole.Totals.Requests || merged.Shards != 3 {
		t.Errorf("merged %d sessions / %d requests over %d shards, whole run %d / %d",
			merged.Totals.SessionsStarted, merged.Totals.Requests, merged.Shards, whole.Totals.SessionsStarted, whole.Totals.Requests)
	}
	ws := whole.Engine.Sessions
	if s := merged.Sessions; s == nil || s.Started != ws.Started || s.Completed != ws.Completed || s.Failed != ws.Failed || s.MaxActive < 3 {
		t.Errorf("merged sessions %+v, whole run %+v", s, ws)
	}
	if len(merged.ShardRuns) != 3 || merged.ShardRuns[2].Shard != "2/3" {
		t.Errorf("merged shard runs %+v", merged.ShardRuns)
	}
	plan := mustPlan(t, yaml)
	if !result.EvaluateThresholds(merged, plan.Conditions()) {
		for _, r := range merged.Thresholds {
			if !r.Pass {
				t.Errorf("merged threshold %q failed (observed %v)", r.Name, r.Observed)
			}
		}
	}
	if len(merged.Thresholds) != 9 || !merged.Thresholds[7].Default || !merged.Thresholds[8].Default {
		t.Errorf("merged thresholds %+v, want the plan's 7 and the default gates", merged.Thresholds)
	}
}

func TestReach(t *testing.T) {
	// A TCP listener accepts; a closed TCP port refuses; a closed UDP
	// port refuses Leviathan's Connect datagram. The closed ports are
	// held (deadport): one found free and let go could be taken by another
	// test before it is dialled.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tests := []struct {
		name  string
		proto scenario.ProtocolName
		addr  netip.AddrPort
		reach bool
	}{
		{"tcp open", tcpwire.ProtocolName, ln.Addr().(*net.TCPAddr).AddrPort(), true},
		{"tcp closed", tcpwire.ProtocolName, deadport.TCP(t), false},
		{"leviathan closed", levwire.ProtocolName, deadport.UDP(t), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Reach(context.Background(), tc.proto, nil, tc.addr, time.Second)
			var ue *UnreachableError
			if got := !errors.As(err, &ue); got != tc.reach || (tc.reach && err != nil) {
				t.Errorf("Reach = %v, want reachable %v", err, tc.reach)
			}
		})
	}
}

// TestRunPreciseReachesClients: Config.Client.Precise (run --precise)
// reaches the sessions' shared state as simclient.PreciseWindow, and the
// result says it.
func TestRunPreciseReachesClients(t *testing.T) {
	plan := mustPlan(t, "protocol: udp-lobby\nload: {rate: 20/s, duration: 100ms}\nflows:\n  - name: p\n    steps: [list_rooms]\n")
	for _, precise := range []bool{false, true} {
		var mu sync.Mutex
		var windows []time.Duration
		fake := fakeFactory(time.Millisecond)
		factory := func(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
			mu.Lock()
			windows = append(windows, sh.PollWindow)
			mu.Unlock()
			return fake(sh, id, flow, src)
		}
		res, err := Run(context.Background(), Config{Plan: plan, Factory: factory, Client: simclient.Options{Precise: precise}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine.Precise != precise {
			t.Errorf("Precise %v: the result's engine.precise is %v", precise, res.Engine.Precise)
		}
		want := time.Duration(0)
		if precise {
			want = simclient.PreciseWindow
		}
		if len(windows) == 0 {
			t.Fatalf("Precise %v: no session made", precise)
		}
		for _, w := range windows {
			if w != want {
				t.Errorf("Precise %v: a session's poll window is %v, want %v", precise, w, want)
			}
		}
	}
}

// TestRunLengthIsTheLoads: a run whose requests all end early lasts as
// long as its load, not until its last completion or its last arrival: a
// target that stops answering must not shorten the run and so raise its
// rate, nor may a schedule of few arrivals (an open model at 2/s for 1 s
// arrives at 0 and 0.5 s; a shard of it at 0 only: its run lasted
// 0.5 ms, its CPU read as 107 % of 2 cores). The bound holds by
// construction (the schedule ends no earlier than its stages); nothing
// here measures how long the run took.
func TestRunLengthIsTheLoads(t *testing.T) {
	for _, tc := range []struct {
		name, load string
		shard      Shard
		successes  int64
	}{
		{"closed, each client once", "model: closed\n  start_clients: 2\n  stages: [{clients: 2, for: 1s}]", Shard{}, 2},
		{"open, 2 arrivals", "rate: 2/s\n  duration: 1s", Shard{}, 2},
		{"open, a shard's 1 arrival", "rate: 2/s\n  duration: 1s", Shard{Index: 0, Count: 2}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustPlan(t, `
protocol: udp-lobby
load:
  `+tc.load+`
flows:
  - name: once
    steps: [list_rooms, {think: 1h}]
`)
			res, err := Run(context.Background(), Config{Plan: plan, Grace: 100 * time.Millisecond, Shard: tc.shard})
			if err != nil {
				t.Fatal(err)
			}
			if res.Totals.Successes != tc.successes {
				t.Fatalf("successes %d, want %d (one list each)", res.Totals.Successes, tc.successes)
			}
			if res.DurationNS < time.Second {
				t.Errorf("run length %v, want at least the load's 1s", res.DurationNS)
			}
		})
	}
}
