package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// fakeSession sleeps for its length (or until ctx ends), the way a real
// session waits on the network.
type fakeSession struct {
	length time.Duration
	err    error
}

func (f *fakeSession) Run(ctx context.Context, _ time.Time) error {
	t := time.NewTimer(f.length)
	defer t.Stop()
	select {
	case <-t.C:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeSession) Close() error { return nil }

// recorder keeps every start and the number of live sessions over time.
type recorder struct {
	mu      sync.Mutex
	starts  []Start
	dropped []Start
	reasons map[DropReason]int
}

func (r *recorder) factory(length time.Duration) NewSession {
	return func(s Start) (Session, error) {
		r.mu.Lock()
		r.starts = append(r.starts, s)
		r.mu.Unlock()
		return &fakeSession{length: length}, nil
	}
}

func (r *recorder) onDropped(s Start, why DropReason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reasons == nil {
		r.reasons = map[DropReason]int{}
	}
	r.reasons[why]++
	r.dropped = append(r.dropped, s)
}

func openPlan(start float64, stages []scenario.Stage, d time.Duration, maxClients int, flows ...scenario.Flow) *scenario.Plan {
	if len(flows) == 0 {
		flows = []scenario.Flow{{Name: "a", Weight: 1, GroupSize: 1}}
	}
	return &scenario.Plan{Name: "t", Seed: 7, Flows: flows,
		Load: scenario.LoadShape{Model: scenario.Open, Start: start, Stages: stages, Duration: d, MaxClients: maxClients}}
}

func closedPlan(start float64, stages []scenario.Stage, d time.Duration, maxClients int) *scenario.Plan {
	p := openPlan(start, stages, d, maxClients)
	p.Load.Model = scenario.Closed
	return p
}

func TestOpenExecutor(t *testing.T) {
	tests := []struct {
		name        string
		plan        *scenario.Plan
		length      time.Duration // of each session
		wantStarted int
		wantDropped int
		// firstHalf is how many arrivals are due in the first half of
		// the run, -1 to skip.
		firstHalf int
	}{
		// 10/s for 10s: arrivals 0..99, due at k/10 s.
		{"constant", openPlan(10, nil, 10*time.Second, 1000), 100 * time.Millisecond, 100, 0, 50},
		// Ramp 0→100/s over 10s: 500 arrivals, 125 in the first 5s.
		{"ramp", openPlan(0, []scenario.Stage{{Target: 100, For: 10 * time.Second}}, 10*time.Second, 1000), 10 * time.Millisecond, 500, 0, 125},
		// Step up after a hold: 10/s for 2s then 50/s for 2s = 20 + 100.
		{"stages", openPlan(10, []scenario.Stage{{Target: 10, For: 2 * time.Second}, {Target: 50, For: 0}, {Target: 50, For: 2 * time.Second}}, 4*time.Second, 1000), time.Millisecond, 120, 0, 20},
		// 100/s for 1s but only 10 clients that live 2s: 10 start, 90 are
		// dropped for want of a free client.
		{"no free client", openPlan(100, nil, time.Second, 10), 2 * time.Second, 10, 90, -1},
		// Zero rate: nothing starts, the run still ends.
		{"zero rate", openPlan(0, nil, time.Second, 10), time.Second, 0, 0, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				var r recorder
				x, intr, err := Execute(context.Background(), Options{Plan: tc.plan, New: r.factory(tc.length), OnDropped: r.onDropped}, nil)
				if err != nil || intr {
					t.Fatalf("Execute: %v, interrupted %v", err, intr)
				}
				st := x.Stats.Snapshot()
				if int(st.Started) != tc.wantStarted || len(r.starts) != tc.wantStarted {
					t.Errorf("started %d (factory saw %d), want %d", st.Started, len(r.starts), tc.wantStarted)
				}
				if int(x.Stats.Dropped()) != tc.wantDropped || len(r.dropped) != tc.wantDropped {
					t.Errorf("dropped %d (hook saw %d), want %d", x.Stats.Dropped(), len(r.dropped), tc.wantDropped)
				}
				if st.Completed != st.Started || st.Active != 0 {
					t.Errorf("completed %d of %d, %d still active", st.Completed, st.Started, st.Active)
				}
				if tc.firstHalf >= 0 {
					half := x.StartTime().Add(tc.plan.Load.Duration / 2)
					n := 0
					for i, s := range r.starts {
						if s.Intended.Before(half) {
							n++
						}
						if s.ID != i {
							t.Fatalf("start %d has id %d: ids must follow arrival order", i, s.ID)
						}
					}
					if n != tc.firstHalf {
						t.Errorf("%d arrivals due in the first half, want %d", n, tc.firstHalf)
					}
				}
				if tc.plan.Load.MaxClients > 0 && st.MaxActive > int64(tc.plan.Load.MaxClients) {
					t.Errorf("peak %d live sessions over max_clients %d", st.MaxActive, tc.plan.Load.MaxClients)
				}
			})
		})
	}
}

