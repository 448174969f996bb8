package precise

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSleeper is a sleeper on the bubble's clock (testing/synctest): wait
// sleeps on a Go timer until the armed instant, and arming again wakes it
// to sleep for the new one. Not yet armed, it waits to be, as the
// timerfd does: the thread may reach its first wait before add arms it
// (the test failed now and then under -race on a loaded machine, woken
// at once by a zero instant).
type fakeSleeper struct {
	mu     sync.Mutex
	at     time.Time
	armed  bool
	kick   chan struct{}
	closed bool
}

func newFakeSleeper() *fakeSleeper { return &fakeSleeper{kick: make(chan struct{}, 1)} }

func (s *fakeSleeper) arm(t time.Time) {
	s.mu.Lock()
	s.at, s.armed = t, true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *fakeSleeper) wait() {
	tm := time.NewTimer(time.Hour)
	defer tm.Stop()
	for {
		s.mu.Lock()
		d, armed := time.Until(s.at), s.armed
		s.mu.Unlock()
		if !armed {
			<-s.kick
			continue
		}
		if d <= 0 {
			return
		}
		tm.Reset(d)
		select {
		case <-tm.C:
		case <-s.kick:
		}
	}
}

func (s *fakeSleeper) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// fakePacer is a Pacer on fakeSleepers (each start of its thread makes
// one, kept in *made).
func fakePacer(window time.Duration, made *[]*fakeSleeper) *Pacer {
	return &Pacer{window: window, idle: Idle, newSleeper: func() (sleeper, error) {
		s := newFakeSleeper()
		*made = append(*made, s)
		return s, nil
	}}
}

// wake is one waiter's outcome.
type wake struct {
	name string
	due  time.Duration // from the bubble's start
	at   time.Duration // when Until returned
	err  error
}

