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

func (s *suspender) SuspendedUntil() time.Time            { return s.until }
func (s *suspender) SuspendedOn() (int, *simclient.Group) { return -1, nil }
func (s *suspender) ParkWaits()                           {}
func (s *suspender) Close() error                         { return nil }

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
