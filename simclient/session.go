package simclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// Base is the part of a session that is the same for every protocol: who
// it is (client, flow, group place), where it records, its think-time
// generator, its schedule and the run's stop signal. It runs the flow's
// step loop with the think and barrier steps, records a step's end, and
// closes and renews the session. A protocol's session embeds it and
// implements Stepper, the steps of its own protocol:
//
//	type session struct {
//		simclient.Base
//		… // the protocol's socket and state
//	}
//
//	func New(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
//		s := &session{}
//		if err := s.Begin(sh, id, flow); err != nil {
//			return nil, err
//		}
//		… // open the socket (a failure: OpenError)
//		s.Join()
//		return s, nil
//	}
//	func (s *session) Run(ctx context.Context, due time.Time) error { return s.Play(ctx, due, s) }
//	func (s *session) Close() error { return s.CloseOnce(s.release) }
//	func (s *session) Step(ctx context.Context, i int, st *scenario.Step) error { … }
//
// A session that can carry its socket into the client's next session
// (Reusable) makes that session's Base with Renew.
type Base struct {
	Shared  *Shared
	ID      int            // the client's id
	Flow    *scenario.Flow // a pointer into Shared.Plan.Flows
	FlowIdx int            // Flow's index in Shared.Plan.Flows
	Member  Member         // the group place (Join)
	Rec     *metrics.Recorder
	Think   *rand.Rand // the client's think-time generator (Shared.ThinkRand)
	// Next is the intended send time of the next request: the session's
	// due time, then the end of the previous step.
	Next time.Time
	// Stop is the run's stop signal (StopContext), done with the run's
	// context too: waits end on it, requests in flight do not.
	Stop    context.Context
	CurStep int // index of the running step, -1 before the first

	thinkSrc *rand.PCG // Think's source, re-seeded for each session
	timer    *time.Timer
	proto    Stepper // the session Play runs
	creator  bool    // this member runs a create step of the flow
	// closed and left: CloseOnce and leaveGroup have run (or begun, in
	// another goroutine; a later call does not wait for them). Flags,
	// not sync.Once: each session runs both once, always Once's slow
	// path, a mutex taken and released, twice per session.
	closed atomic.Bool
	left   atomic.Bool
	// running: Play or Resume is on, and Run's goroutine owns the
	// session's state; a Close meanwhile releases the socket but leaves
	// the group place to Run's end (endRun), since giving it up touches
	// what Run writes (the step's bytes, the room).
	running   atomic.Bool
	parkWaits bool            // ParkWaits was called (beside running: no padding)
	susp      suspension      // where a suspended session resumes (Pause, Await)
	roomBy    instant.Instant // GroupRoom: when the wait for the room times out

	// IO counts the payload bytes of the session's socket: the protocol
	// sets it (its transport's IOCount) after Begin; Renew keeps it.
	IO  *IOCount
	lob lobbyState // the lobby measures (lobby.go)
	// script is the session's scripted steps' state, from its first one
	// (scripted.go); nil for a flow without them.
	script *scriptState
}

// suspension is where a session that gave up its goroutine goes on. In a
// pause (Base.Pause): the pause of step (st) ends at at, then the flow goes
// on at step next. In a wait (wait true: Base.Await, Base.GroupRoom): step
// next (= step) runs again when the socket fd becomes readable (fd ≥ 0),
// when room is published, or at at, whichever is first; the step keeps its
// own place (a request in flight) in its session.
//
// Its steps and descriptor are int32s, beside its flag: 48 bytes, not 64,
// in every client's Base.
type suspension struct {
	at   instant.Instant
	st   *scenario.Step
	on   Notifier // with wait: what else ends it (a group's room, a virtual flow); nil none
	step int32
	next int32
	fd   int32 // with wait: the socket whose readability ends it; -1 none
	wait bool
}

// SuspendMin is the shortest pause a session gives up its goroutine for
// (Shared.Suspend), and the shortest wait (Shared.SuspendWaits): a
// suspension and its resumption cost an entry in the engine's resumer and
// a goroutine start (a few µs of CPU), and free the goroutine's stack
// (4 KiB, StackBudget) for the rest of the pause.
const SuspendMin = 10 * time.Millisecond

