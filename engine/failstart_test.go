package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// emfile is the error a factory returns when the process is out of
// descriptors, as udpclient.New does.
func emfile() error {
	return simclient.OpenError(fmt.Errorf("listen udp 127.0.0.1:0: socket: %w", syscall.EMFILE))
}

// TestClosedFailedStartsBackOff: closed-model clients whose sessions cannot
// start are counted as failed starts, back off (50ms doubling to 1s)
// instead of spinning, and the run still ends at its scheduled end.
func TestClosedFailedStartsBackOff(t *testing.T) {
	tests := []struct {
		name string
		// mk is the outcome of attempt n (from 0) of a slot.
		mk func(n int64) (Session, error)
		// wantStarts is the most attempts per slot the backoff allows in
		// the run's 3s: 50+100+200+400+800ms, then every second.
		wantStarts, wantFailedStarts int64
	}{
		{"factory fails", func(int64) (Session, error) { return nil, emfile() }, 7, 7},
		{"connect fails in the first step", func(int64) (Session, error) {
			return &fakeSession{err: &simclient.StepError{Reason: simclient.ReasonNoFiles,
				Err: &simclient.StartError{Reason: simclient.ReasonNoFiles, Err: syscall.EMFILE}}}, nil
		}, 7, 7},
		{"a server failure at once is no failed start", func(int64) (Session, error) {
			return &fakeSession{err: &simclient.StepError{Reason: "conn_refused", Err: syscall.ECONNREFUSED}}, nil
		}, 7, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				const clients = 4
				var calls atomic.Int64
				newS := func(Start) (Session, error) { return tc.mk(calls.Add(1) - 1) }
				plan := closedPlan(clients, nil, 3*time.Second, clients)
				t0 := time.Now()
				x, _, err := Execute(context.Background(), Options{Plan: plan, New: newS}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(t0); took != 3*time.Second {
					t.Errorf("the run took %v, want its 3s schedule", took)
				}
				st := x.Stats.Snapshot()
				if st.Started != clients*tc.wantStarts || st.Failed != st.Started || st.FailedStarts != clients*tc.wantFailedStarts {
					t.Errorf("%+v: want %d started, all failed, %d failed starts", st, clients*tc.wantStarts, clients*tc.wantFailedStarts)
				}
			})
		})
	}
}

// TestClosedBackoffResets: a slot that recovers runs at full pace again.
func TestClosedBackoffResets(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var calls atomic.Int64
		newS := func(Start) (Session, error) {
			if calls.Add(1) <= 3 {
				return nil, emfile()
			}
			return &fakeSession{length: 100 * time.Millisecond}, nil
		}
		plan := closedPlan(1, nil, 2*time.Second, 1)
		x, _, err := Execute(context.Background(), Options{Plan: plan, New: newS}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 3 failures (pauses 50+100+200ms = 350ms), then 100ms sessions
		// back to back: 17 start before 2s (this fake ignores the stop
		// signal, so the last completes in the grace period).
		st := x.Stats.Snapshot()
		if st.FailedStarts != 3 || st.Completed != 17 {
			t.Errorf("%+v: want 3 failed starts, 17 completed", st)
		}
	})
}

// TestRunFailedStarts: sessions that cannot open a socket are failures of
// the flow's first step with their reason (table, JSON, Prometheus read
// the step's reasons), counted as failed starts in the result, and the
// first one prints one line naming the open-files limit and --workers.
func TestRunFailedStarts(t *testing.T) {
	plan := mustPlan(t, fakeYAML)
	n := 0
	factory := func(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
		n++ // the open model calls it on one goroutine
		if n%4 == 0 {
			return nil, emfile()
		}
		return fakeFactory(time.Millisecond)(sh, id, flow, src)
	}
	var warn bytes.Buffer
	res, err := Run(context.Background(), Config{Plan: plan, Factory: factory, Warnings: &warn})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Engine.Sessions
	if s.Started != 40 || s.Failed != 10 || s.FailedStarts != 10 || res.Sessions.FailedStarts != 10 {
		t.Errorf("sessions %+v (result %+v): want 40 started, 10 failed starts", s, res.Sessions)
	}
	var first *result.Series
	for i := range res.Steps {
		if res.Steps[i].Name == "list_rooms" {
			first = &res.Steps[i]
		}
	}
	if first == nil || first.Failures != 10 || first.FailuresByReason[simclient.ReasonNoFiles] != 10 ||
		res.Totals.FailuresByReason[simclient.ReasonNoFiles] != 10 {
		t.Errorf("list_rooms %+v, totals %v: want 10 failures too_many_open_files", first, res.Totals.FailuresByReason)
	}
	lines := strings.Split(strings.TrimSpace(warn.String()), "\n")
	limit := fmt.Sprintf("RLIMIT_NOFILE %d", OpenFilesLimit())
	if len(lines) != 1 || !strings.Contains(lines[0], "too many open files") || !strings.Contains(lines[0], limit) ||
		!strings.Contains(lines[0], "--workers") {
		t.Errorf("warnings %q: want one line naming the reason, %s and --workers", warn.String(), limit)
	}
}

