package engine

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Session is one simulated client playing one flow once: the shape of
// simclient.Session, restated here so executors are testable with fakes.
// Run returns when the flow is over, failed, or ctx is cancelled; due is
// when the schedule wanted the session to start. Close releases its socket
// and is called once after Run.
type Session interface {
	Run(ctx context.Context, due time.Time) error
	Close() error
}

// Start describes one session the engine starts.
type Start struct {
	// ID is the client id, unique in the run and equal on every shard:
	// the global arrival index (open model) or slot + iteration·max_clients
	// (closed model).
	ID int
	// Slot is the closed-model client slot (equal to ID in the open model).
	Slot int
	// Flow indexes Plan.Flows; Seq is this session's number among the
	// sessions of that flow (open model: global arrival order, the same on
	// every shard; closed model: start order on this shard). Group
	// membership follows from it: group Seq/GroupSize, member Seq%GroupSize.
	Flow, Seq int
	// Source is the local address to bind to (invalid: let the OS choose).
	Source netip.Addr
	// Intended is when the schedule wanted the session to start; the
	// session measures its first request's latency from it.
	Intended time.Time
	// Prev is, in the closed model, the client's previous session: it
	// completed its flow and was not closed, so New may carry its socket
	// over (simclient.Renew). New owns it: it either reuses it or closes
	// it. Nil in the open model, for a client's first session, after a
	// failed one, and before a flow with NewSocket.
	Prev Session
}

// NewSession makes the session for a start (binds its socket). The open
// model calls it on the scheduling goroutine, in arrival order, because
// group places are given in call order (simclient.Factory).
type NewSession func(Start) (Session, error)

// Defaults for Options.
const (
	DefaultGrace        = 3 * time.Second
	DefaultMaxLateness  = time.Second
	DefaultPollInterval = 100 * time.Millisecond
)

// Options configure Execute.
type Options struct {
	Plan  *scenario.Plan
	Shard Shard
	New   NewSession
	// Sources is the pool of local addresses clients bind to: spread by
	// group and role over a flow's sessions (open model, spreadSource) or
	// round-robin by slot (closed model); empty = OS choice.
	Sources []netip.Addr
	// Grace bounds how long in-flight sessions may run on after the
	// schedule ends or ctx is cancelled before their context is cancelled
	// too; the sessions then get the same time again to return.
	Grace time.Duration
	// MaxLateness is how late an open-model arrival may start before it is
	// counted as a dropped start instead (the generator is saturated).
	MaxLateness time.Duration
	// PollInterval is how often the closed model re-reads its target.
	PollInterval time.Duration
	// Abort, when closed, ends the grace period at once (a second Ctrl-C):
	// in-flight sessions are cancelled and waited for only briefly
	// (AbortWait); what they recorded is kept.
	Abort <-chan struct{}
	// OnDropped is called (on the scheduling goroutine) for each
	// open-model arrival that could not be started.
	OnDropped func(s Start, why DropReason)
	// OnSessionStart is called when a session is started (before New);
	// OnSessionEnd when it ends: err is New's error (ran == false: a
	// failed start) or Run's (ran == true; a failed start too when
	// simclient.IsFailedStart), nil when the flow completed or was cut
	// short by the end of the run (not a failure). Both may be called
	// concurrently.
	OnSessionStart func(s Start)
	OnSessionEnd   func(s Start, err error, ran bool)
	// Start, when set, is the schedule's zero (`run --start-at`): the
	// instant every shard of a coordinated run starts its schedule at, so
	// arrival k is due at Start plus its offset whatever moment this
	// process reached Execute. Execute does not wait for it (Run does).
	// When this process comes to it more than MaxLateness after Start, it
	// joins late: the open-model arrivals due before it joined are
	// counted as dropped starts of their own cause (DropLateStart) and
	// never shifted; the closed model brings up the clients the profile
	// wants at that moment. Zero: the schedule starts when Execute does.
	Start time.Time
	// OnLateStart, when set, is called once when the execution joins
	// late (see Start): how late, and how many open-model arrivals it
	// missed (counted as DropLateStart).
	OnLateStart func(late time.Duration, missed int64)
	// HoldP lets the open model's schedule keep its P for the last
	// precise.Hold of each wait for an arrival (precise.UntilHeld): a
	// lower send lag, for up to Hold of one core's CPU per arrival, taken
	// from everything else in the process. Run sets it unless the server
	// is embedded.
	HoldP bool
}