// runAt is a session that notes when it was run, against its due time.
type runAt struct {
	fakeSession
	mu   *sync.Mutex
	late *[]time.Duration
}

func (r *runAt) Run(ctx context.Context, due time.Time) error {
	r.mu.Lock()
	*r.late = append(*r.late, time.Since(due))
	r.mu.Unlock()
	return r.fakeSession.Run(ctx, due)
}

// TestOpenIntendedTimes checks each arrival's intended start is its due
// time on the schedule, that its session is made PrepareLead ahead (ready
// before due: the harness's setup is not between intended time and send),
// and that with a prompt generator the session really runs at its due time.
func TestOpenIntendedTimes(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var mu sync.Mutex
		var made, ran []time.Duration // against the due time
		var intended []time.Duration
		var start time.Time
		plan := openPlan(4, nil, 2*time.Second, 100)
		_, _, err := Execute(context.Background(), Options{Plan: plan, New: func(s Start) (Session, error) {
			mu.Lock()
			made = append(made, time.Since(s.Intended))
			intended = append(intended, s.Intended.Sub(start))
			mu.Unlock()
			return &runAt{fakeSession{length: time.Millisecond}, &mu, &ran}, nil
		}}, func(x *Execution) { start = x.StartTime() })
		if err != nil {
			t.Fatal(err)
		}
		want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second,
			1250 * time.Millisecond, 1500 * time.Millisecond, 1750 * time.Millisecond}
		if len(intended) != len(want) || len(ran) != len(want) {
			t.Fatalf("intended %v (ran %d), want %v", intended, len(ran), want)
		}
		for i := range want {
			wantMade := -PrepareLead
			if i == 0 {
				wantMade = 0 // due at the start: made at once
			}
			if intended[i] != want[i] || made[i] != wantMade || ran[i] != 0 {
				t.Errorf("arrival %d: intended +%v (want +%v), made %v from due (want %v), run %v late", i, intended[i], want[i], made[i], wantMade, ran[i])
			}
		}
	})
}

// TestOpenPreparePool: at 100,000 arrivals/s, PrepareLead ahead is 300
// sessions, so the pool of made-but-not-due sessions stays at its bound
// and nothing is dropped while the generator keeps up; the peak of live
// sessions counts the prepared ones.
func TestOpenPreparePool(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var r recorder
		plan := openPlan(100000, nil, 20*time.Millisecond, 1000000)
		var waiting, peak int
		var mu sync.Mutex
		x, _, err := Execute(context.Background(), Options{Plan: plan, New: func(s Start) (Session, error) {
			mu.Lock()
			waiting++
			peak = max(peak, waiting)
			mu.Unlock()
			sess, err := r.factory(0)(s)
			return &hookSession{Session: sess, run: func() { mu.Lock(); waiting--; mu.Unlock() }}, err
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := x.Stats.Snapshot()
		if st.Started != 2000 || st.Completed != st.Started || x.Stats.Dropped() != 0 {
			t.Errorf("started %d, completed %d, dropped %d; want 2000 completed", st.Started, st.Completed, x.Stats.Dropped())
		}
		// 300 due within PrepareLead, plus the one just started if its
		// goroutine has not run yet when the next is made.
		if peak < 300 || peak > 301 {
			t.Errorf("at most %d sessions waited for their due time, want 300-301 (PrepareLead × rate)", peak)
		}
	})
}

// hookSession calls run when it is run.
type hookSession struct {
	Session
	run func()
}

func (h *hookSession) Run(ctx context.Context, due time.Time) error {
	h.run()
	return h.Session.Run(ctx, due)
}

// TestOpenPreparedAbort: sessions made ahead but not yet due when the run
// is interrupted are closed and counted as aborted, not left live.
func TestOpenPreparedAbort(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var r recorder
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second+PrepareLead/2, cancel)
		plan := openPlan(1000, nil, 10*time.Second, 100000)
		x, intr, err := Execute(ctx, Options{Plan: plan, New: r.factory(0)}, nil)
		if err != nil || !intr {
			t.Fatalf("Execute: %v, interrupted %v", err, intr)
		}
		st := x.Stats.Snapshot()
		if st.Active != 0 || st.Started != st.Completed+st.Aborted || st.Aborted == 0 {
			t.Errorf("started %d = completed %d + aborted %d? %d still active", st.Started, st.Completed, st.Aborted, st.Active)
		}
	})
}

