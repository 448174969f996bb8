package simclient

import (
	"slices"
	"testing"
	"time"
)

// TestProbeQueue: requests leave the queue as they are taken, in order or
// by the number a reply names (wrapping past 0 as Leviathan's do), or
// lost when a timeout old, oldest first; a number taken twice or never
// sent finds nothing.
func TestProbeQueue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name  string
		ids   []uint32
		take  []int64 // by id, or -1: the oldest
		found []bool
		lost  []uint32 // at t0 + timeout after the last sent
	}{
		{"in order", []uint32{0, 0, 0, 0}, []int64{-1, -1}, []bool{true, true}, []uint32{0, 0}},
		{"by number", []uint32{7, 8, 9, 10}, []int64{9, 7, 9, 11, -1}, []bool{true, true, false, false, true}, []uint32{10}},
		{"past the wrap", []uint32{0xfffffffe, 0xffffffff, 1, 2}, []int64{1, 0xfffffffe}, []bool{true, true}, []uint32{0xffffffff, 2}},
		{"all taken", []uint32{1, 2}, []int64{2, 1, -1}, []bool{true, true, false}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q ProbeQueue
			for k, id := range tc.ids {
				q.Add(ProbeFlight{ID: id, Sent: t0.Add(time.Duration(k) * time.Millisecond)})
			}
			for k, id := range tc.take {
				var ok bool
				if id < 0 {
					_, ok = q.Take()
				} else {
					var f ProbeFlight
					f, ok = q.TakeID(uint32(id))
					ok = ok && f.ID == uint32(id)
				}
				if ok != tc.found[k] {
					t.Fatalf("take %d (%d): found %v, want %v", k, id, ok, tc.found[k])
				}
			}
			var lost []uint32
			q.Expire(t0.Add(time.Duration(len(tc.ids)-2)*time.Millisecond+time.Second), time.Second, func(f ProbeFlight) { lost = append(lost, f.ID) })
			q.Expire(t0.Add(time.Hour), time.Second, func(f ProbeFlight) { lost = append(lost, f.ID) })
			if !slices.Equal(lost, tc.lost) {
				t.Errorf("lost %v, want %v", lost, tc.lost)
			}
			if _, ok := q.Oldest(); ok {
				t.Error("a request left awaited")
			}
		})
	}
}

// TestProbeQueueHoldsInFlight: a queue through which a million requests
// pass, about a hundred in flight at a time, holds room for a few hundred,
// not a million: answered in order, by number out of order (every other
// one, the rest lost when a timeout old), or all lost.
func TestProbeQueueHoldsInFlight(t *testing.T) {
	const n = 1_000_000
	for _, how := range []string{"in order", "by number", "lost"} {
		t.Run(how, func(t *testing.T) {
			var q ProbeQueue
			t0 := time.Unix(1000, 0)
			gone := 0
			count := func(ProbeFlight) { gone++ }
			for k := 1; k <= n; k++ {
				now := t0.Add(time.Duration(k) * time.Millisecond)
				q.Add(ProbeFlight{ID: uint32(k), Sent: now})
				switch {
				case k <= 100:
				case how == "in order":
					q.Take()
					gone++
				case how == "by number" && k%2 == 0:
					if _, ok := q.TakeID(uint32(k - 50)); ok {
						gone++
					}
				}
				q.Expire(now, 100*time.Millisecond, count)
			}
			held := q.Held()
			q.Clear(count)
			if gone != n || held > 512 {
				t.Fatalf("%d gone, room for %d; want %d gone, room for 512 at most", gone, held, n)
			}
		})
	}
}