// SuspendWaitsFrom is how many clients one process runs before its
// closed-model sessions also give up their goroutine while they wait for a
// reply or for their group's room (Shared.SuspendWaits). Below it, a
// client waiting keeps its goroutine parked on the netpoller: that is
// cheaper per request (no epoll registration, no goroutine start per
// reply), and its stack costs little at that scale. Above it, the stacks
// of clients that are only waiting would be most of the run's memory: at
// 10,000 clients starting at once, 40 MiB.
const SuspendWaitsFrom = 2000

// ErrSuspended is what Run and Resume return when the session gave up its
// goroutine in a pause (Base.Pause): the caller calls Resume at
// SuspendedUntil, or at once when the run stops (the pause then ends cut,
// as a pause ends when the stop signal fires).
var ErrSuspended = errors.New("simclient: session suspended in a pause")

// Resumer is a Session that can be suspended: every protocol's session,
// through Base.
type Resumer interface {
	Session
	// Resume goes on with a session whose Run or Resume returned
	// ErrSuspended: it finishes the pause (precisely, or cut by the stop
	// signal) and plays the rest of the flow, returning as Run does.
	Resume(ctx context.Context) error
	// SuspendedUntil is when the pause that suspended the session ends,
	// or when its wait times out.
	SuspendedUntil() time.Time
	// SuspendedOn is what may end a suspended wait before SuspendedUntil:
	// its socket fd becoming readable (fd ≥ 0), or on being ready (not
	// nil: its group's room published, a virtual flow's datagram
	// queued). A pause has neither (-1, nil).
	SuspendedOn() (fd int, on Notifier)
	// ParkWaits tells the session that its caller cannot watch a socket
	// (SuspendedOn's fd): from now on its waits park, keeping the
	// goroutine, as without Shared.SuspendWaits.
	ParkWaits()
}

// Stepper is what a protocol's session implements: step i (st) of its
// flow, any kind but think and barrier, which Base runs. A step measured
// as one request ends with Finish; a step that records itself (a series,
// a probe) moves Next to its end. A failed step returns Fail's or
// StepErr's error.
type Stepper interface {
	Step(ctx context.Context, i int, st *scenario.Step) error
}

// Idler is a Stepper with something to do before each pause of its flow
// (think times, series intervals), such as giving back a receive buffer
// it does not need while it waits.
type Idler interface {
	Idle()
}

// ErrCancelled is what a protocol's request code returns when the run's
// end cut the request (recorded as cut, Recorder.Cut): the step fails with
// ReasonCancelled (StepErr).
var ErrCancelled = errors.New("cancelled")

// Begin makes b the first session of client id playing flow (a pointer
// into sh.Plan.Flows), with no group place yet: a Factory calls Join
// last. It fails when flow is not one of the plan's or sh has no target.
func (b *Base) Begin(sh *Shared, id int, flow *scenario.Flow) error {
	fi := sh.FlowIndex(flow)
	if fi < 0 {
		return errors.New("simclient: flow is not one of the plan's flows")
	}
	if !sh.Target.IsValid() {
		return fmt.Errorf("simclient: no %s target", sh.Plan.Protocol)
	}
	src := new(rand.PCG)
	sh.ReseedThink(src, id)
	*b = Base{Shared: sh, ID: id, Flow: flow, FlowIdx: fi, Rec: sh.Recorder(id), Think: rand.New(src), CurStep: -1, thinkSrc: src}
	return nil
}

// Join gives the session its group place (Shared.Join). A Factory calls
// it last, once the session's socket is open: Factories are called in
// arrival order, and a client that cannot open a socket takes no place.
func (b *Base) Join() {
	b.Member = b.Shared.Join(b.FlowIdx)
	b.creator = Creates(b.Flow, b.Member.Index)
	b.lob = lobbyFor(b.Shared.game, b.Flow, b.Member.Index)
}