// TestOpenGeneratorSaturated makes New slow (5 ms per session) under a
// schedule of 1000/s: the generator cannot keep up, and arrivals more than
// MaxLateness late are counted as dropped, not started in a burst.
func TestOpenGeneratorSaturated(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var r recorder
		slow := func(s Start) (Session, error) {
			time.Sleep(5 * time.Millisecond)
			return r.factory(time.Millisecond)(s)
		}
		plan := openPlan(1000, nil, time.Second, 10000)
		x, _, err := Execute(context.Background(), Options{Plan: plan, New: slow, OnDropped: r.onDropped, MaxLateness: 50 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := x.Stats.Snapshot()
		if st.Started+st.DroppedLate != 1000 {
			t.Errorf("started %d + dropped late %d != 1000 arrivals", st.Started, st.DroppedLate)
		}
		// 1 s / 5 ms = 200 sessions can be made; the rest are late.
		if st.Started < 150 || st.Started > 250 || st.DroppedLate == 0 || r.reasons[DropLate] != int(st.DroppedLate) {
			t.Errorf("started %d, dropped late %d (hook %v): want ~200 started, the rest dropped", st.Started, st.DroppedLate, r.reasons)
		}
		if st.DroppedNoSlot != 0 {
			t.Errorf("%d dropped for lack of a client with 10000 allowed", st.DroppedNoSlot)
		}
	})
}

func TestClosedExecutor(t *testing.T) {
	tests := []struct {
		name    string
		plan    *scenario.Plan
		length  time.Duration
		wantMax int64
		// minStarted, maxStarted bound the number of sessions.
		minStarted, maxStarted int64
	}{
		// 5 clients × 2s / 100ms sessions = 100 sessions (the last ones
		// may not start if the run ends exactly at their start).
		{"constant", closedPlan(5, nil, 2*time.Second, 5), 100 * time.Millisecond, 5, 95, 100},
		// Ramp 0→10 over 1s then hold 1s: the peak is 10.
		{"ramp", closedPlan(0, []scenario.Stage{{Target: 10, For: time.Second}, {Target: 10, For: time.Second}}, 2*time.Second, 10), 50 * time.Millisecond, 10, 200, 400},
		// Long sessions: each client runs one session, cut at the end.
		{"long sessions", closedPlan(3, nil, time.Second, 3), time.Hour, 3, 3, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				var r recorder
				x, _, err := Execute(context.Background(), Options{Plan: tc.plan, New: r.factory(tc.length), Grace: 100 * time.Millisecond}, nil)
				if err != nil {
					t.Fatal(err)
				}
				st := x.Stats.Snapshot()
				if st.MaxActive != tc.wantMax {
					t.Errorf("peak %d clients, want %d", st.MaxActive, tc.wantMax)
				}
				if st.Started < tc.minStarted || st.Started > tc.maxStarted {
					t.Errorf("started %d sessions, want %d-%d", st.Started, tc.minStarted, tc.maxStarted)
				}
				if st.Active != 0 || st.Completed+st.Aborted+st.Failed != st.Started {
					t.Errorf("after the run: %+v", st)
				}
				seen := map[int]bool{}
				for _, s := range r.starts {
					if seen[s.ID] {
						t.Fatalf("client id %d used twice", s.ID)
					}
					seen[s.ID] = true
					if s.ID%tc.plan.Load.MaxClients != s.Slot {
						t.Fatalf("id %d is not slot %d + k·max_clients", s.ID, s.Slot)
					}
				}
			})
		})
	}
}

