package ratelimit

import (
	"sync"
	"testing"
)

const sec = int64(1e9)

func TestNewRejectsBadSettings(t *testing.T) {
	for _, c := range []struct {
		rate       float64
		burst, max int
	}{
		{0, 1, 1},  // zero rate
		{-1, 1, 1}, // negative rate
		{1, 0, 1},  // zero burst
		{1, 1, 0},  // zero table
	} {
		if _, err := New[int](c.rate, c.burst, c.max); err == nil {
			t.Errorf("New(%v, %d, %d): no error", c.rate, c.burst, c.max)
		}
	}
}

func TestBucket(t *testing.T) {
	l, err := New[string](10, 3, 100) // 10/s, burst 3
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at   int64
		want bool
	}{
		{0, true},             // burst token 1
		{0, true},             // 2
		{0, true},             // 3
		{0, false},            // empty
		{sec / 20, false},     // 50 ms: half a token
		{sec / 10, true},      // 100 ms: one token
		{sec / 10, false},     // spent
		{10 * sec, true},      // long idle: capped at burst
		{10 * sec, true},      // 2
		{10 * sec, true},      // 3
		{10 * sec, false},     // burst does not exceed 3
		{10*sec - sec, false}, // clock going backwards does not mint tokens
	}
	for i, s := range steps {
		if got := l.Allow("a", s.at); got != s.want {
			t.Fatalf("step %d at %d: Allow = %v, want %v", i, s.at, got, s.want)
		}
	}
}

// TestSpend: credit grows the bucket (never above the burst) before the
// cost is taken; a cost the bucket does not hold takes nothing.
func TestSpend(t *testing.T) {
	l, err := New[string](100, 1000, 100) // 100/s, burst 1000
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at           int64
		credit, cost float64
		want         bool
	}{
		{0, 0, 900, true},     // 100 left
		{0, 0, 200, false},    // 100 left: nothing taken
		{0, 150, 200, true},   // 250 - 200: 50 left
		{0, 5000, 1000, true}, // credit capped at the burst: 1000 - 1000
		{0, 0, 1, false},      // empty
		{sec, 0, 100, true},   // one second refilled 100
		{sec, 36, 37, false},  // 36 credited, 37 not held
		{sec, 0, 36, true},    // the 36 were kept
	}
	for i, s := range steps {
		if got := l.Spend("a", s.at, s.credit, s.cost); got != s.want {
			t.Fatalf("step %d: Spend(credit %v, cost %v) = %v, want %v", i, s.credit, s.cost, got, s.want)
		}
	}
}

func TestKeysIndependent(t *testing.T) {
	l, _ := New[string](1, 1, 100)
	if !l.Allow("a", 0) || l.Allow("a", 0) {
		t.Fatal("key a: want one allowed then denied")
	}
	if !l.Allow("b", 0) {
		t.Fatal("key b was slowed by key a")
	}
}

func TestNilAllowsAll(t *testing.T) {
	var l *Limiter[int]
	for i := 0; i < 10; i++ {
		if !l.Allow(1, 0) {
			t.Fatal("nil limiter denied")
		}
	}
	if l.Len() != 0 || l.Sweep(0) != 0 || l.Evicted() != 0 {
		t.Fatal("nil limiter reports state")
	}
}

func TestBoundedMemory(t *testing.T) {
	l, _ := New[int](1, 5, 64)
	for i := 0; i < 10000; i++ {
		l.Allow(i, int64(i)) // all busy: 1 ns apart, nothing refills
		if n := l.Len(); n > 64 {
			t.Fatalf("after %d keys: %d tracked, max 64", i+1, n)
		}
	}
	if l.Evicted() == 0 {
		t.Fatal("a table full of busy keys must evict")
	}
}

func TestSweepForgetsRefilled(t *testing.T) {
	l, _ := New[int](10, 2, 100)
	l.Allow(1, 0)
	l.Allow(2, 0)
	l.Allow(2, 0)
	l.Allow(3, sec) // fresh at 1 s
	// At 1 s, key 1 (1 token spent at 0) and key 2 (2 spent) have refilled; key 3 has not.
	if n := l.Sweep(sec); n != 2 {
		t.Fatalf("Sweep removed %d, want 2", n)
	}
	if l.Len() != 1 {
		t.Fatalf("Len = %d, want 1", l.Len())
	}
}

func TestFullTableSweepsBeforeEvicting(t *testing.T) {
	l, _ := New[int](10, 1, 4)
	for k := 0; k < 4; k++ {
		l.Allow(k, 0)
	}
	// Key 4 arrives 1 s later, when every bucket has refilled: the sweep frees
	// them all and nothing busy is evicted.
	l.Allow(4, sec)
	if l.Evicted() != 0 {
		t.Fatalf("evicted %d refilled buckets instead of sweeping them", l.Evicted())
	}
	if l.Len() != 1 {
		t.Fatalf("Len = %d, want 1", l.Len())
	}
}

func TestConcurrent(t *testing.T) {
	l, _ := New[int](1, 100, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for i := 0; i < 1000; i++ {
				if l.Allow(7, 0) {
					n++
				}
			}
			mu.Lock()
			allowed += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if allowed != 100 {
		t.Fatalf("allowed %d events at one instant with burst 100", allowed)
	}
}

func BenchmarkAllow(b *testing.B) {
	l, _ := New[int](1e9, 1000, 1<<16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Allow(i&1023, int64(i))
	}
}
