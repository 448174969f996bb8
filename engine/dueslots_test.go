package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/lobbybench/lobbybench/internal/instant"
)

// The resumer's heap: slots come out in due order whatever was removed
// from the middle, every slot knows its place (hidx, -1 once out), and
// neither a suspension nor a wake allocates once the heap has grown.
func TestDueSlots(t *testing.T) {
	base := instant.Of(time.Unix(1000, 0))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 100} {
		var h dueSlots
		slots := make([]*slot, n)
		for i := range slots {
			slots[i] = &slot{hidx: -1}
			h.push(dueSlot{at: base.Add(time.Duration(rng.IntN(50)) * time.Millisecond), s: slots[i]})
		}
		check := func() {
			t.Helper()
			for i, d := range h {
				if d.s.hidx != i {
					t.Fatalf("n=%d: slot at %d says it is at %d", n, i, d.s.hidx)
				}
				if i > 0 && d.at.Before(h[(i-1)/2].at) {
					t.Fatalf("n=%d: heap order broken at %d", n, i)
				}
			}
		}
		check()
		removed := map[*slot]bool{}
		for _, s := range slots[:n/3] {
			if d := h.remove(s.hidx); d.s != s || s.hidx != -1 {
				t.Fatalf("n=%d: remove took %p (hidx %d), want %p", n, d.s, s.hidx, s)
			}
			removed[s] = true
			check()
		}
		var got []instant.Instant
		for len(h) > 0 {
			d := h.popMin()
			if removed[d.s] || d.s.hidx != -1 {
				t.Fatalf("n=%d: popped a removed slot, or one still placed (%d)", n, d.s.hidx)
			}
			got = append(got, d.at)
			check()
		}
		if len(got) != n-n/3 || !slices.IsSorted(got) {
			t.Fatalf("n=%d: popped %d slots, sorted %v", n, len(got), slices.IsSorted(got))
		}
	}

	h := make(dueSlots, 0, 8)
	s := &slot{hidx: -1}
	if a := testing.AllocsPerRun(100, func() {
		h.push(dueSlot{at: base, s: s})
		h.remove(s.hidx)
		h.push(dueSlot{at: base, s: s})
		h.popMin()
	}); a != 0 {
		t.Errorf("a suspension and its wake allocate %v times, want 0", a)
	}
}

// TestClientStateSizes: what the engine keeps per closed-model client, a
// quarter of a million of them with virtual flows, stays in its size
// class: a slot in the 192-byte class (its flags took a padded word of
// their own, and the 208-byte class), a suspended slot's heap entry 16
// bytes (with a time.Time, 32).
func TestClientStateSizes(t *testing.T) {
	if n := unsafe.Sizeof(slot{}); n > 192 {
		t.Errorf("a slot is %d bytes, over the 192-byte size class", n)
	}
	if n := unsafe.Sizeof(dueSlot{}); n > 16 {
		t.Errorf("a heap entry is %d bytes, want 16", n)
	}
}