// The pacing logic on a fake clock: waits are handed over in deadline
// order (queue order for equal deadlines), deadlines within the window
// of a wake in one batch (at most window early), a sooner deadline
// re-arms the sleeping thread, a cancelled wait leaves the queue, and the
// thread ends after Idle without a wait.
func TestPacerOrder(t *testing.T) {
	ms := time.Millisecond
	type w struct {
		name   string
		due    time.Duration
		add    time.Duration // when it starts waiting
		cancel time.Duration // 0: never
	}
	for _, tc := range []struct {
		name   string
		window time.Duration
		waits  []w
		want   []wake // by name
		order  string // the hand-over order, by names' first letters
		wakes  int64  // the thread's wakes, the idle one included
	}{
		{"deadline order, ties in queue order", 0,
			[]w{{"c", 5 * ms, 0, 0}, {"a", 1 * ms, 0, 0}, {"b1", 3 * ms, 0, 0}, {"b2", 3 * ms, 0, 0}},
			[]wake{{"a", 1 * ms, 1 * ms, nil}, {"b1", 3 * ms, 3 * ms, nil}, {"b2", 3 * ms, 3 * ms, nil}, {"c", 5 * ms, 5 * ms, nil}}, "a b1 b2 c", 4},
		{"a batch within the window", 100 * time.Microsecond,
			[]w{{"a", 1 * ms, 0, 0}, {"b", 1*ms + 50*time.Microsecond, 0, 0}, {"c", 1*ms + 100*time.Microsecond, 0, 0}, {"d", 2 * ms, 0, 0}},
			[]wake{{"a", 1 * ms, 1 * ms, nil}, {"b", 1*ms + 50*time.Microsecond, 1 * ms, nil}, {"c", 1*ms + 100*time.Microsecond, 1 * ms, nil}, {"d", 2 * ms, 2 * ms, nil}}, "a b c d", 3},
		{"a sooner deadline re-arms the thread", 0,
			[]w{{"late", 10 * ms, 0, 0}, {"soon", 2 * ms, 1 * ms, 0}},
			[]wake{{"late", 10 * ms, 10 * ms, nil}, {"soon", 2 * ms, 2 * ms, nil}}, "soon late", 3},
		{"a cancelled wait leaves the queue", 0,
			[]w{{"gone", 2 * ms, 0, 1 * ms}, {"kept", 3 * ms, 0, 0}},
			[]wake{{"gone", 2 * ms, 1 * ms, context.Canceled}, {"kept", 3 * ms, 3 * ms, nil}}, "kept", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var made []*fakeSleeper
				p := fakePacer(tc.window, &made)
				var order []string
				p.handed = func(seq uint64) { order = append(order, tc.waits[seq-1].name) }
				start := time.Now()
				var mu sync.Mutex
				var got []wake
				var wg sync.WaitGroup
				for _, w := range tc.waits {
					wg.Go(func() {
						ctx := context.Background()
						if w.cancel > 0 {
							var cancel context.CancelFunc
							ctx, cancel = context.WithTimeout(ctx, w.cancel)
							defer cancel()
						}
						time.Sleep(w.add)
						err := p.Until(ctx, start.Add(w.due))
						if errors.Is(err, context.DeadlineExceeded) {
							err = context.Canceled
						}
						mu.Lock()
						got = append(got, wake{w.name, w.due, time.Since(start), err})
						mu.Unlock()
					})
					synctest.Wait() // queued in this order
				}
				wg.Wait()
				if o := strings.Join(order, " "); o != tc.order {
					t.Errorf("handed over in order %q, want %q", o, tc.order)
				}
				sort.Slice(got, func(i, j int) bool { return got[i].name < got[j].name })
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("got %+v, want %+v", got[i], tc.want[i])
					}
					if got[i].err == nil && got[i].at < got[i].due-tc.window {
						t.Errorf("%s handed over %v before its deadline, more than the window", got[i].name, got[i].due-got[i].at)
					}
				}
				last := time.Now()
				time.Sleep(Idle)
				synctest.Wait()
				p.mu.Lock()
				defer p.mu.Unlock()
				if p.sl != nil || len(made) != 1 || !made[0].closed {
					t.Errorf("after Idle without a wait (from %v): thread running %v, sleepers %d (closed %v); want it ended, its one sleeper closed", last.Sub(start), p.sl != nil, len(made), len(made) > 0 && made[0].closed)
				}
				if p.wakes != tc.wakes {
					t.Errorf("thread woke %d times, want %d", p.wakes, tc.wakes)
				}
				if len(p.q) != 0 {
					t.Errorf("%d waits left in the queue", len(p.q))
				}
			})
		})
	}
}

// Close releases the queued waits (ErrUnavailable: their callers finish
// on the timer), returns once the thread has ended, and later waits are
// refused; a thread ended by Idle starts again on the next wait.
func TestPacerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var made []*fakeSleeper
		p := fakePacer(0, &made)
		if err := p.Until(context.Background(), time.Now().Add(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * Idle)
		synctest.Wait()
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- p.Until(context.Background(), time.Now().Add(time.Hour)) }()
		}
		synctest.Wait()
		if len(made) != 2 {
			t.Fatalf("%d threads started, want 2 (the first ended idle)", len(made))
		}
		start := time.Now()
		time.Sleep(time.Millisecond)
		p.Close()
		for range 2 {
			if err := <-errs; !errors.Is(err, ErrUnavailable) {
				t.Errorf("a wait queued at Close: %v, want ErrUnavailable", err)
			}
		}
		if d := time.Since(start); d != time.Millisecond {
			t.Errorf("released %v after start, want at Close (1ms)", d)
		}
		if !made[1].closed || p.sl != nil {
			t.Error("the thread still runs after Close")
		}
		if err := p.Until(context.Background(), time.Now().Add(time.Millisecond)); !errors.Is(err, ErrUnavailable) {
			t.Errorf("a wait after Close: %v, want ErrUnavailable", err)
		}
		p.Close() // twice: no effect
	})
}

// A pacer whose thread cannot start (no timerfd: out of descriptors)
// refuses the wait, and the package's Until finishes it on the timer.
func TestPacerNoSleeper(t *testing.T) {
	p := &Pacer{window: Window, idle: Idle, newSleeper: func() (sleeper, error) { return nil, errors.New("too many open files") }}
	if err := p.Until(context.Background(), time.Now().Add(time.Hour)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}