// DropReason says why an open-model arrival was not started.
type DropReason string

// Reasons for dropped starts.
const (
	DropNoSlot DropReason = "no_free_client" // max_clients sessions were live
	DropLate   DropReason = "late"           // the generator fell behind by more than MaxLateness
	// DropLateStart: the arrival was due before this shard came up, late
	// for the run's start instant (Options.Start); counted apart from the
	// generator's own lateness.
	DropLateStart DropReason = "late_start"
)

// Stats are the executor's counters. Every field is read atomically, so a
// progress display may read them during the run.
type Stats struct {
	Started, Completed, Failed, Aborted atomic.Int64
	// FailedStarts are the Failed sessions that could not open their
	// socket or connection (New failed, or simclient.IsFailedStart).
	FailedStarts               atomic.Int64
	DroppedNoSlot, DroppedLate atomic.Int64
	// DroppedLateStart counts the arrivals due before a late shard joined
	// (Options.Start, DropLateStart); LateStart is how late it joined
	// (0: on time).
	DroppedLateStart atomic.Int64
	LateStart        atomic.Int64 // time.Duration
	// Active counts live sessions: running, or in the closed model kept
	// open between a client's iterations; MaxActive is its peak.
	Active, MaxActive atomic.Int64
	// Closed model: ClientsAsked is the most clients the schedule asked
	// this shard for at one of the controller's reads; Up counts the
	// clients up (a slot's loop started and not yet released, pausing or
	// suspended included), ClientsPeak is its peak
	// (result.Sessions.ClientsAsked, ClientsPeak).
	ClientsAsked, Up, ClientsPeak atomic.Int64
	// WaitsSuspended counts the closed model's suspensions in a wait
	// (simclient.Resumer.SuspendedOn), not in a pause.
	WaitsSuspended atomic.Int64
	// BackingOff counts the closed-model clients pausing now after a
	// session that could not start or failed within a millisecond
	// (failBackoff): not Active, so the progress names them apart.
	BackingOff atomic.Int64
}

// Dropped is the number of dropped starts of both kinds.
func (s *Stats) Dropped() int64 {
	return s.DroppedNoSlot.Load() + s.DroppedLate.Load() + s.DroppedLateStart.Load()
}

// StatsSnapshot is a plain copy of Stats.
type StatsSnapshot struct {
	Started, Completed, Failed, Aborted int64
	FailedStarts                        int64
	DroppedNoSlot, DroppedLate          int64
	DroppedLateStart                    int64
	LateStart                           time.Duration
	Active, MaxActive                   int64
	ClientsAsked, ClientsPeak           int64
	WaitsSuspended                      int64
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Started: s.Started.Load(), Completed: s.Completed.Load(), Failed: s.Failed.Load(), Aborted: s.Aborted.Load(),
		FailedStarts:  s.FailedStarts.Load(),
		DroppedNoSlot: s.DroppedNoSlot.Load(), DroppedLate: s.DroppedLate.Load(),
		DroppedLateStart: s.DroppedLateStart.Load(), LateStart: time.Duration(s.LateStart.Load()),
		Active: s.Active.Load(), MaxActive: s.MaxActive.Load(), WaitsSuspended: s.WaitsSuspended.Load(),
		ClientsAsked: s.ClientsAsked.Load(), ClientsPeak: s.ClientsPeak.Load(),
	}
}

// info is the snapshot as a run's SessionInfo.
func (st StatsSnapshot) info() SessionInfo {
	return SessionInfo{Started: st.Started, Completed: st.Completed, Failed: st.Failed, FailedStarts: st.FailedStarts, Aborted: st.Aborted,
		DroppedNoSlot: st.DroppedNoSlot, DroppedLate: st.DroppedLate, DroppedLateStart: st.DroppedLateStart, MaxActive: st.MaxActive,
		ClientsAsked: st.ClientsAsked, ClientsPeak: st.ClientsPeak, WaitsSuspended: st.WaitsSuspended}
}