// FlowIndex returns flow's index in Shared.Plan.Flows, -1 when it is not
// one of them: what a Reuse checks first, and passes to Renew.
func (b *Base) FlowIndex(flow *scenario.Flow) int {
	if flow == b.Flow {
		return b.FlowIdx
	}
	return b.Shared.FlowIndex(flow)
}

// Renew returns the Base of the client's next session, playing flow fi
// (FlowIndex) as client id, for a Reusable whose socket carries it. The
// client keeps its think-time generator (re-seeded for id) and pause
// timer, and its group of one when nothing marked it (Shared.Rejoin), so
// a session renewed in place allocates nothing. b is spent: it has left
// its group, and a stray Close of it releases nothing.
func (b *Base) Renew(id, fi int) Base {
	b.closed.Store(true)
	b.leaveGroup()
	sh := b.Shared
	sh.ReseedThink(b.thinkSrc, id)
	flow := &sh.Plan.Flows[fi]
	m := sh.Rejoin(fi, b.Member)
	return Base{Shared: sh, ID: id, Flow: flow, FlowIdx: fi, Member: m, Rec: sh.Recorder(id), Think: b.Think, CurStep: -1,
		thinkSrc: b.thinkSrc, timer: b.timer, creator: Creates(flow, m.Index), parkWaits: b.parkWaits,
		IO: b.IO, lob: lobbyFor(sh.game, flow, m.Index), script: b.keptScript()}
}

// Play runs the session's flow as Session.Run does, p's steps with the
// think and barrier steps: from due (zero: now), through the steps that
// the session's group member runs, to the first failed one (RunFlow). It
// gives up the group place when it returns.
func (b *Base) Play(ctx context.Context, due time.Time, p Stepper) error {
	if due.IsZero() {
		due = time.Now()
	}
	b.Next = due
	b.lob.start = instant.Of(due)
	b.Stop = StopContext(ctx)
	b.proto = p
	b.running.Store(true)
	// RunFlow is called here and in Resume, not from a shared helper:
	// the helper is too large to inline, and its frame would sit below
	// every request (StackBudget).
	err := RunFlow(ctx, b.Stop, b.Flow, b.Member.Index, 0, b)
	if err != ErrSuspended {
		b.cutInFlight(ctx, err)
		b.leaveGroup() // a suspended session keeps its place
	}
	b.endRun()
	return err
}

// endRun ends Run's hold on the session's state: a Close that came
// meanwhile left the group place to it, given up now, suspended or not
// (a closed session does not resume). Close stores closed before it
// reads running, and this the other way round: one of them sees the
// other, and leaveGroup runs once.
func (b *Base) endRun() {
	b.running.Store(false)
	if b.closed.Load() {
		b.leaveGroup()
	}
}

// Resume implements Resumer.
func (b *Base) Resume(ctx context.Context) error {
	sp := b.susp
	b.susp = suspension{}
	b.Stop = StopContext(ctx)
	b.CurStep = int(sp.step)
	b.running.Store(true)
	if !sp.wait {
		if err := b.SleepUntil(b.Stop, int(sp.step), sp.st, sp.at.Time()); err != nil {
			err = Stopped(ctx, b.Stop, err)
			b.cutInFlight(ctx, err)
			b.leaveGroup()
			b.endRun()
			return err
		}
	}
	err := RunFlow(ctx, b.Stop, b.Flow, b.Member.Index, int(sp.next), b)
	if err != ErrSuspended {
		b.cutInFlight(ctx, err)
		b.leaveGroup()
	}
	b.endRun()
	return err
}

// InFlight is a protocol's session that may be left with a request in
// flight when the end of the run stops it: one whose wait it suspended
// (Await), which Resume, the run stopping, does not go back to.
type InFlight interface {
	// TakeInFlight returns that request's metrics key and when it was
	// sent, once; ok is false when there is none.
	TakeInFlight() (key metrics.Key, sent time.Time, ok bool)
}

