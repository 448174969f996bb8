package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr bool
	}{
		{"0/1", Shard{0, 1}, false},
		{"2/4", Shard{2, 4}, false},
		{" 3 / 4 ", Shard{3, 4}, false},
		{"4/4", Shard{}, true},  // shards are numbered from 0
		{"-1/4", Shard{}, true}, // negative index
		{"0/0", Shard{}, true},  // no shards
		{"1", Shard{}, true},    // not i/n
		{"a/b", Shard{}, true},  // not numbers
		{"", Shard{}, true},     // empty
	}
	for _, tc := range tests {
		got, err := ParseShard(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	if s := (Shard{}).String(); s != "0/1" {
		t.Errorf("zero Shard is %q, want 0/1", s)
	}
}

// TestShardPartsSum checks that the parts of a count always add up.
func TestShardPartsSum(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for total := 0; total <= 50; total++ {
			sum := 0
			for i := range n {
				sum += Shard{i, n}.Part(total)
			}
			if sum != total {
				t.Fatalf("%d shards of %d sum to %d", n, total, sum)
			}
		}
	}
}

// TestOpenShardsSumToWhole runs an open-model plan whole and as 1, 2 and 3
// shards, with uniform and with Poisson arrivals: the shards together must
// start exactly the whole run's arrivals (same ids, same flows, same
// intended offsets), never share one, and keep every group on one shard.
func TestOpenShardsSumToWhole(t *testing.T) {
	for _, arr := range []scenario.Arrivals{scenario.ArrivalsUniform, scenario.ArrivalsPoisson} {
		t.Run(string(arr), func(t *testing.T) { testOpenShardsSumToWhole(t, arr) })
	}
}

func testOpenShardsSumToWhole(t *testing.T, arr scenario.Arrivals) {
	flows := []scenario.Flow{
		{Name: "solo", Weight: 3, GroupSize: 1},
		{Name: "pair", Weight: 2, GroupSize: 2},
		{Name: "four", Weight: 1, GroupSize: 4},
	}
	plan := openPlan(20, []scenario.Stage{{Target: 80, For: 3 * time.Second}}, 3*time.Second, 10000, flows...)
	plan.Load.Arrivals = arr
	type key struct {
		id, flow, seq int
		at            time.Duration
	}
	run := func(sh Shard) []key {
		var out []key
		synctest(t, func(t *testing.T) {
			var r recorder
			x, _, err := Execute(context.Background(), Options{Plan: plan, Shard: sh, New: r.factory(time.Millisecond)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range r.starts {
				out = append(out, key{s.ID, s.Flow, s.Seq, s.Intended.Sub(x.StartTime())})
			}
		})
		return out
	}
	whole := run(Shard{})
	// ∫ 20→80 over 3s = 150: exactly for the uniform schedule; a Poisson
	// count of mean 150 within 4σ (the seed fixes it).
	if bound := 4 * math.Sqrt(150); arr == scenario.ArrivalsUniform && len(whole) != 150 ||
		math.Abs(float64(len(whole)-150)) > bound {
		t.Fatalf("whole run started %d, want 150 (%s arrivals)", len(whole), arr)
	}
	sched := plan.Load.Schedule(plan.Seed)
	for i, k := range whole {
		if due, ok := sched.Next(); !ok || k.id != i || k.at != due {
			t.Fatalf("arrival %d (id %d) due at %v, the schedule says %v (%v)", i, k.id, k.at, due, ok)
		}
	}
	if _, ok := sched.Next(); ok {
		t.Errorf("the run started %d arrivals, the schedule has more", len(whole))
	}
	if arr == scenario.ArrivalsPoisson {
		evenly := 0
		for i, k := range whole {
			if due, _ := plan.Load.Ramp().Due(uint64(i)); k.at == due {
				evenly++
			}
		}
		if evenly > 1 {
			t.Errorf("%d Poisson arrivals fall on the uniform schedule's times", evenly)
		}
	}
	for n := 1; n <= 3; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var all []key
			groupShard := map[[2]int]int{}
			for i := range n {
				part := run(Shard{i, n})
				if n > 1 && (len(part) < len(whole)/n/2 || len(part) > 2*len(whole)/n) {
					t.Errorf("shard %d/%d took %d of %d arrivals: unbalanced", i, n, len(part), len(whole))
				}
				for _, k := range part {
					g := [2]int{k.flow, k.seq / flows[k.flow].GroupSize}
					if prev, ok := groupShard[g]; ok && prev != i {
						t.Errorf("group %v on shards %d and %d", g, prev, i)
					}
					groupShard[g] = i
				}
				all = append(all, part...)
			}
			slices.SortFunc(all, func(a, b key) int { return a.id - b.id })
			if !slices.Equal(all, whole) {
				t.Errorf("shards together started %d arrivals differing from the whole run's %d", len(all), len(whole))
			}
		})
	}
}

// TestClosedShardsSumToWhole: at every instant the shards' live clients add
// up to the whole run's target, and their slots never overlap.
func TestClosedShardsSumToWhole(t *testing.T) {
	plan := closedPlan(0, []scenario.Stage{{Target: 10, For: time.Second}, {Target: 10, For: time.Second}}, 2*time.Second, 10)
	slots := map[int]int{}
	total := int64(0)
	for i := range 3 {
		synctest(t, func(t *testing.T) {
			var r recorder
			x, _, err := Execute(context.Background(), Options{Plan: plan, Shard: Shard{i, 3}, New: r.factory(20 * time.Millisecond)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			total += x.Stats.MaxActive.Load()
			for _, s := range r.starts {
				if prev, ok := slots[s.Slot]; ok && prev != i {
					t.Errorf("slot %d on shards %d and %d", s.Slot, prev, i)
				}
				slots[s.Slot] = i
			}
		})
	}
	if total != 10 || len(slots) != 10 {
		t.Errorf("shards peaked at %d clients over %d slots, want 10 and 10", total, len(slots))
	}
}