// TestClosedRampFollowsTarget samples the number of live clients during a
// ramp: it must track Ramp.Clients within one poll interval.
func TestClosedRampFollowsTarget(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var r recorder
		plan := closedPlan(0, []scenario.Stage{{Target: 20, For: 2 * time.Second}, {Target: 0, For: 2 * time.Second}}, 4*time.Second, 20)
		prof := plan.Load.Ramp()
		var x *Execution
		done := make(chan struct{})
		go func() {
			defer close(done)
			Execute(context.Background(), Options{Plan: plan, New: r.factory(10 * time.Millisecond)}, func(e *Execution) { x = e })
		}()
		for el := 250 * time.Millisecond; el < 4*time.Second; el += 250 * time.Millisecond {
			time.Sleep(250 * time.Millisecond)
			synctestWait()
			a, b, c := prof.Clients(el-DefaultPollInterval, 20), prof.Clients(el, 20), prof.Clients(el+DefaultPollInterval, 20)
			lo, hi := min(a, b, c), max(a, b, c)
			if a := int(x.Stats.Active.Load()); a < lo || a > hi {
				t.Errorf("at %v: %d live clients, want %d-%d", el, a, lo, hi)
			}
		}
		<-done
	})
}

func TestSessionFailures(t *testing.T) {
	synctest(t, func(t *testing.T) {
		boom := errors.New("boom")
		n := 0
		var ends []error
		var mu sync.Mutex
		newS := func(s Start) (Session, error) {
			n++
			switch n % 3 {
			case 0:
				return nil, boom
			case 1:
				return &fakeSession{length: time.Millisecond, err: boom}, nil
			}
			return &fakeSession{length: time.Millisecond}, nil
		}
		plan := openPlan(30, nil, time.Second, 100)
		x, _, err := Execute(context.Background(), Options{Plan: plan, New: newS,
			OnSessionEnd: func(s Start, err error, ran bool) { mu.Lock(); ends = append(ends, err); mu.Unlock() }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := x.Stats.Snapshot()
		if st.Started != 30 || st.Failed != 20 || st.Completed != 10 || len(ends) != 30 {
			t.Errorf("%+v, %d ends: want 30 started, 20 failed, 10 completed", st, len(ends))
		}
	})
}

// TestInterrupt cancels the run: scheduling stops at once, in-flight
// sessions get the grace period, then are cancelled and counted aborted.
func TestInterrupt(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var r recorder
		ctx, cancel := context.WithCancel(context.Background())
		plan := openPlan(10, nil, time.Hour, 100)
		time.AfterFunc(1050*time.Millisecond, cancel)
		t0 := time.Now()
		x, intr, err := Execute(ctx, Options{Plan: plan, New: r.factory(time.Hour), Grace: time.Second}, nil)
		if err != nil || !intr {
			t.Fatalf("err %v, interrupted %v", err, intr)
		}
		st := x.Stats.Snapshot()
		if st.Started != 11 || st.Aborted != 11 || st.Failed != 0 {
			t.Errorf("%+v: want 11 started and aborted", st)
		}
		if d := time.Since(t0); d != 2050*time.Millisecond {
			t.Errorf("took %v, want 1.05s + 1s grace", d)
		}
	})
}

// TestNoFactory is the one configuration error.
func TestNoFactory(t *testing.T) {
	if _, _, err := Execute(context.Background(), Options{Plan: openPlan(1, nil, time.Second, 1)}, nil); !errors.Is(err, ErrNoFactory) {
		t.Errorf("got %v", err)
	}
}

