package capacity

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// shardRun is one shard's judged run of a step: n list_rooms requests,
// errs of them failed, judged by errors.rate < 5% on its own share.
func shardRun(t *testing.T, shard string, n, errs int64) *result.Run {
	t.Helper()
	ok := n - errs
	th := result.ThresholdResult{Name: "errors.rate < 5%", Metric: "errors.rate", Op: "<", Limit: 0.05, Observed: float64(errs) / float64(n)}
	th.Pass = th.Observed < th.Limit
	return &result.Run{SchemaVersion: result.SchemaVersion, Kind: result.KindRun, DurationNS: 2 * time.Second, Shards: 1,
		Steps:      []result.Series{{Name: "list_rooms", Requests: n, Successes: ok, Failures: errs, Latency: latency(t, int(ok), 900), SendLag: latency(t, int(n), 100)}},
		Totals:     result.Totals{Requests: n, Successes: ok, Failures: errs},
		Thresholds: []result.ThresholdResult{th},
		Sessions:   &result.Sessions{Started: n, Completed: ok, Failed: errs},
		ShardRuns:  []result.ShardRun{{Shard: shard, Sessions: result.Sessions{Started: n, Completed: ok, Failed: errs}, Harness: result.Harness{GOMAXPROCS: 2, CPUSeconds: 0.1}}},
		TimeSeries: []result.Point{{Second: 0, Requests: n / 2, Errors: errs / 2}, {Second: 1, Requests: n - n/2, Errors: errs - errs/2}}}
}

// shardDoc is shard's document of the ladder 10, 20, 40: at each load the
// given errors out of load×2 requests (one entry per step played).
func shardDoc(t *testing.T, shard string, errs ...int64) *result.Capacity {
	t.Helper()
	loads := []float64{10, 20, 40}
	c := &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Scenario: "poll", Model: "open", Shard: shard,
		StartedAt: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC), DurationNS: 10 * time.Second,
		Settings: result.CapacitySettings{Start: 10, Max: 40, StepNS: 2 * time.Second, LagBoundNS: 100 * time.Millisecond, Loads: loads},
		Stop:     result.StopLadder, StopText: "every load of the ladder played"}
	j := DefaultJudgement
	j.Warmup, j.Length = 0, 2*time.Second
	for k, e := range errs {
		r := shardRun(t, shard, int64(loads[k]), e)
		st := j.Judge(r, loads[k])
		st.Run = r
		c.Steps = append(c.Steps, st)
	}
	if len(errs) < len(loads) {
		c.Stop, c.StopText = result.StopBudget, "the --budget 5s ran out before 40"
	}
	return c
}

