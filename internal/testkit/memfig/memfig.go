// Package memfig measures what a test's sessions keep: the heap and the
// goroutine stacks they add, per session, once they are all parked.
package memfig

import (
	"runtime"
	"testing"
	"time"
)

// Settle collects the heap until sync.Pool's victims are gone too: a
// pool's free items outlive one GC, in its victim cache, and would count
// as the sessions'.
func Settle() {
	runtime.GC()
	runtime.GC()
}

// Parked starts n sessions (start, which returns what stops them), waits
// up to a minute for parked to report them all in place, and returns the
// heap bytes (live, after a GC) and the goroutine stack bytes they added,
// per session. Everything start makes counts (a server's state too), so a
// comparison runs the same start for both sides.
func Parked(tb testing.TB, n int, start func() (stop func()), parked func() bool) (heap, stack float64) {
	tb.Helper()
	var before, after runtime.MemStats
	Settle()
	runtime.ReadMemStats(&before)
	stop := start()
	defer stop()
	for deadline := time.Now().Add(time.Minute); !parked(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("the %d sessions were not all parked in a minute", n)
		}
	}
	Settle()
	runtime.ReadMemStats(&after)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n),
		float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(n)
}

// Least runs measure runs times and returns the least of each figure:
// what else the process allocates meanwhile (a server, the runtime) only
// adds to one.
func Least(runs int, measure func() (heap, stack float64)) (heap, stack float64) {
	heap, stack = measure()
	for range runs - 1 {
		h, s := measure()
		heap, stack = min(heap, h), min(stack, s)
	}
	return heap, stack
}