// cutInFlight records as cut the requests the session's end (err, Run's
// or Resume's) left in flight: a suspended wait's (InFlight), and a
// scripted send whose expect did not come (the stop came between them).
// Before, they were counted nowhere: 2,000 clients whose requests a lobby
// dropped read "Requests 380, ok 380, failed 0" and passed.
//
//go:noinline
func (b *Base) cutInFlight(ctx context.Context, err error) {
	if err != ErrStopped && ctx.Err() == nil {
		return
	}
	now := time.Now()
	if f, ok := b.proto.(InFlight); ok && b.CurStep >= 0 {
		if key, sent, ok := f.TakeInFlight(); ok {
			EndRequest(b.Rec, key, ReasonCancelled, sent, 0, now)
			EndRequest(b.Rec, b.StepKey(b.CurStep), ReasonCancelled, sent, 0, now)
		}
	}
	if b.script == nil || !b.script.ready {
		return
	}
	if q, ok := b.script.env.TakePending(); ok {
		EndRequest(b.Rec, b.Shared.MessageKey(q.Key.Message), ReasonCancelled, q.Sent, 0, now)
		EndRequest(b.Rec, b.StepKey(b.script.step), ReasonCancelled, q.Sent, 0, now)
	}
}

// SuspendedUntil implements Resumer.
func (b *Base) SuspendedUntil() time.Time { return b.susp.at.Time() }

// SuspendedOn implements Resumer.
func (b *Base) SuspendedOn() (fd int, on Notifier) {
	if !b.susp.wait {
		return -1, nil
	}
	return int(b.susp.fd), b.susp.on
}

// ParkWaits implements Resumer.
func (b *Base) ParkWaits() { b.parkWaits = true }

// MayAwait reports whether the session may give up its goroutine in a
// wait that ends by itself at until (Shared.SuspendWaits, not ParkWaits,
// the run not stopping, until SuspendMin or more away). Never inlined:
// its caller's frame is on every waiting client's stack (StackBudget).
//
//go:noinline
func (b *Base) MayAwait(until time.Time) bool {
	return b.Shared.SuspendWaits && !b.parkWaits && b.Stop != nil && b.Stop.Err() == nil && time.Until(until) >= SuspendMin
}

// Await suspends the session in a wait of its current step for socket fd
// to become readable, until at most until (MayAwait): it returns
// ErrSuspended, which the caller returns at once, up to Run. Resume runs
// the step again, which must go on where it waited (its place kept in the
// session, as a udp-lobby request in flight keeps its own). Never
// inlined, as MayAwait.
//
//go:noinline
func (b *Base) Await(fd int, until time.Time) error { return b.suspendWait(until, fd, nil) }

// AwaitOn is Await for a wait that on ends (a virtual flow, which has no
// descriptor), rather than a socket's readability.
//
//go:noinline
func (b *Base) AwaitOn(on Notifier, until time.Time) error { return b.suspendWait(until, -1, on) }

// Notifier is what a suspended wait may be ended by besides its time and
// a socket (Base.AwaitOn): OnReady calls f once what the wait waits for is
// there, at once on the caller's goroutine when it already is, else on
// the goroutine that makes it so. A Group (its room) and a virtual flow
// (a datagram for it) are Notifiers.
type Notifier interface{ OnReady(f func()) }

// suspendWait records a wait of the current step that ends at until, or
// earlier when socket fd (≥ 0) is readable or on is ready, and returns
// ErrSuspended (Await, AwaitOn, GroupRoom).
func (b *Base) suspendWait(until time.Time, fd int, on Notifier) error {
	b.susp = suspension{at: instant.Of(until), step: int32(b.CurStep), next: int32(b.CurStep), wait: true, fd: int32(fd), on: on}
	return ErrSuspended
}

