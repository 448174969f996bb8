package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// ownedRun is the server `run --target-cmd` started (an ownedTarget),
// followed for the run: its watchdog once the run has one, and how the
// process ended when it ended on its own.
type ownedRun struct {
	*ownedTarget
	engine.Observes // no live view: LiveReady does nothing

	mu       sync.Mutex
	w        *liveness.Watchdog
	start    time.Time // the run's start (LoadStart)
	exitedAt time.Time // zero while it runs, or when lobbybench stopped it
	exit     string
	tail     []string
	stopping chan struct{}
	watched  chan struct{}
	stopOnce sync.Once
}

// startOwned starts the plan's server (command) and waits until it
// answers the protocol's reachability check at the plan's target. On
// failure it says why and returns nil and the exit code (startExit; 2
// also for a target that does not resolve).
func startOwned(ctx context.Context, e *env, name string, f *ownedTargetFlags, command string, plan *scenario.Plan) (*ownedRun, int) {
	addr, err := target.Resolve(ctx, plan.Target)
	if err != nil {
		return nil, usageErr(e, name, "--target %s: %v", plan.Target, err)
	}
	ready := func(ctx context.Context) error {
		return engine.Reach(ctx, plan.Protocol, plan.Options, addr, time.Second)
	}
	t, code := startOwnedTarget(ctx, e, name, f, command, plan.Target, ready)
	if t == nil {
		return nil, code
	}
	r := &ownedRun{ownedTarget: t, stopping: make(chan struct{}), watched: make(chan struct{})}
	go r.watch()
	return r, exitOK
}

// watch waits for the process to end; unless lobbybench is stopping it,
// that is the target down: the run's watchdog is told at once. A
// recovery drill may start it again (owned.Apply): watch then goes on
// with the new process, until lobbybench stops it.
func (r *ownedRun) watch() {
	defer close(r.watched)
	for {
		exited := r.p.Exited()
		select {
		case <-r.stopping:
			return
		case <-exited:
		}
		select {
		case <-r.stopping:
			// Both at once: lobbybench's stop is the likelier cause, and
			// how it ended is in the telemetry's exits.
			return
		default:
		}
		now := time.Now()
		exit, tail, _ := r.p.Ended()
		r.mu.Lock()
		r.exitedAt, r.exit, r.tail = now, exit, tail
		w := r.w
		r.mu.Unlock()
		if w != nil {
			w.MarkDown(now.Sub(w.Start), result.DownExited, "", exit, tail)
		}
		// Until a restart gives it a new process, or lobbybench stops.
		tick := time.NewTicker(50 * time.Millisecond)
		for r.p.Exited() == exited {
			select {
			case <-r.stopping:
				tick.Stop()
				return
			case <-tick.C:
			}
		}
		tick.Stop()
		// Started again: it is no longer down for finish to report.
		r.mu.Lock()
		r.exitedAt, r.exit, r.tail = time.Time{}, "", nil
		r.mu.Unlock()
	}
}

// ownTarget starts cmdline, the server --target-cmd (or the scenario's
// target_cmd) names, at plan's target, and makes the runs of cfg
// watch it: it observes them (engine.TargetObserver). A nil owner comes
// with exitOK when there is no command, else with the exit code of the
// failure, said.
func ownTarget(ctx context.Context, e *env, name string, own *ownedTargetFlags, cmdline string, plan *scenario.Plan, cfg *engine.Config) (*ownedRun, int) {
	if err := own.need(cmdline, plan.Target); err != nil {
		return nil, usageErr(e, name, "%v", err)
	}
	if cmdline == "" {
		return nil, exitOK
	}
	owner, code := startOwned(ctx, e, name, own, cmdline, plan)
	if owner == nil {
		return nil, code
	}
	cfg.Observers = append(cfg.Observers, owner)
	return owner, exitOK
}

// WatchdogReady is engine.Observer's: the run's watchdog learns of the
// process's end, even one before the run began.
func (r *ownedRun) WatchdogReady(w *liveness.Watchdog) {
	r.mu.Lock()
	r.w = w
	at, exit, tail := r.exitedAt, r.exit, r.tail
	r.mu.Unlock()
	if !at.IsZero() {
		w.MarkDown(max(at.Sub(w.Start), 0), result.DownExited, "", exit, tail)
	}
}

// LoadStart is engine.Observer's: the telemetry counts from the run's
// start.
func (r *ownedRun) LoadStart(start time.Time) {
	r.mu.Lock()
	r.start = start
	r.mu.Unlock()
	r.p.Baseline(start)
}

// TargetTelemetry is engine.TargetObserver's: the process's figures so
// far, for the live metrics.
func (r *ownedRun) TargetTelemetry() *result.TargetProcess { return r.Snapshot() }

// stop stops watching, then the server (ownedTarget.Stop); safe on every
// path, a run or none, and more than once.
func (r *ownedRun) stop() {
	r.stopOnce.Do(func() {
		close(r.stopping)
		<-r.watched
	})
	r.Stop()
}

// endedEarly says how the process ended when it ended on its own, with
// its last output; "" when it did not.
func (r *ownedRun) endedEarly() string {
	exit, tail, ended := r.p.Ended()
	if !ended {
		return ""
	}
	s := "the --target-cmd server " + exit + " before the run began"
	if len(tail) > 0 {
		s += "; its last output:\n    " + strings.Join(tail, "\n    ")
	}
	return s
}

// finish stops the server and puts what it did into res: its telemetry
// (Run.TargetProcess) and, when it ended on its own during the run and
// no outage says so yet (no watchdog, --workers, or an end after the
// watchdog stopped), a TARGET DOWN outage with its exit and last output.
func (r *ownedRun) finish(res *engine.Result) {
	r.stop()
	res.Run.TargetProcess = r.Snapshot()
	r.noteEnd(res)
}

// noteEnd records in res the server's end, when it has ended: what a
// run's watchdog learns through onWatchdog, for a run that had none in
// this process (`--workers`: each worker watches only the address).
func (r *ownedRun) noteEnd(res *engine.Result) {
	r.mu.Lock()
	at, exit, tail, start := r.exitedAt, r.exit, r.tail, r.start
	r.mu.Unlock()
	if at.IsZero() {
		return
	}
	if start.IsZero() {
		start = res.Run.StartedAt
	}
	noteExit(res.Run, max(at.Sub(start), 0), exit, tail)
}

// noteExit records an owned process's end in run's outages as the
// watchdog's MarkDown would: the open outage says it exited, or a new
// one opens at offset at; the headline follows.
func noteExit(run *result.Run, at time.Duration, exit string, tail []string) {
	for _, o := range run.Outages {
		if o.Kind == result.DownExited && o.Exit == exit {
			return // the watchdog has it
		}
	}
	if n := len(run.Outages); n > 0 && !run.Outages[n-1].Back {
		o := &run.Outages[n-1]
		o.Kind, o.Exit, o.Output = result.DownExited, exit, tail
	} else {
		// No watchdog counted what the load had answered: the seconds
		// of the time series wholly before the end give a lower bound.
		var answered int64
		for _, p := range run.TimeSeries {
			if time.Duration(p.Second+1)*time.Second <= at {
				answered += p.Requests - p.Errors
			}
		}
		run.Outages = append(run.Outages, result.Outage{StartNS: at, Kind: result.DownExited,
			Exit: exit, Output: tail, AnsweredBefore: answered})
	}
	run.NoteTargetDown()
}
