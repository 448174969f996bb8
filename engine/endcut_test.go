package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/simclient"
)

// roomServer is a fake lobby with one room: the leader's session opens it
// and its Close removes it, as the tcp-lobby reference server removes a
// room when its last member's connection closes.
type roomServer struct {
	mu     sync.Mutex
	open   bool
	closed int // sessions closed
}

func (r *roomServer) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed++
	return nil
}

func (r *roomServer) closes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// leaderSession creates the room, then waits in a barrier its member never
// reaches: only the run's stop (or cancellation) ends it; or, with done
// set, its last request is answered after done and it completes. Closing
// it removes the room.
type leaderSession struct {
	r    *roomServer
	done time.Duration
}

func (l *leaderSession) Run(ctx context.Context, _ time.Time) error {
	l.r.mu.Lock()
	l.r.open = true
	l.r.mu.Unlock()
	if l.done > 0 {
		t := time.NewTimer(l.done)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case <-simclient.StopContext(ctx).Done():
		return simclient.Stopped(ctx, simclient.StopContext(ctx), nil)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *leaderSession) Close() error {
	l.r.mu.Lock()
	l.r.open = false
	l.r.mu.Unlock()
	return l.r.close()
}

// errRoomNotFound is the member's join refused: its room was gone.
var errRoomNotFound = errors.New("JOIN_ROOM_ACK ROOM_NOT_FOUND")

// memberSession sends its join at once; the server answers it after delay
// (the injected delay), looking the room up then. A request in flight
// ignores the run's stop; with deaf it ignores cancellation too.
type memberSession struct {
	r     *roomServer
	delay time.Duration
	deaf  bool
}

func (m *memberSession) Run(ctx context.Context, _ time.Time) error {
	t := time.NewTimer(m.delay)
	defer t.Stop()
	done := ctx.Done()
	if m.deaf {
		done = nil
	}
	select {
	case <-t.C:
	case <-done:
		return ctx.Err()
	}
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	if !m.r.open {
		return errRoomNotFound
	}
	return nil
}

func (m *memberSession) Close() error { return m.r.close() }

// TestEndCutKeepsRoomsForJoinsInFlight: at the end of a closed-model run
// a leader waiting in its barrier is cut at once, while its member's join,
// sent before the end and answered 0.5 s after it (the injected delay), is
// in flight; or the leader's own last request, in flight at the end, is
// answered before the join, and the client releases its kept session.
// The leader's connection stays open until drain ends, so the
// join finds the room: no failure is charged to the target for the
// harness's cut. Every session is closed when Execute returns (or, one
// that ignored its cancellation, as soon as it ends); an interrupt with
// Abort still cuts at once. Fake clock.
func TestEndCutKeepsRoomsForJoinsInFlight(t *testing.T) {
	tests := []struct {
		name      string
		interrupt bool // Ctrl-C at 0.5 s, Abort at 0.7 s
		grace     time.Duration
		deaf      bool          // the member ignores cancellation
		leader    time.Duration // the leader completes then (0: cut in its barrier)
		// want: the counts when Execute returns, and when it returned.
		completed, aborted, closedAtReturn int
		returnedAt                         time.Duration
	}{
		{"deadline: the join in flight finds the room", false, time.Hour, false, 0, 1, 1, 2, 1500 * time.Millisecond},
		{"deadline: the leader completing in the grace keeps its room too", false, time.Hour, false, 1200 * time.Millisecond, 2, 0, 2, 1500 * time.Millisecond},
		{"abort: both cut at once, both closed", true, time.Hour, false, 0, 0, 2, 2, 700 * time.Millisecond},
		{"grace over: the leader closed, the deaf member when it ends", false, 200 * time.Millisecond, true, 0, 0, 1, 1, 1400 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				r := &roomServer{}
				newS := func(s Start) (Session, error) {
					if s.Slot == 0 {
						return &leaderSession{r: r, done: tc.leader}, nil
					}
					return &memberSession{r: r, delay: 1500 * time.Millisecond, deaf: tc.deaf}, nil
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				abort := make(chan struct{})
				if tc.interrupt {
					time.AfterFunc(500*time.Millisecond, cancel)
					time.AfterFunc(700*time.Millisecond, func() { close(abort) })
				}
				t0 := time.Now()
				x, _, err := Execute(ctx, Options{Plan: closedPlan(2, nil, time.Second, 2), New: newS, Grace: tc.grace, Abort: abort}, nil)
				if err != nil {
					t.Fatal(err)
				}
				st := x.Stats.Snapshot()
				if d := time.Since(t0); d != tc.returnedAt {
					t.Errorf("returned after %v (fake clock), want %v", d, tc.returnedAt)
				}
				if st.Failed != 0 || st.Completed != int64(tc.completed) || st.Aborted != int64(tc.aborted) {
					t.Errorf("sessions %+v: want none failed, %d completed (the member's join), %d cut", st, tc.completed, tc.aborted)
				}
				if n := r.closes(); n != tc.closedAtReturn {
					t.Errorf("%d sessions closed when Execute returned, want %d", n, tc.closedAtReturn)
				}
				time.Sleep(time.Hour) // a session drain gave up on ends
				if n := r.closes(); n != 2 {
					t.Errorf("%d sessions closed in the end, want both", n)
				}
			})
		})
	}
}
