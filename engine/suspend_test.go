package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/simclient"
)

// suspender is a fake simclient.Resumer: its Run suspends in a pause that
// ends pause after its start, and its Resume (told when it was called)
// completes the session at once.
type suspender struct {
	delay   time.Duration // before it suspends
	pause   time.Duration
	until   time.Time
	mu      *sync.Mutex
	resumed *[]resumeCall
	// A wait rather than a pause (SuspendedOn): on socket fd (≥ 0) or
	// on room.
	wait bool
	fd   int
	room *simclient.Group
}

type resumeCall struct {
	at, until time.Time
	stopped   bool
}

func (s *suspender) Run(ctx context.Context, due time.Time) error {
	time.Sleep(s.delay)
	s.until = time.Now().Add(s.pause)
	return simclient.ErrSuspended
}

func (s *suspender) Resume(ctx context.Context) error {
	stopped := simclient.StopContext(ctx).Err() != nil
	s.mu.Lock()
	*s.resumed = append(*s.resumed, resumeCall{at: time.Now(), until: s.until, stopped: stopped})
	s.mu.Unlock()
	if stopped {
		return simclient.ErrStopped // the pause ends cut, as Base.Resume's would
	}
	return nil
}

func (s *suspender) SuspendedUntil() time.Time { return s.until }
func (s *suspender) ParkWaits()                {}
func (s *suspender) SuspendedOn() (int, simclient.Notifier) {
	if !s.wait {
		return -1, nil
	}
	if s.room == nil {
		return s.fd, nil
	}
	return s.fd, s.room
}
func (s *suspender) Close() error { return nil }

// TestClosedSuspends: a closed-model session that suspends in a pause
// (simclient.ErrSuspended) gives up its goroutine and is resumed by the
// resumer at the pause's end, then counted as it ends; a pause that outlasts the run is
// resumed at once when the run stops, and the run ends on time.
func TestClosedSuspends(t *testing.T) {
	tests := []struct {
		name string
		// pauses and delays (before suspending) by client slot
		pauses, delays []time.Duration
		// wantStopped: the pause outlasts the run, so every resumption
		// is the stop's.
		wantStopped bool
	}{
		{"pause within the run", []time.Duration{300 * time.Millisecond, 300 * time.Millisecond}, []time.Duration{0, 0}, false},
		// Slot 1 suspends after slot 0 but is due first: the resumer,
		// waiting for slot 0's pause, must be woken for it.
		{"a later, shorter pause first", []time.Duration{900 * time.Millisecond, 100 * time.Millisecond}, []time.Duration{0, 10 * time.Millisecond}, false},
		{"pause past the run's end", []time.Duration{time.Hour, time.Hour}, []time.Duration{0, 0}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				var mu sync.Mutex
				var resumed []resumeCall
				newS := func(st Start) (Session, error) {
					return &suspender{pause: tc.pauses[st.Slot], delay: tc.delays[st.Slot], mu: &mu, resumed: &resumed}, nil
				}
				plan := closedPlan(2, nil, time.Second, 2)
				t0 := time.Now()
				x, _, err := Execute(context.Background(), Options{Plan: plan, New: newS, Grace: 100 * time.Millisecond}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(t0); took > time.Second+100*time.Millisecond {
					t.Errorf("the run took %v: suspended sessions held it past its end", took)
				}
				st := x.Stats.Snapshot()
				if st.Active != 0 || st.Completed+st.Aborted+st.Failed != st.Started || st.Started == 0 {
					t.Fatalf("after the run: %+v", st)
				}
				if int64(len(resumed)) != st.Started {
					t.Fatalf("%d resumptions for %d sessions", len(resumed), st.Started)
				}
				for _, r := range resumed {
					switch {
					case tc.wantStopped:
						if !r.stopped || !r.at.Equal(t0.Add(time.Second)) {
							t.Errorf("resumed at %v (stopped %v), want at the run's end, stopped", r.at.Sub(t0), r.stopped)
						}
					case r.stopped:
						// A session resumed by the stop may only be one
						// whose pause outlasts the run.
						if !r.until.After(t0.Add(time.Second)) {
							t.Errorf("a pause ending at %v was cut by the stop", r.until.Sub(t0))
						}
					default:
						if !r.at.Equal(r.until) {
							t.Errorf("resumed at %v, want at the pause's end, %v", r.at.Sub(t0), r.until.Sub(t0))
						}
					}
				}
				if !tc.wantStopped && st.Completed < 2 {
					t.Errorf("%d sessions completed, want at least 2 (2 clients, pauses under 1 s)", st.Completed)
				}
			})
		})
	}
}

