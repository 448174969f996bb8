package simclient

import (
	"context"
	"testing"
	"testing/synctest"
)

type countCancel struct{ n int }

func (c *countCancel) Cancel() { c.n++ }

// TestCancelSet: the context's end cancels every member still in the set,
// once, and none removed; each member's slot follows it as others leave;
// a member added after the end is cancelled at once; Close lets the
// context go (its end cancels nothing more).
func TestCancelSet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		remove []int
	}{
		{"none", 0, nil},
		{"one kept", 1, nil},
		{"one removed", 1, []int{0}},
		{"first, middle and last removed", 6, []int{0, 3, 5}},
		{"all removed", 4, []int{2, 0, 3, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				s := NewCancelSet(ctx)
				ms := make([]countCancel, tc.n)
				slots := make([]int32, tc.n)
				for i := range ms {
					s.Add(&ms[i], &slots[i])
				}
				removed := map[int]bool{}
				for _, i := range tc.remove {
					s.Remove(&slots[i])
					s.Remove(&slots[i]) // twice: nothing more
					removed[i] = true
					if slots[i] != -1 {
						t.Fatalf("removed member %d keeps slot %d", i, slots[i])
					}
					for j := range ms {
						if !removed[j] && s.members[slots[j]].c != &ms[j] {
							t.Fatalf("member %d's slot %d holds another", j, slots[j])
						}
					}
				}
				if got := s.Len(); got != tc.n-len(tc.remove) {
					t.Fatalf("Len = %d, want %d", got, tc.n-len(tc.remove))
				}
				cancel()
				synctest.Wait()
				for i := range ms {
					if want := map[bool]int{true: 0, false: 1}[removed[i]]; ms[i].n != want {
						t.Errorf("member %d cancelled %d times, want %d", i, ms[i].n, want)
					}
					if slots[i] != -1 {
						t.Errorf("member %d keeps slot %d after the end", i, slots[i])
					}
				}
				var late countCancel
				var slot int32
				s.Add(&late, &slot)
				if late.n != 1 || slot != -1 {
					t.Errorf("added after the end: cancelled %d times, slot %d; want 1, -1", late.n, slot)
				}
			})
		})
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := NewCancelSet(ctx)
		var m countCancel
		var slot int32
		s.Add(&m, &slot)
		s.Close()
		cancel()
		synctest.Wait()
		if m.n != 0 {
			t.Error("a closed set's context still cancelled its member")
		}
	})
}

// TestSharedCancels: a Shared keeps one set per context, lets go the sets
// of contexts that ended, and Close releases the rest.
func TestSharedCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sh := &Shared{}
		a, cancelA := context.WithCancel(context.Background())
		b, cancelB := context.WithCancel(context.Background())
		sa := sh.Cancels(a)
		if sh.Cancels(a) != sa || sh.Cancels(b) == sa {
			t.Fatal("not one set per context")
		}
		cancelA()
		synctest.Wait()
		sh.Cancels(b)
		if len(sh.cancels.sets) != 1 || sh.cancels.sets[0].Context() != b {
			t.Fatalf("%d sets kept after a's end, want b's alone", len(sh.cancels.sets))
		}
		var m countCancel
		var slot int32
		sh.Cancels(b).Add(&m, &slot)
		sh.closeCancels()
		cancelB()
		synctest.Wait()
		if m.n != 0 {
			t.Error("after closeCancels, b's end still cancelled a member")
		}
	})
}