// Execution is one run of the plan's executor.
type Execution struct {
	o     Options
	Stats Stats
	start time.Time

	sessCtx    context.Context
	cancelSess context.CancelFunc
	// runCtx is sessCtx carrying the stop signal (simclient.WithStop):
	// stopCtx, a child of sessCtx, done when a closed-model schedule ends
	// or the run is interrupted, so sessions stop between steps and only a
	// request in flight runs on into the grace period.
	runCtx   context.Context
	stopSess context.CancelFunc
	wg       sync.WaitGroup
	seq      []atomic.Int64 // closed model: per-flow start counter
	stopping atomic.Bool
	// loadEnd is when the schedule stopped starting sessions (its end, or
	// the interruption), set before the grace period (LoadEnd).
	loadEnd time.Time
	// res resumes the closed model's suspended sessions (resume.go).
	res resumer
	// slots are the closed model's clients (runClosed), by slot.pos;
	// released counts their loops' ends (release), which runClosed's
	// next look at them may have to restart.
	slots    []*slot
	released atomic.Int64
	// idle hands a slot to a runner waiting for one (run); done, closed
	// when Execute returns, ends the waiting runners; idlers counts them.
	idle   chan *slot
	done   chan struct{}
	idlers atomic.Int32
	// wait is how the schedulers wait for a due time (precise.Until);
	// waitHeld, the open schedule's with Options.HoldP (precise.UntilHeld).
	wait, waitHeld func(ctx context.Context, timer **time.Timer, t time.Time) error
	// perSecond counts the open-model sessions this execution played in
	// each second from start, by the moment it played them (written only
	// by the goroutine holding the schedule: openSched).
	perSecond []int64
	// later holds the sessions the end of the run cut, and the ones it
	// released kept open, until drain ends (closeLater); drained: it
	// has, and they are closed.
	laterMu sync.Mutex
	later   []Session
	drained bool
}

// ErrNoFactory is returned when Options.New is nil.
var ErrNoFactory = errors.New("engine: Options.New is nil")