func TestMerge(t *testing.T) {
	type want struct {
		verdicts    []string
		requests    []int64
		sustainable float64
		stop        string
		coverage    []string // each in some line of Coverage
	}
	for _, tc := range []struct {
		name string
		docs []*result.Capacity
		want want
	}{
		// Shard 1 alone breaks errors.rate < 5% at 20 (1 of 20 is 5 %),
		// the merge does not (1 of 40); at 40 both do (4 of 40, 4 of
		// 80): judged again on the merge, not by the shards' verdicts.
		{"two shards", []*result.Capacity{shardDoc(t, "0/2", 0, 0, 0), shardDoc(t, "1/2", 0, 1, 4)},
			want{[]string{result.CapPass, result.CapPass, result.CapFail}, []int64{20, 40, 80}, 20, result.StopLadder, nil}},
		{"in either order", []*result.Capacity{shardDoc(t, "1/2", 0, 1, 4), shardDoc(t, "0/2", 0, 0, 0)},
			want{[]string{result.CapPass, result.CapPass, result.CapFail}, []int64{20, 40, 80}, 20, result.StopLadder, nil}},
		{"a shard missing", []*result.Capacity{shardDoc(t, "0/2", 0, 0, 0)},
			want{[]string{result.CapHarnessBound, result.CapHarnessBound, result.CapHarnessBound}, []int64{10, 20, 40}, 0, result.StopHarness,
				[]string{"shard 1/2 missing (no document given): every step lacks its share of the load"}}},
		{"a step missing from a shard", []*result.Capacity{shardDoc(t, "0/2", 0, 0, 0), shardDoc(t, "1/2", 0, 0)},
			want{[]string{result.CapPass, result.CapPass, result.CapHarnessBound}, []int64{20, 40, 40}, 20, result.StopHarness,
				[]string{"step 3 (40/s): not played by shard 1/2 (its ladder ended: the --budget 5s ran out before 40)"}}},
		{"no shard played the last load", []*result.Capacity{shardDoc(t, "0/2", 0, 0), shardDoc(t, "1/2", 0, 0)},
			want{[]string{result.CapPass, result.CapPass}, []int64{20, 40}, 20, result.StopBudget, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := make([]string, len(tc.docs))
			for i, d := range tc.docs {
				names[i] = "shard-" + strings.ReplaceAll(d.Shard, "/", "-") + ".json"
			}
			c, _, err := Merge(tc.docs, names)
			if err != nil {
				t.Fatal(err)
			}
			var verdicts []string
			var requests []int64
			for _, st := range c.Steps {
				verdicts = append(verdicts, st.Verdict)
				requests = append(requests, st.Requests)
				if st.Run != nil {
					t.Errorf("step %v keeps its run in the merge", st.Load)
				}
			}
			if strings.Join(verdicts, " ") != strings.Join(tc.want.verdicts, " ") || len(requests) != len(tc.want.requests) {
				t.Fatalf("verdicts %v requests %v, want %v %v", verdicts, requests, tc.want.verdicts, tc.want.requests)
			}
			for k := range requests {
				// The shards' sum, step by step.
				var sum int64
				for _, d := range tc.docs {
					if k < len(d.Steps) {
						sum += d.Steps[k].Requests
					}
				}
				if requests[k] != tc.want.requests[k] || requests[k] != sum {
					t.Errorf("step %d: %d requests, want %d (the shards' sum %d)", k+1, requests[k], tc.want.requests[k], sum)
				}
			}
			if c.Sustainable != tc.want.sustainable || c.Stop != tc.want.stop || c.Shards != len(tc.docs) || c.Shard != "" {
				t.Errorf("sustainable %v, stop %q (%s), shards %d: want %v, %q, %d", c.Sustainable, c.Stop, c.StopText, c.Shards, tc.want.sustainable, tc.want.stop, len(tc.docs))
			}
			all := strings.Join(c.Coverage, "\n")
			for _, w := range tc.want.coverage {
				if !strings.Contains(all, w) {
					t.Errorf("coverage %q does not say %q", c.Coverage, w)
				}
			}
			if len(tc.want.coverage) == 0 && len(c.Coverage) > 0 {
				t.Errorf("coverage %q of a complete merge", c.Coverage)
			}
			for _, st := range c.Steps {
				if st.Verdict == result.CapFail && (len(st.Broke) == 0 || !strings.HasPrefix(st.Broke[0], "errors.rate < 5% (measured 5.00%")) {
					t.Errorf("%v broke %q: want the merged error rate", st.Load, st.Broke)
				}
			}
			if c.BrokeAt > 0 && !strings.HasPrefix(c.BrokeFirst, "errors.rate < 5% (measured 5.00%") {
				t.Errorf("broke first %q", c.BrokeFirst)
			}
		})
	}
}

