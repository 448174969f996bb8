package result

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestMergeSessionsAndShardRuns checks the engine's figures survive a JSON
// round trip and a merge: sessions summed field by field, shard runs kept
// in merge order, and sessions left out when any shard lacks them.
func TestMergeSessionsAndShardRuns(t *testing.T) {
	shard := func(i int, s Sessions) *Run {
		r := NewRun()
		r.StartedAt = fixedStart
		r.Sessions = &s
		r.ShardRuns = []ShardRun{{Shard: string(rune('0'+i)) + "/3", Protocol: "udp-lobby", Model: "open", Seed: 1,
			Sources: 2, Sessions: s, Harness: Harness{PeakRSSBytes: int64(i+1) << 20, GOMAXPROCS: 2, CPUSeconds: 0.5}}}
		var buf bytes.Buffer
		if err := writeJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRun(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Sessions, r.Sessions) || !reflect.DeepEqual(back.ShardRuns, r.ShardRuns) {
			t.Fatalf("JSON round trip: %+v %+v, want %+v %+v", back.Sessions, back.ShardRuns, r.Sessions, r.ShardRuns)
		}
		return back
	}
	runs := []*Run{
		shard(0, Sessions{Started: 10, Completed: 7, Failed: 2, Cut: 1, DroppedNoSlot: 1, MaxActive: 4}),
		shard(1, Sessions{Started: 11, Completed: 11, DroppedLate: 2, MaxActive: 5}),
		shard(2, Sessions{Started: 9, Completed: 6, Failed: 3, MaxActive: 3}),
	}
	m, err := Merge(runs...)
	if err != nil {
		t.Fatal(err)
	}
	want := Sessions{Started: 30, Completed: 24, Failed: 5, Cut: 1, DroppedNoSlot: 1, DroppedLate: 2, MaxActive: 12}
	if m.Sessions == nil || *m.Sessions != want {
		t.Errorf("merged sessions %+v, want %+v", m.Sessions, want)
	}
	if len(m.ShardRuns) != 3 || m.ShardRuns[0].Shard != "0/3" || m.ShardRuns[2].Shard != "2/3" || m.ShardRuns[1].Sessions.Started != 11 {
		t.Errorf("merged shard runs %+v", m.ShardRuns)
	}
	if runs[0].Sessions.Started != 10 || len(runs[0].ShardRuns) != 1 {
		t.Error("merge modified its input")
	}
	// A merged run merges again (nested shards) to the same sums.
	again, err := Merge(m, shard(0, Sessions{Started: 1, Completed: 1, MaxActive: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if again.Sessions.Started != 31 || again.Sessions.MaxActive != 13 || len(again.ShardRuns) != 4 || again.Shards != 4 {
		t.Errorf("re-merged: sessions %+v, %d shard runs, shards %d", again.Sessions, len(again.ShardRuns), again.Shards)
	}

	// A shard from a producer that did not record sessions: no partial sum.
	old := NewRun()
	old.StartedAt = fixedStart
	m, err = Merge(runs[0], old, runs[1])
	if err != nil {
		t.Fatal(err)
	}
	if m.Sessions != nil {
		t.Errorf("merged sessions %+v with a shard lacking them, want nil", m.Sessions)
	}
	if len(m.ShardRuns) != 2 {
		t.Errorf("shard runs %+v, want the two recorded", m.ShardRuns)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	if s, ok := top["sessions"]; ok {
		t.Errorf("nil sessions written to JSON as %s", s)
	}
}