// TestOpenFlowsAndSources: flows are picked by weight from the seed
// (reproducibly), and clients of groups of one bind round-robin, by their
// flow's sequence, to the source pool.
func TestOpenFlowsAndSources(t *testing.T) {
	flows := []scenario.Flow{{Name: "a", Weight: 3, GroupSize: 1}, {Name: "b", Weight: 1, GroupSize: 1}}
	sources := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	run := func(seed int64) []Start {
		var r recorder
		synctest(t, func(t *testing.T) {
			plan := openPlan(1000, nil, 2*time.Second, 10000, flows...)
			plan.Seed = seed
			if _, _, err := Execute(context.Background(), Options{Plan: plan, New: r.factory(time.Millisecond), Sources: sources}, nil); err != nil {
				t.Fatal(err)
			}
		})
		return r.starts
	}
	a, b, c := run(1), run(1), run(2)
	if len(a) != 2000 {
		t.Fatalf("%d starts, want 2000", len(a))
	}
	perFlow := [2]int{}
	same, differ := true, false
	for i, s := range a {
		perFlow[s.Flow]++
		if s.Source != sources[s.Seq%3] {
			t.Fatalf("client %d (flow %d, session %d) bound to %v, want %v", s.ID, s.Flow, s.Seq, s.Source, sources[s.Seq%3])
		}
		same = same && s == b[i]
		differ = differ || s.Flow != c[i].Flow
	}
	if !same || !differ {
		t.Errorf("same seed same picks: %v; another seed differs: %v", same, differ)
	}
	// 3:1 weights over 2000 picks: 1500 ± 5σ (σ ≈ 19).
	if perFlow[0] < 1400 || perFlow[0] > 1600 {
		t.Errorf("flow a picked %d of 2000 times, want ~1500", perFlow[0])
	}
	if perFlow[0]+perFlow[1] != 2000 || a[len(a)-1].Seq+1 > perFlow[a[len(a)-1].Flow] {
		t.Errorf("per-flow sequence numbers inconsistent: %v", perFlow)
	}
}

// stepSession plays steps of one length each, as a simclient session does:
// it checks the stop signal between steps and lets the step in flight end.
type stepSession struct {
	steps int
	step  time.Duration
}

func (f *stepSession) Run(ctx context.Context, _ time.Time) error {
	stop := simclient.StopContext(ctx)
	for range f.steps {
		if stop.Err() != nil {
			return simclient.Stopped(ctx, stop, nil)
		}
		t := time.NewTimer(f.step) // a request in flight: only ctx cuts it
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	return nil
}

func (f *stepSession) Close() error { return nil }

// TestStopSignal: a closed-model run ends at its duration plus the step in
// flight, not plus the grace period, and its cut sessions are aborted, not
// failed; an open-model arrival may finish its flow within the grace.
func TestStopSignal(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *scenario.Plan
		// took is the run's length; completed, aborted the session counts.
		took               time.Duration
		completed, aborted int64
	}{
		// 3 clients, sessions of 10 × 300 ms: stop at 1 s, the step in
		// flight ends at 1.2 s.
		{"closed", closedPlan(3, nil, time.Second, 3), 1200 * time.Millisecond, 0, 3},
		// Arrivals at 0 and 0.5 s (2/s for 1 s) play their 3 s flows out.
		{"open", openPlan(2, nil, time.Second, 10), 3500 * time.Millisecond, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				newSess := func(Start) (Session, error) { return &stepSession{steps: 10, step: 300 * time.Millisecond}, nil }
				t0 := time.Now()
				x, _, err := Execute(context.Background(), Options{Plan: tc.plan, New: newSess, Grace: 10 * time.Second}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Since(t0); d != tc.took {
					t.Errorf("took %v, want %v", d, tc.took)
				}
				st := x.Stats.Snapshot()
				if st.Completed != tc.completed || st.Aborted != tc.aborted || st.Failed != 0 {
					t.Errorf("%+v: want %d completed, %d aborted, 0 failed", st, tc.completed, tc.aborted)
				}
			})
		})
	}
}