// A target a shard found unreachable before a step, or saw go down, makes
// the merged step TARGET DOWN; what a shard saw go down in its warm-up
// says so.
func TestMergeTargetDown(t *testing.T) {
	a, b := shardDoc(t, "0/2", 0, 0), shardDoc(t, "1/2", 0)
	b.Steps = append(b.Steps, result.CapacityStep{Load: 20, Verdict: result.CapTargetDown, Why: "unreachable before the step: connection refused"})
	b.Stop, b.StopText = result.StopTargetDown, "the target went down at 20"
	c, _, err := Merge([]*result.Capacity{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	hl := c.Headline()
	if c.Stop != result.StopTargetDown || len(c.Steps) != 2 || c.Steps[1].Verdict != result.CapTargetDown ||
		!strings.HasPrefix(hl.Text, "TARGET DOWN · at 20/s: shard 1/2: unreachable before the step") {
		t.Errorf("stop %q, steps %+v, headline %q", c.Stop, c.Steps, hl.Text)
	}

	a, b = shardDoc(t, "0/2", 0, 0), shardDoc(t, "1/2", 0, 0)
	down := b.Steps[1].Run
	down.Outages = []result.Outage{{Kind: result.DownSilent, StartNS: 500 * time.Millisecond}}
	down.NoteTargetDown()
	b.Steps[1].Verdict, b.Steps[1].Why = result.CapTargetDown, "during the warm-up: at +0.5 s (silent)"
	c, _, err = Merge([]*result.Capacity{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Steps[1].Verdict != result.CapTargetDown || !strings.HasPrefix(c.Steps[1].Why, "during the warm-up: ") || c.Stop != result.StopTargetDown {
		t.Errorf("step 2 %s %q, stop %q: want target down during the warm-up", c.Steps[1].Verdict, c.Steps[1].Why, c.Stop)
	}
}

func TestMergeRefuses(t *testing.T) {
	other := shardDoc(t, "1/2", 0, 0, 0)
	other.Settings.Loads = []float64{10, 20, 80}
	misaligned := shardDoc(t, "1/2", 0, 0, 0)
	misaligned.Steps[2].Load = 30
	three := shardDoc(t, "1/3", 0, 0, 0)
	search := shardDoc(t, "", 0)
	search.Settings.Loads = nil
	closed := shardDoc(t, "1/2", 0)
	closed.Model = "closed"
	for _, tc := range []struct {
		name string
		docs []*result.Capacity
		want string
	}{
		{"a search", []*result.Capacity{search}, "b.json is not the document of a shard of a capacity ladder"},
		{"the same shard twice", []*result.Capacity{shardDoc(t, "0/2", 0), shardDoc(t, "0/2", 0)}, "shard 0/2 is in both a.json and b.json"},
		{"different ladders", []*result.Capacity{shardDoc(t, "0/2", 0), other}, "a.json plays the ladder 10,20,40, b.json the ladder 10,20,80"},
		{"a step off its load", []*result.Capacity{shardDoc(t, "0/2", 0), misaligned}, "b.json: step 3 is at 30, not at the ladder's load 3"},
		{"shards of different runs", []*result.Capacity{shardDoc(t, "0/2", 0), three}, "a.json is shard 0/2, b.json shard 1/3"},
		{"different models", []*result.Capacity{shardDoc(t, "0/2", 0), closed}, "a.json is of the open model, b.json of the closed model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{"a.json", "b.json"}[2-len(tc.docs):]
			if _, _, err := Merge(tc.docs, names); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestShardedLadder: two shards of one ladder, played at once against a
// server of known capacity and merged, give per-step totals that are the
// shards' sums and the sustainable load an unsharded ladder finds there;
// without one shard's document the merge says so and judges no step.
func TestShardedLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("three real ladders")
	}
	const R = 30.0
	// 60/s over a 2s step is 120 requests, of which the server answers
	// at most its half-second burst and 2s at R: a clear break. It is
	// the last: a server that drops what it cannot take drops the next
	// step's reachability check too, when one shard is still on it.
	loads := []float64{10, 20, 60}
	ladder := func(plan *scenario.Plan, shard engine.Shard) *result.Capacity {
		j := DefaultJudgement
		// The server's capacity is the subject (see searchLobby).
		j.LagBound = 10 * time.Second
		r := &EngineRunner{Plan: plan, Base: engine.Config{Watchdog: -1, Grace: 500 * time.Millisecond, Shard: shard}, Hold: 2 * time.Second, Judge: j, KeepRuns: !shard.Whole()}
		s := LadderSettings{Loads: loads, Budget: 2 * time.Minute, StepCost: 2 * time.Second}
		if !shard.Whole() {
			s.Shard = shard.String()
		}
		c, err := Ladder(context.Background(), s, r, time.Now, func(st result.CapacityStep) {
			t.Logf("shard %s %v/s: %s %v %s (err %.1f%%)", shard, st.Load, st.Verdict, st.Broke, st.Why, st.ErrorRate*100)
		})
		if err != nil {
			t.Error(err)
			return nil
		}
		c.Settings.StepNS, c.Settings.LagBoundNS = 2*time.Second, j.LagBound
		return c
	}
	// The unsharded ladder and the two shards' play at the same time,
	// against two lobbies of the same capacity: each lobby sees one
	// ladder's load, as if they ran one after the other.
	newPlan := func() *scenario.Plan {
		return pollPlan(t, (&cappedLobby{CapPerSec: R, Burst: 4}).Start(t)) // Burst: two reachability checks at once
	}
	wholePlan, shardPlan := newPlan(), newPlan()
	var whole *result.Capacity
	shards := make([]*result.Capacity, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		whole = ladder(wholePlan, engine.Shard{})
	}()
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shards[i] = ladder(shardPlan, engine.Shard{Index: i, Count: 2})
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if whole.Sustainable != 20 || whole.BrokeAt != 60 {
		t.Fatalf("unsharded: sustainable %v, broke at %v: want 20 and 60 against a server of %v/s", whole.Sustainable, whole.BrokeAt, R)
	}
	for _, s := range shards {
		if len(s.Steps) != len(loads) || s.Headline().Status != result.StatusShard || s.Sustainable != 0 {
			t.Fatalf("shard %s: %d steps, %s: want every load played, no verdict of its own", s.Shard, len(s.Steps), s.Headline().Text)
		}
	}
	c, _, err := Merge(shards, []string{"s0.json", "s1.json"})
	if err != nil {
		t.Fatal(err)
	}
	for k, st := range c.Steps {
		sum := shards[0].Steps[k].Requests + shards[1].Steps[k].Requests
		if st.Requests != sum || st.Requests == 0 {
			t.Errorf("%v/s: %d requests merged, the shards' sum is %d", st.Load, st.Requests, sum)
		}
	}
	if c.Sustainable != whole.Sustainable || c.BrokeAt != whole.BrokeAt || len(c.Coverage) > 0 {
		t.Errorf("merged: sustainable %v, broke at %v, coverage %q; the unsharded ladder held %v, broke at %v", c.Sustainable, c.BrokeAt, c.Coverage, whole.Sustainable, whole.BrokeAt)
	}
	half, _, err := Merge(shards[:1], []string{"s0.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(half.Coverage) != 1 || !strings.Contains(half.Coverage[0], "shard 1/2 missing") || half.Stop != result.StopHarness || half.Sustainable != 0 {
		t.Errorf("one shard of two: coverage %q, stop %q, sustainable %v", half.Coverage, half.Stop, half.Sustainable)
	}
}