// Execute runs the plan's load model (open or closed) until the schedule
// ends or ctx is cancelled, then lets in-flight sessions finish within the
// grace period, cancels the rest and waits for them. It returns the
// execution (counters) and whether ctx cancelled the run early.
func Execute(ctx context.Context, o Options, started func(*Execution)) (x *Execution, interrupted bool, err error) {
	if o.New == nil {
		return nil, false, ErrNoFactory
	}
	if o.Plan == nil {
		return nil, false, errors.New("engine: Options.Plan is nil")
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxLateness <= 0 {
		o.MaxLateness = DefaultMaxLateness
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	start := o.Start
	if start.IsZero() {
		start = time.Now()
	}
	x = &Execution{o: o, start: start, seq: make([]atomic.Int64, len(o.Plan.Flows)), wait: waitUntil, waitHeld: waitHeld,
		idle: make(chan *slot), done: make(chan struct{})}
	defer close(x.done)
	// Sessions run under their own context, cancelled only after the grace
	// period, so Ctrl-C lets in-flight requests end.
	x.sessCtx, x.cancelSess = context.WithCancel(context.WithoutCancel(ctx))
	defer x.cancelSess()
	var stopCtx context.Context
	stopCtx, x.stopSess = context.WithCancel(x.sessCtx)
	defer x.stopSess()
	x.runCtx = simclient.WithStop(x.sessCtx, stopCtx)
	if started != nil {
		started(x)
	}
	switch o.Plan.Load.Model {
	case scenario.Closed:
		x.runClosed(ctx)
	default:
		x.runOpen(ctx)
	}
	x.loadEnd = time.Now()
	x.stopping.Store(true)
	interrupted = ctx.Err() != nil
	if o.Plan.Load.Model == scenario.Closed || interrupted {
		// A closed-model client stops at the deadline: its sessions are
		// loops, not units of work. An open-model arrival is one unit of
		// work and gets Grace to finish its flow, unless the run was
		// interrupted.
		x.stopSess()
		x.wakeSuspended()
	}
	x.drain()
	x.closeDeferred()
	return x, interrupted, nil
}

// LoadEnd is when the schedule stopped starting sessions: the end of its
// stages, or the interruption; the grace period for requests in flight
// comes after it. Read it after Execute returns.
func (x *Execution) LoadEnd() time.Time { return x.loadEnd }

// StartTime is when the execution began (elapsed 0 of the schedule):
// Options.Start when set.
func (x *Execution) StartTime() time.Time { return x.start }

// PlayedPerSecond returns how many open-model sessions the execution
// played in each second of its schedule (index 0: the first second from
// StartTime), by the moment it played them; read it after Execute returns.
func (x *Execution) PlayedPerSecond() []int64 { return x.perSecond }

// joinLate is called as the schedule starts: when the execution comes to
// it more than MaxLateness after its start (Options.Start), it records
// how late and returns the instant it joined; arrivals due before it are
// missed. It returns the zero time when the execution is on time.
func (x *Execution) joinLate() time.Time {
	now := time.Now()
	late := now.Sub(x.start)
	if x.o.Start.IsZero() || late <= x.o.MaxLateness {
		return time.Time{}
	}
	x.Stats.LateStart.Store(int64(late))
	return now
}

// AbortWait is how long cancelled sessions are waited for after Abort.
const AbortWait = 100 * time.Millisecond

// drain waits up to Grace for sessions to end by themselves, then cancels
// them and waits up to Grace again; Abort cuts both waits short.
func (x *Execution) drain() {
	done := make(chan struct{})
	go func() { x.wg.Wait(); close(done) }()
	t := time.NewTimer(x.o.Grace)
	defer t.Stop()
	wait, abort := x.o.Grace, x.o.Abort
	select {
	case <-done:
		return
	case <-t.C:
	case <-abort:
		wait, abort = AbortWait, nil
	}
	x.cancelSess()
	t.Reset(wait)
	select {
	case <-done:
	case <-t.C:
		// Sessions that ignore cancellation are left behind; their
		// results are not waited for.
	case <-abort:
		t.Reset(AbortWait)
		select {
		case <-done:
		case <-t.C:
		}
	}
}

// closeLater closes sess, a session the end of the run cut or released,
// once drain has ended (at once if it has). Closing it at the cut could
// fail a request another session still has in flight: a tcp-lobby
// leader cut in its barrier closes its connection, the server removes
// its room, and a member whose join was on the wire is refused
// (join_failed), a failure the harness caused, charged to the target.
// So the connections of cut sessions stay open until every session has
// ended or drain gave up on it; Abort cuts drain short, and these
// closes with it.
//
//go:noinline
func (x *Execution) closeLater(sess Session) {
	x.laterMu.Lock()
	if x.drained {
		x.laterMu.Unlock()
		sess.Close()
		return
	}
	x.later = append(x.later, sess)
	x.laterMu.Unlock()
}

// closeDeferred closes the sessions closeLater kept, after drain; a
// session ending after it (one drain gave up waiting for) closes at once.
func (x *Execution) closeDeferred() {
	x.laterMu.Lock()
	x.drained = true
	later := x.later
	x.later = nil
	x.laterMu.Unlock()
	for _, sess := range later {
		sess.Close()
	}
}

// source returns the pool address for n.
func (x *Execution) source(n int) netip.Addr {
	if len(x.o.Sources) == 0 {
		return netip.Addr{}
	}
	return x.o.Sources[n%len(x.o.Sources)]
}

// groupSource is the source address of an open-model arrival: session
// seq of a flow whose groups have groupSize members (see spreadSource).
func (x *Execution) groupSource(seq, groupSize int) netip.Addr {
	if len(x.o.Sources) == 0 {
		return netip.Addr{}
	}
	return x.o.Sources[spreadSource(seq, groupSize, len(x.o.Sources))]
}

// spreadSource is the index, among n source addresses, of session seq of
// a flow with groups of groupSize: group g = seq/groupSize's member r =
// seq%groupSize binds address (g + r) mod n. Leaders (r = 0) of
// consecutive groups take consecutive addresses, as do the members of one
// group (all different while groupSize <= n), so every address gets as
// many rooms to create as joins, for any group size and address count:
// plain round-robin by arrival would give every leader of groups of 4 over
// 4 addresses the first one, and a server's per-address room quota would
// refuse them. seq is the flow's sequence number over the whole run,
// before sharding (Shard.Owns picks groups), so shard i/n binds each
// session to the address an unsharded run would.
func spreadSource(seq, groupSize, n int) int {
	g := max(groupSize, 1)
	return (seq/g + seq%g) % n
}

// waitUntil is Execution.wait's default: precise.Until. The package's
// tests, on testing/synctest's fake clock, use a plain timer (see
// synctest_test.go): the precise fine phase would spend real time there.
var waitUntil = precise.Until

// waitHeld is Execution.waitHeld's default: precise.UntilHeld (a
// variable, as waitUntil, for tests).
var waitHeld = precise.UntilHeld

// sleepUntil waits until t or ctx is done; it reports false if ctx ended.
func sleepUntil(ctx context.Context, timer *time.Timer, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-ctx.Done():
		if !timer.Stop() {
			<-timer.C
		}
		return false
	case <-timer.C:
		return true
	}
}

// newSession counts a started session and makes it; on failure it counts
// the session failed (a failed start) and returns nil. The caller has already counted it
// in Active (and undoes that on failure).
func (x *Execution) newSession(s *Start) Session {
	x.Stats.Started.Add(1)
	if x.o.OnSessionStart != nil {
		x.o.OnSessionStart(*s)
	}
	sess, err := x.o.New(*s)
	if err != nil {
		x.Stats.Failed.Add(1)
		x.Stats.FailedStarts.Add(1)
		x.ended(s, err, false)
		return nil
	}
	return sess
}

// ended calls OnSessionEnd, if any, for session s. It is never inlined:
// the copy of s it passes would otherwise sit in the frame of runSession,
// on every client's goroutine stack (see simclient.StackBudget).
//
//go:noinline
func (x *Execution) ended(s *Start, err error, started bool) {
	if x.o.OnSessionEnd != nil {
		x.o.OnSessionEnd(*s, err, started)
	}
}

// runSession runs one session made by newSession, keeping the counters, and
// reports whether it failed, and whether that failure was a failed start
// (its socket or connection could not be opened). It closes the session,
// unless keep is set and the session completed: then kept is true and the
// caller owns the open session (Start.Prev of the next).
//
// A session that gave up its goroutine in a pause (simclient.ErrSuspended,
// closed model only) is neither closed nor counted: suspended is true, and
// the caller resumes it with resumeSession.
func (x *Execution) runSession(s *Start, sess Session, keep bool) (failed, failedStart, kept, suspended bool) {
	return x.sessionDone(s, sess, keep, sess.Run(x.runCtx, s.Intended))
}

// resumeSession goes on with a session runSession (or resumeSession)
// reported suspended, as runSession does.
func (x *Execution) resumeSession(s *Start, sess Session) (failed, failedStart, kept, suspended bool) {
	return x.sessionDone(s, sess, true, sess.(simclient.Resumer).Resume(x.runCtx))
}

// sessionDone is the end of runSession and resumeSession: err is what the
// session's Run or Resume returned.
func (x *Execution) sessionDone(s *Start, sess Session, keep bool, err error) (failed, failedStart, kept, suspended bool) {
	if err == simclient.ErrSuspended {
		if _, ok := sess.(simclient.Resumer); ok {
			return false, false, false, true
		}
	}
	cut := err != nil && (x.sessCtx.Err() != nil || errors.Is(err, simclient.ErrStopped))
	switch kept = keep && err == nil; {
	case kept:
	case cut:
		x.closeLater(sess)
	default:
		sess.Close()
	}
	switch {
	case err == nil:
		x.Stats.Completed.Add(1)
	case cut:
		x.Stats.Aborted.Add(1)
		err = nil
	default:
		x.Stats.Failed.Add(1)
		failed = true
		if simclient.IsFailedStart(err) {
			x.Stats.FailedStarts.Add(1)
			failedStart = true
		}
	}
	x.ended(s, err, true)
	return failed, failedStart, kept, false
}

// addActive counts one more live session and keeps the peak.
func (x *Execution) addActive() { addPeak(&x.Stats.Active, &x.Stats.MaxActive) }

// addPeak adds one to n and keeps its peak in peak.
func addPeak(n, peak *atomic.Int64) {
	v := n.Add(1)
	for {
		m := peak.Load()
		if v <= m || peak.CompareAndSwap(m, v) {
			return
		}
	}
}