// TestSpreadSource: whatever the group size (1-5) and the number of source
// addresses (1-8), the leaders of consecutive groups, and the sessions of
// every role, take each address equally often (over n groups), and the
// members of one group take different addresses while the group fits.
func TestSpreadSource(t *testing.T) {
	for g := 1; g <= 5; g++ {
		for n := 1; n <= 8; n++ {
			t.Run(fmt.Sprintf("group%d/addrs%d", g, n), func(t *testing.T) {
				// n groups: each role should see every address once.
				perRole := make([][]int, g)
				for r := range perRole {
					perRole[r] = make([]int, n)
				}
				for grp := 0; grp < n; grp++ {
					seen := map[int]bool{}
					for r := 0; r < g; r++ {
						i := spreadSource(grp*g+r, g, n)
						if i < 0 || i >= n {
							t.Fatalf("session %d: index %d outside 0..%d", grp*g+r, i, n-1)
						}
						perRole[r][i]++
						if g <= n && seen[i] {
							t.Errorf("group %d: two members bind address %d", grp, i)
						}
						seen[i] = true
					}
				}
				for r, counts := range perRole {
					for i, c := range counts {
						if c != 1 {
							t.Errorf("role %d (0 = leader) bound address %d %d times over %d groups, want once: %v", r, i, c, n, counts)
						}
					}
				}
			})
		}
	}
}

// TestOpenShardsBindAsOneRun: each session of a sharded open run binds the
// address the unsharded run binds it to (the mapping follows the flow's
// sequence, which every shard counts whole).
func TestOpenShardsBindAsOneRun(t *testing.T) {
	flows := []scenario.Flow{{Name: "room", Weight: 1, GroupSize: 4}}
	sources := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	run := func(sh Shard) map[int]netip.Addr {
		var r recorder
		synctest(t, func(t *testing.T) {
			plan := openPlan(100, nil, time.Second, 1000, flows...)
			if _, _, err := Execute(context.Background(), Options{Plan: plan, Shard: sh, New: r.factory(time.Millisecond), Sources: sources}, nil); err != nil {
				t.Fatal(err)
			}
		})
		out := map[int]netip.Addr{}
		for _, s := range r.starts {
			out[s.Seq] = s.Source
		}
		return out
	}
	whole := run(Shard{})
	if len(whole) < 100 {
		t.Fatalf("%d sessions, want 100 or more", len(whole))
	}
	leaders := map[netip.Addr]int{}
	for seq, a := range whole {
		if seq%4 == 0 {
			leaders[a]++
		}
	}
	if len(leaders) != len(sources) {
		t.Errorf("leaders bound %v, want every one of %d addresses", leaders, len(sources))
	}
	got := 0
	for i := range 2 {
		for seq, a := range run(Shard{Index: i, Count: 2}) {
			got++
			if whole[seq] != a {
				t.Errorf("shard %d/2: session %d bound %v, unsharded %v", i, seq, a, whole[seq])
			}
		}
	}
	if got != len(whole) {
		t.Errorf("shards ran %d sessions, unsharded %d", got, len(whole))
	}
}

