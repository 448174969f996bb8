package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/caplobby"
	"github.com/lobbybench/lobbybench/result"
)

// TestCapacityShards: two `capacity --shard i/2` ladders played at once
// against a lobby of known capacity, merged by `report merge`, give each
// step the shards' summed figures and the sustainable load an unsharded
// `--loads` ladder finds there; one shard's document alone merges to a
// result that says the other is missing and judges no step.
func TestCapacityShards(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("three real ladders")
	}
	// 8: the shards' drain polls and reachability checks at each step's
	// start, all at once.
	lobby := &caplobby.Lobby{CapPerSec: 10, Burst: 8}
	sc := cappedScenario(t, lobby.Start(t))
	dir := t.TempDir()
	// 1 s steps: the figures compared are the steps' requests, summed
	// exactly whatever their length. 5/s holds with room to spare, and
	// 40/s against 10/s breaks the error gate by far (more than half the
	// requests dropped in 1 s), even if a slow harness spreads the step's
	// 40 requests over 3 s: under the race detector beside two busy
	// loops, two shards of 10, 20 and 60/s against 30/s offered their
	// 60/s so late that it held.
	common := []string{"capacity", "--loads", "2,5,40", "--step", "1s", "--warmup", "0s", "--grace", "500ms", "--lag-bound", "10s", "--watchdog", "0", "--drain", "0s"}
	whole := filepath.Join(dir, "whole.json")
	code, stdout, errs := runCLI(t, append(common, "--json", whole, sc)...)
	if code != exitOK {
		t.Fatalf("unsharded ladder: exit %d\n%s\n%s", code, stdout, errs)
	}
	w := readCapacity(t, whole)
	if w.Sustainable != 5 || w.BrokeAt != 40 || w.Stop != result.StopLadder || len(w.Steps) != 3 {
		t.Fatalf("unsharded ladder: sustainable %v, broke at %v, stop %q: want 5 and 40 against a server of 10/s\n%s", w.Sustainable, w.BrokeAt, w.Stop, stdout)
	}
	paths := []string{filepath.Join(dir, "s0.json"), filepath.Join(dir, "s1.json")}
	var wg sync.WaitGroup
	codes, outs := make([]int, 2), make([]string, 2)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i], _ = runCLI(t, append(common, "--shard", []string{"0/2", "1/2"}[i], "--json", paths[i], sc)...)
		}()
	}
	wg.Wait()
	shards := make([]*result.Capacity, 2)
	for i, p := range paths {
		if codes[i] != exitOK || !strings.HasPrefix(outs[i], "SHARD "+[]string{"0/2", "1/2"}[i]+" · ") {
			t.Fatalf("shard %d: exit %d, stdout:\n%s", i, codes[i], outs[i])
		}
		shards[i] = readCapacity(t, p)
		for _, st := range shards[i].Steps {
			if st.Run == nil || len(st.Run.TimeSeries) == 0 {
				t.Fatalf("shard %d, %v/s: no run kept to merge", i, st.Load)
			}
		}
	}
	merged := filepath.Join(dir, "merged.json")
	code, _, errs = runCLI(t, "report", "merge", paths[0], paths[1], "-o", merged)
	if code != exitOK || !strings.Contains(errs, "2 shards of a 3-load ladder, 3 steps merged: PASS · sustainable 5/s") {
		t.Fatalf("report merge: exit %d\n%s", code, errs)
	}
	m := readCapacity(t, merged)
	for k, st := range m.Steps {
		if sum := shards[0].Steps[k].Requests + shards[1].Steps[k].Requests; st.Requests != sum || st.Run != nil {
			t.Errorf("%v/s: %d requests merged, the shards' sum is %d", st.Load, st.Requests, sum)
		}
	}
	if m.Sustainable != w.Sustainable || m.BrokeAt != w.BrokeAt || m.Shards != 2 || len(m.Coverage) > 0 || m.Status != result.StatusPass {
		t.Errorf("merged: sustainable %v, broke at %v, %d shards, coverage %q, status %s; unsharded: %v, %v", m.Sustainable, m.BrokeAt, m.Shards, m.Coverage, m.Status, w.Sustainable, w.BrokeAt)
	}
	code, _, errs = runCLI(t, "report", "merge", paths[0], "-o", filepath.Join(dir, "half.json"))
	if code != exitInconclusive || !strings.Contains(errs, "coverage: shard 1/2 missing (no document given)") {
		t.Errorf("one shard of two: exit %d, want %d saying the other is missing:\n%s", code, exitInconclusive, errs)
	}
	half := readCapacity(t, filepath.Join(dir, "half.json"))
	if half.Sustainable != 0 || half.Status != result.StatusInconclusive {
		t.Errorf("one shard of two: sustainable %v, status %s", half.Sustainable, half.Status)
	}
	code, _, errs = runCLI(t, "report", "merge", paths[0], paths[0])
	if code != exitUsage || !strings.Contains(errs, "shard 0/2 is in both") {
		t.Errorf("a shard twice: exit %d\n%s", code, errs)
	}
	code, _, errs = runCLI(t, "report", "merge", whole)
	if code != exitUsage || !strings.Contains(errs, "is not the document of a shard of a capacity ladder") {
		t.Errorf("an unsharded ladder: exit %d\n%s", code, errs)
	}
}