// RunStep implements FlowRunner for Play: the think and barrier steps,
// and the protocol's Step for the others.
func (b *Base) RunStep(ctx context.Context, i int, st *scenario.Step) error {
	b.CurStep = i
	switch st.Kind {
	case scenario.Think:
		return b.Pause(b.Stop, i, st, b.Next.Add(st.Think.Sample(b.Think)), i+1)
	case scenario.Barrier:
		now, err := Barrier(b.Stop, b.Member.Group, b.Rec, b.StepKey(i), i, st)
		if err == nil {
			b.Next = now
		}
		return err
	case scenario.Send, scenario.Expect, scenario.If, scenario.Repeat:
		err := b.playScripted(ctx, i, st)
		b.stepEnded(i, st, err)
		return err
	}
	err := b.proto.Step(ctx, i, st)
	if err == ErrSuspended {
		b.flushIO(i)
	} else {
		b.stepEnded(i, st, err)
	}
	return err
}

// StepKey returns the metrics key of step i of the session's flow.
func (b *Base) StepKey(i int) metrics.Key { return b.Shared.StepKey(b.FlowIdx, i) }

// Fail records step i (st) as failed for reason and returns its error
// (FailStep).
func (b *Base) Fail(i int, st *scenario.Step, reason string, err error) error {
	return FailStep(b.Rec, b.StepKey(i), i, st, reason, err)
}

// StepErr fails step i (st) with a request's failure, already recorded
// for the request's message: a *RequestError's reason, ReasonCancelled
// for ErrCancelled, ReasonSocket otherwise (StepFailure).
func (b *Base) StepErr(i int, st *scenario.Step, err error) error {
	reason, cause := StepFailure(err, ErrCancelled)
	return b.Fail(i, st, reason, cause)
}

// Finish ends step i (st), measured as one request intended at intended
// and sent at sent: on success it records the step and moves Next to its
// end, now; err fails it (StepErr).
func (b *Base) Finish(i int, st *scenario.Step, intended, sent time.Time, err error) error {
	return b.FinishAt(i, st, intended, sent, time.Time{}, err)
}

// FinishAt is Finish for a step whose end is known: done, when the reply
// that ended it arrived (zero: now). The step then ends when its last
// request does, and the clock is not read again for it.
func (b *Base) FinishAt(i int, st *scenario.Step, intended, sent, done time.Time, err error) error {
	if err == ErrSuspended {
		return err // a wait suspended the step (Await): it is not over
	}
	if err != nil {
		return b.StepErr(i, st, err)
	}
	if done.IsZero() {
		done = time.Now()
	}
	b.Rec.Record(b.StepKey(i), intended, sent, done)
	b.Next = done
	return nil
}

// SleepUntil pauses step i (st) until t (think times, series intervals)
// and moves Next to t, after the session's Idle (Idler). A pause that ctx
// ends fails the step with ReasonCancelled.
func (b *Base) SleepUntil(ctx context.Context, i int, st *scenario.Step, t time.Time) error {
	b.pausing(t)
	if err := SleepUntil(ctx, &b.timer, t); err != nil {
		return b.Fail(i, st, ReasonCancelled, err)
	}
	return nil
}

// Pause is SleepUntil for a pause the session may give up its goroutine
// for: when sessions may suspend (Shared.Suspend) and t is SuspendMin or
// more away, it records where the session goes on (step next of the flow
// once the pause of step i ends) and returns ErrSuspended, which the
// caller returns at once, up to Run. Otherwise it waits as SleepUntil.
// A protocol whose step pauses mid-way (a ping series) keeps its own
// place in the step in its session, and goes on there when Resume runs
// step next = i again.
func (b *Base) Pause(ctx context.Context, i int, st *scenario.Step, t time.Time, next int) error {
	if b.mayPause(ctx, t) {
		b.suspendPause(i, st, t, next)
		return ErrSuspended
	}
	return b.SleepUntil(ctx, i, st, t)
}

// mayPause reports whether a pause until t may give up the goroutine
// (Pause).
func (b *Base) mayPause(ctx context.Context, t time.Time) bool {
	return b.Shared.Suspend && ctx.Err() == nil && time.Until(t) >= SuspendMin
}

// suspendPause records a pause of step i (st) until t, after which the
// flow goes on at step next (Pause).
func (b *Base) suspendPause(i int, st *scenario.Step, t time.Time, next int) {
	b.pausing(t)
	b.susp = suspension{at: instant.Of(t), step: int32(i), st: st, next: int32(next)}
}

