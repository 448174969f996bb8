package simclient

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// baseSession is the smallest protocol session on Base: every step Base
// hands it is one request of 10ms, ended by Finish with the error fail
// gives for its index (nil: it succeeds).
type baseSession struct {
	Base
	fail     map[int]error
	ran      []int
	nexts    []time.Time // Next when each step began
	idles    int
	released int
}

func (s *baseSession) Run(ctx context.Context, due time.Time) error { return s.Play(ctx, due, s) }

func (s *baseSession) Close() error {
	return s.CloseOnce(func() error { s.released++; return nil })
}

func (s *baseSession) Idle() { s.idles++ }

func (s *baseSession) Step(ctx context.Context, i int, st *scenario.Step) error {
	if s.CurStep != i {
		return errors.New("CurStep is not the running step")
	}
	s.ran = append(s.ran, i)
	s.nexts = append(s.nexts, s.Next)
	intended := s.Next
	time.Sleep(10 * time.Millisecond)
	return s.Finish(i, st, intended, intended, s.fail[i])
}

func newBaseSession(t *testing.T, sh *Shared, id int, flow *scenario.Flow) *baseSession {
	t.Helper()
	s := &baseSession{}
	if err := s.Begin(sh, id, flow); err != nil {
		t.Fatal(err)
	}
	s.Join()
	return s
}

func baseShared(t testing.TB, flows string) (*Shared, *metrics.Collector) {
	t.Helper()
	c := metrics.NewCollector(time.Now())
	sh, err := NewShared(testPlan(t, flows), netip.MustParseAddrPort("127.0.0.1:9"), c, Options{Recorders: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh, c
}

// TestBasePlay: Base runs the think and barrier steps itself and hands the
// protocol the others, moving Next from the due time through each step's
// end and each think time drawn from the client's own generator; Finish
// records a step and fails it with its request's reason.
func TestBasePlay(t *testing.T) {
	tests := []struct {
		name    string
		fail    map[int]error
		want    []int // the steps handed to the protocol
		reason  string
		failing string // the failed step's label
	}{
		{name: "complete", want: []int{0, 3, 4}},
		{name: "request error", fail: map[int]error{3: &RequestError{Reason: result.ReasonTimeout, Err: errors.New("no reply")}},
			want: []int{0, 3}, reason: result.ReasonTimeout, failing: "b"},
		{name: "cut by the run's end", fail: map[int]error{0: ErrCancelled}, want: []int{0}, reason: ReasonCancelled, failing: "a"},
		{name: "socket error", fail: map[int]error{4: errors.New("sendto: no buffer space")}, want: []int{0, 3, 4}, reason: ReasonSocket, failing: "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sh, c := baseShared(t, "  - group_size: 2\n    steps: [{list_rooms: {label: a}}, {think: [1s, 2s]}, {barrier: 1}, {list_rooms: {label: b}}, {list_rooms: {label: c}}]\n")
				s := newBaseSession(t, sh, 7, &sh.Plan.Flows[0])
				s.fail = tt.fail
				due := time.Now().Add(time.Second)
				time.Sleep(time.Second) // the session starts on time
				err := s.Run(context.Background(), due)
				if tt.reason == "" && err != nil {
					t.Fatal(err)
				}
				if got := ReasonOf(err); got != tt.reason {
					t.Fatalf("Run = %v, want reason %q", err, tt.reason)
				}
				if !slices.Equal(s.ran, tt.want) {
					t.Fatalf("protocol ran steps %v, want %v", s.ran, tt.want)
				}
				think := sh.Plan.Flows[0].Steps[1].Think.Sample(sh.ThinkRand(7))
				wantNexts := []time.Time{due, due.Add(10*time.Millisecond + think), due.Add(20*time.Millisecond + think)}
				if !slices.EqualFunc(s.nexts, wantNexts[:len(s.nexts)], time.Time.Equal) {
					t.Errorf("Next at each step %v, want %v", s.nexts, wantNexts)
				}
				if wantIdles := min(len(tt.want)-1, 1); s.idles != wantIdles {
					t.Errorf("Idle ran %d times, want %d (before the think time)", s.idles, wantIdles)
				}
				if tt.reason == "" && !s.Next.Equal(due.Add(30*time.Millisecond+think)) {
					t.Errorf("Next after the flow %v, want the end of its last step", s.Next)
				}
				for k, label := range []string{"a", "b", "c"} {
					wantN, wantFail := int64(0), int64(0)
					if slices.Contains(tt.want, []int{0, 3, 4}[k]) {
						wantN = 1 // a cut step is counted too
					}
					if label == tt.failing && tt.reason != ReasonCancelled {
						wantFail = 1
					}
					if n, by := stepFigures(t, c, label); n != wantN || by[tt.reason] != wantFail {
						t.Errorf("step %s: %d requests, failures %v; want %d, %d %s", label, n, by, wantN, wantFail, tt.reason)
					}
				}
			})
		})
	}
}