func TestEstimateFiles(t *testing.T) {
	udp, err1 := embeddedConfig(udpwire.ProtocolName, scenario.EmbeddedServer{MaxInstances: 10})
	tcp, err2 := embeddedConfig(tcpwire.ProtocolName, scenario.EmbeddedServer{MaxInstances: 10})
	lev, err3 := embeddedConfig(levwire.ProtocolName, scenario.EmbeddedServer{})
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	plan := &scenario.Plan{Load: scenario.LoadShape{MaxClients: 1000}}
	tests := []struct {
		name          string
		shard         Shard
		srv           *refserver.Config
		clients, serv int
	}{
		{"target", Shard{}, nil, 1000, 0},
		{"udp embedded", Shard{}, &udp, 1000, 11},
		{"tcp embedded: a connection per client", Shard{}, &tcp, 1000, 11 + 1001},
		{"leviathan embedded", Shard{}, &lev, 1000, 1},
		{"shard 1/3", Shard{1, 3}, nil, 333, 0},
	}
	for _, tc := range tests {
		f := EstimateFiles(plan, tc.shard, tc.srv)
		if f.Clients != tc.clients || f.Server != tc.serv || f.Needed() != tc.clients+tc.serv+FilesMargin {
			t.Errorf("%s: %+v, want %d clients %d server", tc.name, f, tc.clients, tc.serv)
		}
	}
	// On virtual flows the clients hold no descriptor each: the hub's few
	// carry them all, and the warning says so.
	virtual := &scenario.Plan{Load: scenario.LoadShape{MaxClients: 250000}, FlowsMode: scenario.FlowsVirtual}
	f := EstimateFiles(virtual, Shard{}, &udp)
	if f.Clients != 0 || f.VirtualClients != 250000 || f.Flows != vflow.HubDescriptors() || f.Needed() != f.Flows+f.Server+FilesMargin ||
		!strings.Contains(f.String(), fmt.Sprintf("%d for 250000 clients on virtual flows", f.Flows)) {
		t.Errorf("virtual flows: %+v (%s), want no client socket, the hub's %d descriptors", f, f, vflow.HubDescriptors())
	}
	for _, tc := range []struct {
		f    Files
		fits bool
	}{
		{Files{Clients: 100, Margin: 64, Limit: 164}, true},
		{Files{Flows: 6, VirtualClients: 1 << 20, Margin: 64, Limit: 70}, true},
		{Files{Flows: 6, VirtualClients: 1 << 20, Margin: 64, Limit: 69}, false},
		{Files{Clients: 100, Margin: 64, Limit: 163}, false},
		{Files{Clients: 1 << 20}, true}, // limit unknown
	} {
		if tc.f.Fits() != tc.fits {
			t.Errorf("%+v: Fits %v", tc.f, !tc.fits)
		}
	}
}

// TestProgressJSON: a worker's progress lines decode to the samples the
// parent sums into one display.
func TestProgressJSON(t *testing.T) {
	var buf bytes.Buffer
	n := int64(0)
	stop, _ := startProgress(ProgressJSON, &buf, time.Second, time.Hour, func() ProgressSample {
		n++
		return ProgressSample{Elapsed: time.Second, Active: 3, Started: 10 * n, Rate: 100, Errors: 1, FailedStarts: 1, BackingOff: 2}
	})
	stop() // writes the final sample
	var s ProgressSample
	if err := json.Unmarshal(buf.Bytes(), &s); err != nil || s.Started != 10 || s.Active != 3 {
		t.Fatalf("%q: %v %+v", buf.String(), err, s)
	}
	var sum ProgressSample
	sum.add(s)
	sum.add(ProgressSample{Elapsed: 2 * time.Second, Active: 2, Rate: 50, Violations: 4, BackingOff: 1})
	want := ProgressSample{Elapsed: 2 * time.Second, Active: 5, Started: 10, Rate: 150, Errors: 1, Violations: 4, FailedStarts: 1, BackingOff: 3}
	if sum != want {
		t.Errorf("sum %+v, want %+v", sum, want)
	}
}