// pausing begins a pause until t: Next moves to t, and the session's Idle
// (Idler) runs.
func (b *Base) pausing(t time.Time) {
	b.Next = t
	if id, ok := b.proto.(Idler); ok {
		id.Idle()
	}
}

// GroupRoom waits for the room the session's group creates (a join with
// room: created) at most Budget(st.Policy), ctx being the stop signal.
// It fails with ErrCancelled when ctx ended, and with a *RequestError of
// ReasonCreatorFailed when the creator failed or ended without creating
// it, of result.ReasonTimeout when it did not come in time.
//
// With Shared.SuspendWaits it may instead suspend the session until the
// room is published or the budget ends (ErrSuspended, returned at once up
// to Run); the step runs again on Resume, and its GroupRoom goes on with
// the same budget.
func (b *Base) GroupRoom(ctx context.Context, st *scenario.Step) (Room, error) {
	g := b.Member.Group
	if b.roomBy.IsZero() {
		b.roomBy = instant.Now().Add(Budget(st.Policy))
	}
	by := b.roomBy.Time()
	if !g.RoomDone() && b.MayAwait(by) {
		return Room{}, b.suspendWait(by, -1, g)
	}
	tctx, cancel := context.WithDeadline(ctx, by)
	r, err := g.WaitRoom(tctx)
	cancel()
	b.roomBy = 0
	switch {
	case err == nil:
		return r, nil
	case ctx.Err() != nil:
		return Room{}, ErrCancelled
	case errors.Is(err, ErrNoRoom):
		return Room{}, &RequestError{Reason: ReasonCreatorFailed, Err: err}
	}
	return Room{}, &RequestError{Reason: result.ReasonTimeout, Err: fmt.Errorf("the group's room was not created within %s", Budget(st.Policy))}
}

// CreatedRoom returns the room the session's group created if it is
// already known (ok), for a join with room: created; waited reports that
// the step had waited for it (a GroupRoom suspended it), so the join's
// request is intended now, not at the step's start.
func (b *Base) CreatedRoom() (r Room, ok, waited bool) {
	if r, ok = b.Member.Group.RoomNow(); ok {
		waited = !b.roomBy.IsZero()
		b.roomBy = 0
	}
	return r, ok, waited
}

// errCreatorEnded fails the group's room when its creator's session ends
// without having created it.
var errCreatorEnded = errors.New("the creator's session ended before creating the room")

// leaveGroup gives up the session's group place, once. A creator leaving
// fails its group's room first (a no-op once the room exists), so that
// its members do not wait out their timeouts.
func (b *Base) leaveGroup() {
	if !b.left.CompareAndSwap(false, true) {
		return
	}
	b.lobbyEnd()
	if b.Member.Group != nil && b.creator {
		b.Member.Group.FailRoom(errCreatorEnded)
	}
	b.Shared.Leave(b.Member)
}

// CloseOnce implements Session.Close for the protocol's session: the
// first call runs release (the protocol's socket teardown) and gives up
// the group place; later calls, and calls after Renew, do nothing and
// return nil.
func (b *Base) CloseOnce(release func() error) error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	err := release()
	if !b.running.Load() {
		b.leaveGroup() // else Run's end gives it up (endRun)
	}
	return err
}

// StackBudget is the goroutine stack a client's deepest common path (a
// udp-lobby request: send, wait, decode and record the reply) fits in:
// 4 KiB, of which the runtime keeps 928 bytes as a guard. A goroutine that
// outgrows it doubles its stack to 8 KiB, and keeps it for the rest of the
// run, since stacks shrink only at garbage collection, and a run that
// allocates nothing in steady state rarely collects: at 10,000 clients the
// difference is 40 MiB of RSS, a third of the harness's. So the frames on
// that path are kept small: rare branches are functions of their own,
// marked go:noinline, and structs travel by pointer. `make bench-run`'s
// memory run reports the stacks' total against this budget.
const StackBudget = 4 << 10