// waiter is a fake simclient.Resumer whose sessions wait (SuspendedOn):
// the first session of the run suspends in a wait on room or socket fd
// for at most wait; Resume completes it. Later sessions suspend in a pause
// (next: one pause of nextPause) or run until the stop.
type waiter struct {
	first     bool
	wait      time.Duration
	nextPause time.Duration
	fd        int
	room      *simclient.Group
	before    func() // called as the first session suspends
	until     time.Time
	isPause   bool
	resumed   chan resumeCall
}

func (w *waiter) Run(ctx context.Context, due time.Time) error {
	if w.first {
		w.until = time.Now().Add(w.wait)
		if w.before != nil {
			w.before()
		}
		return simclient.ErrSuspended
	}
	if w.nextPause > 0 {
		w.isPause, w.until = true, time.Now().Add(w.nextPause)
		return simclient.ErrSuspended
	}
	<-simclient.StopContext(ctx).Done()
	return simclient.ErrStopped
}

func (w *waiter) Resume(ctx context.Context) error {
	stopped := simclient.StopContext(ctx).Err() != nil
	w.resumed <- resumeCall{at: time.Now(), until: w.until, stopped: stopped}
	if stopped {
		return simclient.ErrStopped
	}
	return nil
}

func (w *waiter) SuspendedUntil() time.Time { return w.until }
func (w *waiter) ParkWaits()                {}
func (w *waiter) Close() error              { return nil }
func (w *waiter) SuspendedOn() (int, simclient.Notifier) {
	if w.isPause {
		return -1, nil
	}
	if w.room == nil {
		return w.fd, nil
	}
	return w.fd, w.room
}

// TestClosedWaitRoom: a closed-model session suspended in a wait for its
// group's room is resumed when the room is published, at that moment, or
// at its wait's end if it never is; a room published before it suspends
// resumes it at once.
func TestClosedWaitRoom(t *testing.T) {
	tests := []struct {
		name      string
		publishAt time.Duration // -1: never; 0: before the wait
		wait      time.Duration
		wantAt    time.Duration
	}{
		{"published during the wait", 200 * time.Millisecond, time.Hour, 200 * time.Millisecond},
		{"never published", -1, 300 * time.Millisecond, 300 * time.Millisecond},
		{"published before the wait", 0, time.Hour, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				g := simclient.NewGroup(2)
				if tc.publishAt == 0 {
					g.SetRoom(simclient.Room{ID: 7})
				} else if tc.publishAt > 0 {
					time.AfterFunc(tc.publishAt, func() { g.SetRoom(simclient.Room{ID: 7}) })
				}
				resumed := make(chan resumeCall, 10)
				n := 0
				newS := func(st Start) (Session, error) {
					n++
					return &waiter{first: n == 1, wait: tc.wait, fd: -1, room: g, resumed: resumed}, nil
				}
				t0 := time.Now()
				if _, _, err := Execute(context.Background(), Options{Plan: closedPlan(1, nil, time.Second, 1), New: newS, Grace: 100 * time.Millisecond}, nil); err != nil {
					t.Fatal(err)
				}
				r := <-resumed
				if r.stopped || r.at.Sub(t0) != tc.wantAt {
					t.Errorf("resumed at %v (stopped %v), want at %v", r.at.Sub(t0), r.stopped, tc.wantAt)
				}
				if len(resumed) != 0 {
					t.Errorf("%d more resumptions, want none: the session resumed twice", len(resumed))
				}
			})
		})
	}
}