// TestObserversAfterTheRun: the observers' connection budget is what the
// run's open-files estimate leaves of the limit: its own sockets first.
func TestObserversAfterTheRun(t *testing.T) {
	limit := OpenFilesLimit()
	if limit == 0 || limit > 1_000_000 {
		t.Skipf("open-files limit %d: no max_clients leaves a budget under observe.DefaultConns", limit)
	}
	plan := mustPlan(t, fakeYAML)
	// Room for the embedded server's estimate (about one socket per 200
	// clients) and a few files over: fewer than DefaultConns.
	plan.Load.MaxClients = int(limit) - FilesMargin - int(limit)/200 - 30
	b := observe.NewBudget()
	res, err := Run(context.Background(), Config{Plan: plan, Factory: fakeFactory(time.Millisecond), Grace: time.Second, ConnBudget: b})
	if err != nil {
		t.Fatal(err)
	}
	left := int(limit) - res.Engine.Files.Needed()
	if left <= observe.MinConns || left >= observe.DefaultConns {
		t.Fatalf("the run leaves %d of %d files: the test wants between %d and %d", left, limit, observe.MinConns, observe.DefaultConns)
	}
	if got := b.Limit(); got != left {
		t.Errorf("budget %d after a run needing %d of %d files, want the %d left", got, res.Engine.Files.Needed(), limit, left)
	}
}

// TestClosedBackingOffShown: clients pausing after sessions that fail at
// once are counted (Stats.BackingOff), not live, and the progress line
// names them and the pause; the count is 0 again after the run.
func TestClosedBackingOffShown(t *testing.T) {
	synctest(t, func(t *testing.T) {
		const clients = 4
		newS := func(Start) (Session, error) {
			return &fakeSession{err: &simclient.StepError{Reason: "join_failed", Err: errors.New("LOBBY_JOIN_FAILED")}}, nil
		}
		got := make(chan *Execution, 1)
		done := make(chan error, 1)
		go func() {
			_, _, err := Execute(context.Background(), Options{Plan: closedPlan(clients, nil, 3*time.Second, clients), New: newS},
				func(e *Execution) { got <- e })
			done <- err
		}()
		x := <-got
		time.Sleep(1500 * time.Millisecond)
		synctestWait()
		s := ProgressSample{Active: x.Stats.Active.Load(), BackingOff: x.Stats.BackingOff.Load()}
		if s.Active != 0 || s.BackingOff != clients {
			t.Errorf("mid-run: %d live, %d backing off; want 0 and %d", s.Active, s.BackingOff, clients)
		}
		if line := s.String(); !strings.Contains(line, "backing off 4 (sessions failing at once: 50ms doubling to 1s before the next)") {
			t.Errorf("progress line %q", line)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := x.Stats.BackingOff.Load(); n != 0 {
			t.Errorf("%d still backing off after the run", n)
		}
	})
}

// TestAutoWorkers: --workers auto splits the clients so that each process
// holds its share under the open-files limit, a socket a client; on
// virtual flows, whose clients hold none, only past one process's flows.
func TestAutoWorkers(t *testing.T) {
	for _, tc := range []struct {
		clients int
		flows   scenario.FlowsMode
		limit   uint64
		want    int
	}{
		{250000, scenario.FlowsSockets, 20000, 13},
		{1000, scenario.FlowsSockets, 20000, 1},
		{250000, scenario.FlowsSockets, 0, 1}, // limit unknown
		{250000, scenario.FlowsVirtual, 20000, 1},
		{vflow.DefaultHubFlows + 1, scenario.FlowsVirtual, 20000, 2},
	} {
		plan := &scenario.Plan{Load: scenario.LoadShape{MaxClients: tc.clients}, FlowsMode: tc.flows}
		if got := AutoWorkers(plan, tc.limit); got != tc.want {
			t.Errorf("%d clients on %s, limit %d: %d workers, want %d", tc.clients, tc.flows, tc.limit, got, tc.want)
		}
	}
}
