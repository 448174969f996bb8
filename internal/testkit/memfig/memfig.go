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

// PerSession is what one more session keeps: measure's figures (per
// session, as Parked returns them) at n and at 2n sessions, each the
// least of three runs (Least), taken apart. What a run keeps whatever its
// size (a server's buffers, the metrics' histograms: one set per message
// key a flow records and per recorder) cancels out, and a flow that
// records more keys is not charged for them per client.
func PerSession(n int, measure func(n int) (heap, stack float64)) (heap, stack float64) {
	h1, s1 := Least(3, func() (float64, float64) { return measure(n) })
	h2, s2 := Least(3, func() (float64, float64) { return measure(2 * n) })
	return 2*h2 - h1, 2*s2 - s1 // (2n·h2 − n·h1) / n
}

// Allocs is testing.AllocsPerRun(runs, f), the least of three tries:
// AllocsPerRun counts every allocation in the process while it runs, and
// on a loaded machine another goroutine (a test's server winding down,
// the runtime's own) allocating meanwhile made a loop that allocates
// nothing read as one allocation a call. What f allocates itself is in
// every try.
func Allocs(runs int, f func()) float64 {
	least := testing.AllocsPerRun(runs, f)
	for range 2 {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}