// TestClosedClientsUp: the closed model records the most clients its
// schedule asked for (as the controller read it, its shard's share) and
// the most that came up: a client whose first session is made only after
// the end never came up; a client pausing after failed sessions stays up;
// a ramp that ends with the run is asked only what it reached.
func TestClosedClientsUp(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		plan      *scenario.Plan
		shard     Shard
		new       func(Start) (Session, error)
		asked, up int64
	}{
		{"all up", closedPlan(20, nil, time.Second, 20), Shard{},
			func(Start) (Session, error) { return &fakeSession{length: 50 * time.Millisecond}, nil }, 20, 20},
		{"most never came up", closedPlan(20, nil, time.Second, 20), Shard{},
			func(s Start) (Session, error) {
				if s.Slot >= 5 {
					time.Sleep(5 * time.Second) // past the end: this client never came up
				}
				return &fakeSession{length: 50 * time.Millisecond}, nil
			}, 20, 5},
		{"failing at once, backing off", closedPlan(20, nil, time.Second, 20), Shard{},
			func(Start) (Session, error) { return &fakeSession{err: boom}, nil }, 20, 20},
		{"failed starts", closedPlan(20, nil, time.Second, 20), Shard{},
			func(Start) (Session, error) { return nil, boom }, 20, 20},
		// Read every 100 ms: the last read, at 0.9 s, asks for 9.
		{"ramp to the end", closedPlan(0, []scenario.Stage{{Target: 10, For: time.Second}}, time.Second, 10), Shard{},
			func(Start) (Session, error) { return &fakeSession{length: time.Hour}, nil }, 9, 9},
		// The read at 1.0 s, 1 ms before the end, does not count: the
		// one at 0.9 s asks for 8 (8.99).
		{"a read too close to the end", closedPlan(0, []scenario.Stage{{Target: 10, For: 1001 * time.Millisecond}}, 1001*time.Millisecond, 10), Shard{},
			func(Start) (Session, error) { return &fakeSession{length: time.Hour}, nil }, 8, 9},
		{"a shard's share", closedPlan(20, nil, time.Second, 20), Shard{Index: 1, Count: 4},
			func(Start) (Session, error) { return &fakeSession{length: 50 * time.Millisecond}, nil }, 5, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				x, _, err := Execute(context.Background(), Options{Plan: tc.plan, Shard: tc.shard, New: tc.new, Grace: 100 * time.Millisecond}, nil)
				if err != nil {
					t.Fatal(err)
				}
				st := x.Stats.Snapshot()
				if st.ClientsAsked != tc.asked || st.ClientsPeak != tc.up {
					t.Errorf("clients asked %d, peak up %d; want %d, %d", st.ClientsAsked, st.ClientsPeak, tc.asked, tc.up)
				}
				// Let the clients that came up late end (the fake
				// clock's sleep): they are not counted then either.
				time.Sleep(10 * time.Second)
				synctestWait()
				if peak := x.Stats.ClientsPeak.Load(); peak != tc.up {
					t.Errorf("after the late clients ended: peak up %d, want %d", peak, tc.up)
				}
				if up := x.Stats.Up.Load(); up != 0 {
					t.Errorf("%d clients still up after the run", up)
				}
			})
		})
	}
}

// TestClosedFlowPicks: a closed-model slot picks each session's flow from
// its own stream (slotStreamBase + slot), in order; with one flow there is
// nothing to pick, and the slot keeps no stream.
func TestClosedFlowPicks(t *testing.T) {
	two := []scenario.Flow{{Name: "a", Weight: 1, GroupSize: 1}, {Name: "b", Weight: 2, GroupSize: 1}}
	for _, tc := range []struct {
		name  string
		flows []scenario.Flow
	}{{"one flow", nil}, {"two flows", two}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				plan := openPlan(3, nil, time.Second, 3, tc.flows...)
				plan.Load.Model = scenario.Closed
				var r recorder
				x, _, err := Execute(context.Background(), Options{Plan: plan, New: r.factory(100 * time.Millisecond), Grace: 100 * time.Millisecond}, nil)
				if err != nil {
					t.Fatal(err)
				}
				got := map[int][]int{} // slot: flows in start order
				for _, s := range r.starts {
					got[s.Slot] = append(got[s.Slot], s.Flow)
				}
				for _, s := range x.slots {
					if len(plan.Flows) == 1 {
						if s.rng != nil {
							t.Errorf("slot %d keeps a stream with one flow to pick", s.j)
						}
						for _, f := range got[s.j] {
							if f != 0 {
								t.Fatalf("slot %d played flow %d of 1", s.j, f)
							}
						}
						continue
					}
					rng := scenario.NewRand(plan.Seed, slotStreamBase+uint64(s.j))
					for k, f := range got[s.j] {
						if want := plan.PickFlow(rng.Float64()); f != want {
							t.Fatalf("slot %d session %d: flow %d, want %d (its stream's pick)", s.j, k, f, want)
						}
					}
					if len(got[s.j]) < 5 {
						t.Errorf("slot %d played %d sessions, want about 10", s.j, len(got[s.j]))
					}
				}
			})
		})
	}
}