// TestBaseRenew: the next session of a client keeps its think-time
// generator, re-seeded for its new id, and its group of one; the previous
// session is spent; Close releases once.
func TestBaseRenew(t *testing.T) {
	sh, _ := baseShared(t, "  - steps: [list_rooms]\n  - steps: [list_rooms]\n")
	s := newBaseSession(t, sh, 1, &sh.Plan.Flows[0])
	if err := s.Run(context.Background(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	think, group := s.Think, s.Member.Group
	s.Think.Uint64() // the client used its generator
	fi := s.FlowIndex(&sh.Plan.Flows[1])
	if fi != 1 || s.FlowIndex(&scenario.Flow{}) != -1 {
		t.Fatalf("FlowIndex = %d, foreign flow %d; want 1, -1", fi, s.FlowIndex(&scenario.Flow{}))
	}
	next := &baseSession{Base: s.Renew(2, fi)}
	if next.ID != 2 || next.Flow != &sh.Plan.Flows[1] || next.FlowIdx != 1 || next.CurStep != -1 {
		t.Errorf("renewed: id %d, flow %d, CurStep %d; want 2, 1, -1", next.ID, next.FlowIdx, next.CurStep)
	}
	if next.Think != think || next.Think.Uint64() != sh.ThinkRand(2).Uint64() {
		t.Error("the think-time generator was not kept, re-seeded for the new id")
	}
	// Flow 1's first group of one, in flow 0's recycled group.
	if next.Member.Group == nil || next.Member.Group.Flow != 1 || next.Member.Group.ID != 0 {
		t.Errorf("renewed group %+v, want flow 1's group 0", next.Member.Group)
	}
	if next.Member.Group != group {
		t.Error("the group of one was not recycled (Shared.Rejoin)")
	}
	if err := s.Close(); err != nil || s.released != 0 {
		t.Errorf("Close of the spent session released %d times (%v), want nothing", s.released, err)
	}
	next.Close()
	next.Close()
	if next.released != 1 {
		t.Errorf("two Closes released %d times, want once", next.released)
	}
}

// TestBaseCreatorLeaves: a member that runs the flow's create step and
// ends without creating fails its group's room, so its members stop
// waiting; another member's end does not.
func TestBaseCreatorLeaves(t *testing.T) {
	sh, _ := baseShared(t, "  - group_size: 2\n    steps: [{create_room: {only: leader}}, {join: {room: created, only: members}}]\n")
	flow := &sh.Plan.Flows[0]
	leader, member := newBaseSession(t, sh, 0, flow), newBaseSession(t, sh, 1, flow)
	if leader.Member.Group != member.Member.Group || !leader.Member.Leader() {
		t.Fatal("the two sessions are not one group's leader and member")
	}
	member.Close()
	if _, ok := leader.Member.Group.RoomNow(); ok {
		t.Fatal("a member's end failed the group's room")
	}
	leader.Close()
	if _, err := member.Member.Group.WaitRoom(context.Background()); !errors.Is(err, ErrNoRoom) || !errors.Is(err, errCreatorEnded) {
		t.Errorf("WaitRoom after the creator ended: %v, want ErrNoRoom (%v)", err, errCreatorEnded)
	}
}

// TestBaseBegin: a session starts only on one of the plan's flows and
// with a target.
func TestBaseBegin(t *testing.T) {
	sh, _ := baseShared(t, "  - steps: [list_rooms]\n")
	noTarget, err := NewShared(sh.Plan, netip.AddrPort{}, sh.Collector, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer noTarget.Close()
	tests := []struct {
		name string
		sh   *Shared
		flow *scenario.Flow
		want string // "" for success
	}{
		{"plan's flow", sh, &sh.Plan.Flows[0], ""},
		{"foreign flow", sh, &scenario.Flow{}, "simclient: flow is not one of the plan's flows"},
		{"no target", noTarget, &sh.Plan.Flows[0], "simclient: no udp-lobby target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &baseSession{}
			err := s.Begin(tt.sh, 4, tt.flow)
			if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
				t.Fatalf("Begin = %v, want %q", err, tt.want)
			}
			if err == nil && (s.ID != 4 || s.FlowIdx != 0 || s.Member.Group != nil || s.Rec != sh.Recorder(4)) {
				t.Errorf("Begin set id %d, flow %d, group %v: want 4, 0 and no group before Join", s.ID, s.FlowIdx, s.Member.Group)
			}
		})
	}
}

// TestBaseGroupRoom: a join with room: created gets the room its group's
// creator published, or fails with why it did not come.
func TestBaseGroupRoom(t *testing.T) {
	tests := []struct {
		name   string
		act    func(g *Group, stop context.CancelFunc) // what happens while the member waits
		want   uint32
		reason string // "" for the room; ReasonCancelled for ErrCancelled
	}{
		{"room created", func(g *Group, _ context.CancelFunc) { g.SetRoom(Room{ID: 42}) }, 42, ""},
		{"creator failed", func(g *Group, _ context.CancelFunc) { g.FailRoom(errors.New("join_failed")) }, 0, ReasonCreatorFailed},
		{"not within the budget", func(*Group, context.CancelFunc) {}, 0, result.ReasonTimeout},
		{"stop signal", func(_ *Group, stop context.CancelFunc) { stop() }, 0, ReasonCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sh, _ := baseShared(t, "  - group_size: 2\n    steps: [{create_room: {only: leader}}, {join: {room: created, only: members, timeout: 1s}}]\n")
				flow := &sh.Plan.Flows[0]
				newBaseSession(t, sh, 0, flow)
				member := newBaseSession(t, sh, 1, flow)
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				go func() {
					time.Sleep(500 * time.Millisecond) // within the join's 1s
					tt.act(member.Member.Group, stop)
				}()
				r, err := member.GroupRoom(ctx, &flow.Steps[1])
				reason, _ := StepFailure(err, ErrCancelled)
				if err == nil {
					reason = ""
				}
				if r.ID != tt.want || reason != tt.reason {
					t.Errorf("GroupRoom = %+v, %v; want room %d, reason %q", r, err, tt.want, tt.reason)
				}
			})
		})
	}
}

