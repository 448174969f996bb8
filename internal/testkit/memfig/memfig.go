// Package memfig measures what a test's sessions keep: the heap and the
// goroutine stacks they add, per session, once they are all parked.
package memfig

import (
	"context"
	"math"
	"runtime"
	"sync"
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
//
// A session whose run ended before they were all parked will never park:
// a request lost on a loaded machine fails a flow without retries (a
// script's expect). Parked then logs it and returns NaN for both figures,
// a try Least makes again, with a server of its own: never a partial
// set's figure.
func Parked(tb testing.TB, n int, start func() *Played, parked func() bool) (heap, stack float64) {
	tb.Helper()
	var before, after runtime.MemStats
	Settle()
	runtime.ReadMemStats(&before)
	p := start()
	defer p.Stop()
	for deadline := time.Now().Add(time.Minute); !parked(); time.Sleep(10 * time.Millisecond) {
		if k, err := p.Ended(); k > 0 {
			tb.Logf("%d of the %d sessions ended before they were all parked (the first: %v): not measured", k, n, err)
			return math.NaN(), math.NaN()
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the %d sessions were not all parked in a minute", n)
		}
	}
	Settle()
	runtime.ReadMemStats(&after)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n),
		float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(n)
}

// SkipUnderRace skips tb under the race detector, whose figures (heap
// and allocations) are its own: its sync.Pool drops items at random and
// its runtime allocates beside the code. The plain run asserts them.
func SkipUnderRace(tb testing.TB) {
	tb.Helper()
	if Race {
		tb.Skip("the race detector's heap and allocation figures are its own (its sync.Pool drops items at random): the plain run asserts them")
	}
}

// Least runs measure until runs of its tries measured (a try that could
// not returns NaN: Parked), at most runs+3 tries, and returns the least of
// each figure: what else the process allocates meanwhile (a server, the
// runtime) only adds to one. NaN when no try measured.
func Least(runs int, measure func() (heap, stack float64)) (heap, stack float64) {
	heap, stack = math.Inf(1), math.Inf(1)
	got := 0
	for try := 0; got < runs && try < runs+3; try++ {
		h, s := measure()
		if math.IsNaN(h) || math.IsNaN(s) {
			continue
		}
		heap, stack, got = min(heap, h), min(stack, s), got+1
	}
	if got == 0 {
		return math.NaN(), math.NaN()
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

// Session is what Play starts: a simulated client (simclient.Session,
// named here so that simclient's own tests may use this package).
type Session interface {
	Run(ctx context.Context, due time.Time) error
	Close() error
}

// Played is the sessions Play started.
type Played struct {
	stop  func()
	mu    sync.Mutex
	ended int
	first error
}

// Stop cancels the sessions' runs, closes them and waits for their
// goroutines.
func (p *Played) Stop() { p.stop() }

// Ended is how many sessions' runs ended before Stop, and the first one's
// error (nil when it ended without one).
func (p *Played) Ended() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended, p.first
}

// Play starts n sessions that newSession makes, each running on a
// goroutine of its own, and returns them (Played).
func Play(tb testing.TB, n int, newSession func(i int) (Session, error)) *Played {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	sessions := make([]Session, 0, n)
	var wg sync.WaitGroup
	p := &Played{}
	p.stop = func() {
		cancel()
		for _, s := range sessions {
			s.Close()
		}
		wg.Wait()
	}
	for i := range n {
		s, err := newSession(i)
		if err != nil {
			p.stop()
			tb.Fatal(err)
		}
		sessions = append(sessions, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Run(ctx, time.Now()); ctx.Err() == nil {
				p.mu.Lock()
				if p.ended++; p.ended == 1 {
					p.first = err
				}
				p.mu.Unlock()
			}
		}()
	}
	return p
}

// Settled is a parked condition for Parked: done (what the server saw,
// every request answered) once it has held for grace, a moment for each
// client to read the answer that made it true.
func Settled(done func() bool, grace time.Duration) func() bool {
	var since time.Time
	return func() bool {
		if !done() {
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) > grace
	}
}

// Flow is one side of a memory comparison: a flow's name ("built-in",
// "scripted") and its steps.
type Flow struct{ Name, Steps string }

// ScriptedKeepsAtMost measures each of flows with measure at n and 2n
// sessions (PerSession), logs the figures (note says what the heap figure
// includes) and fails t when the "scripted" flow keeps more than most
// heap bytes a session more than the "built-in" one.
func ScriptedKeepsAtMost(t *testing.T, most float64, n int, note string, flows []Flow, measure func(steps string, n int) (heap, stack float64)) {
	t.Helper()
	heap := map[string]float64{}
	for _, f := range flows {
		h, s := PerSession(n, func(n int) (float64, float64) { return measure(f.Steps, n) })
		if math.IsNaN(h) {
			t.Fatalf("%s: no try measured: in each, a session ended before they were all parked (logged above)", f.Name)
		}
		heap[f.Name] = h
		t.Logf("%s: %.0f heap bytes, %.0f stack bytes per parked session%s", f.Name, h, s, note)
	}
	if d := heap["scripted"] - heap["built-in"]; d > most {
		t.Errorf("a scripted session keeps %.0f heap bytes more than a built-in one, want at most %.0f", d, most)
	}
}