// blockingSession's steps wait for release; entered says each has begun.
type blockingSession struct {
	baseSession
	entered, release chan struct{}
}

func (s *blockingSession) Run(ctx context.Context, due time.Time) error { return s.Play(ctx, due, s) }

func (s *blockingSession) Step(ctx context.Context, i int, st *scenario.Step) error {
	s.entered <- struct{}{}
	<-s.release
	return s.Finish(i, st, s.Next, s.Next, nil)
}

// TestBaseCloseDuringRun: Close may run while Run plays a step (the
// engine's stop, a session closed from another goroutine): it releases
// the socket at once, and the group place, whose leaving touches what Run
// writes (the step's bytes, the room), is given up by Run as it ends, once
// (under -race, leaving from Close raced with the step).
func TestBaseCloseDuringRun(t *testing.T) {
	sh, _ := baseShared(t, "  - steps: [list_rooms, list_rooms]\n")
	s := &blockingSession{entered: make(chan struct{}), release: make(chan struct{})}
	if err := s.Begin(sh, 0, &sh.Plan.Flows[0]); err != nil {
		t.Fatal(err)
	}
	s.Join()
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), time.Time{}) }()
	<-s.entered
	s.Close()
	if s.released != 1 || s.left.Load() {
		t.Errorf("Close during a step: released %d, group place given up %v; want 1, not yet", s.released, s.left.Load())
	}
	close(s.release)
	<-s.entered // the flow goes on: Close does not stop a step, the protocol's teardown does
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !s.left.Load() {
		t.Errorf("after Run: group place given up %v; want given up", s.left.Load())
	}
	s.Close()
	if s.released != 1 {
		t.Errorf("released %d times, want once", s.released)
	}
}

// inFlightSession is baseSession with a request in flight to give up
// (InFlight), as a udp-lobby session whose wait was suspended.
type inFlightSession struct {
	baseSession
	inFlight bool
}

func (s *inFlightSession) TakeInFlight() (metrics.Key, time.Time, bool) {
	ok := s.inFlight
	s.inFlight = false
	return s.Shared.MessageKey("LOBBY_LIST_ROOMS"), time.Now().Add(-2 * time.Second), ok
}

// TestBaseStoppedInFlight: a session the run's stop ends records what it
// left in flight as cut (InFlight), once, under its message and its step;
// stopped before its first step (CurStep -1, a closed loop's next
// session at the end of the run), it records nothing and does not panic
// (it indexed the step keys with -1: benchrun's 80,000 requests a second
// found it).
func TestBaseStoppedInFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight bool
		first    int // the step the session is in when stopped (-1: none yet)
		cut      int64
	}{
		{"a request in flight", true, 0, 1},
		{"nothing in flight", false, 0, 0},
		{"before the first step", true, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, c := baseShared(t, "  - steps: [{list_rooms: {label: a}}]\n")
			s := &inFlightSession{inFlight: tc.inFlight}
			if err := s.Begin(sh, 1, &sh.Plan.Flows[0]); err != nil {
				t.Fatal(err)
			}
			s.Join()
			s.proto, s.CurStep = s, tc.first
			s.cutInFlight(context.Background(), ErrStopped)
			s.cutInFlight(context.Background(), ErrStopped) // once
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			var cut int64
			for _, st := range run.Messages {
				cut += st.Cut
			}
			if cut != tc.cut {
				t.Errorf("%d cut under the message, want %d", cut, tc.cut)
			}
			if n, _ := stepFigures(t, c, "a"); n != tc.cut {
				t.Errorf("step a: %d requests, want %d", n, tc.cut)
			}
		})
	}
}
