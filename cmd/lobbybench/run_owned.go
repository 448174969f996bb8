package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

// ownedTailLines is how many of the owned server's last output lines an
// outage quotes.
const ownedTailLines = 10

// ownedRun is the server `run --target-cmd` started: the process, the
// run's watchdog once the run has one, and how the process ended when it
// ended on its own.
type ownedRun struct {
	p   *owned.Process
	log io.Closer // --target-log, or nil

	mu       sync.Mutex
	w        *liveness.Watchdog
	start    time.Time // the run's start (OnStart)
	exitedAt time.Time // zero while it runs, or when lobbybench stopped it
	exit     string
	tail     []string
	stopping chan struct{}
	watched  chan struct{}
	stopOnce sync.Once
}

// ownedOptions are the run flags of --target-cmd.
type ownedOptions struct {
	cmd          string
	readyTimeout time.Duration
	logPath      string
}

// startOwned starts the plan's server (o.cmd) and waits until it answers
// the protocol's reachability check at the plan's target. The error says
// what went wrong; code is the exit code it gets (2: the command or a
// flag is wrong; 3: the server could not be brought up, or the port was
// taken; 5: interrupted).
func startOwned(ctx context.Context, plan *scenario.Plan, o ownedOptions) (r *ownedRun, code int, err error) {
	if plan.Target == "" {
		return nil, exitUsage, errors.New("--target-cmd needs --target (or the scenario's target): the address the started server answers at")
	}
	addr, err := target.Resolve(ctx, plan.Target)
	if err != nil {
		return nil, exitUsage, fmt.Errorf("--target %s: %v", plan.Target, err)
	}
	var logw io.WriteCloser
	if o.logPath != "" {
		f, err := os.Create(o.logPath)
		if err != nil {
			return nil, exitUsage, fmt.Errorf("--target-log: %v", err)
		}
		logw = f
	}
	spec := owned.Spec{
		Command:      o.cmd,
		Addr:         plan.Target,
		ReadyTimeout: o.readyTimeout,
		Ready: func(ctx context.Context) error {
			return engine.Reach(ctx, plan.Protocol, plan.HeaderProfile, addr, time.Second)
		},
	}
	if logw != nil {
		spec.Log = logw
	}
	p, err := owned.Start(ctx, spec)
	if err != nil {
		if logw != nil {
			logw.Close()
		}
		var se *owned.StartError
		switch {
		case ctx.Err() != nil:
			return nil, exitInterrupted, err
		case errors.As(err, &se) && errors.Is(err, owned.ErrNotFound):
			return nil, exitUsage, err
		case errors.As(err, &se):
			return nil, exitUnreachable, err
		}
		return nil, exitUsage, err
	}
	r = &ownedRun{p: p, stopping: make(chan struct{}), watched: make(chan struct{})}
	if logw != nil {
		r.log = logw
	}
	go r.watch()
	return r, exitOK, nil
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
		exit, tail := r.p.ExitStatus(), r.p.Tail()
		if len(tail) > ownedTailLines {
			tail = tail[len(tail)-ownedTailLines:]
		}
		r.mu.Lock()
		r.exitedAt, r.exit, r.tail = now, exit, tail
		w := r.w
		r.mu.Unlock()
		if w != nil {
			w.MarkDown(now.Sub(w.Start), reports.DownExited, "", exit, tail)
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

// onWatchdog is engine.Config.OnWatchdog: the run's watchdog learns of
// the process's end, even one before the run began.
func (r *ownedRun) onWatchdog(w *liveness.Watchdog) {
	r.mu.Lock()
	r.w = w
	at, exit, tail := r.exitedAt, r.exit, r.tail
	r.mu.Unlock()
	if !at.IsZero() {
		w.MarkDown(max(at.Sub(w.Start), 0), reports.DownExited, "", exit, tail)
	}
}

// onStart is engine.Config.OnStart: the telemetry counts from the run's
// start.
func (r *ownedRun) onStart(start time.Time) {
	r.mu.Lock()
	r.start = start
	r.mu.Unlock()
	r.p.Baseline(start)
}

// telemetry is engine.Config.TargetTelemetry.
func (r *ownedRun) telemetry() *reports.TargetProcess {
	tp := r.p.Snapshot()
	return &tp
}

// stop ends the server (SIGTERM, SIGKILL after the grace period) once,
// and says how; it is safe on every path, a run or none.
func (r *ownedRun) stop() string {
	var how string
	r.stopOnce.Do(func() {
		r.p.SampleNow()
		close(r.stopping)
		<-r.watched
		select {
		case <-r.p.Exited():
			// It had ended on its own: its exit is in the telemetry.
		default:
			err := r.p.Stop()
			switch {
			case err == nil:
				how = "stopped on SIGTERM: " + r.p.ExitStatus()
			default:
				how = err.Error()
			}
		}
		if r.log != nil {
			r.log.Close()
		}
	})
	return how
}

// endedEarly says how the process ended when it ended on its own, with
// its last output; "" when it did not.
func (r *ownedRun) endedEarly() string {
	select {
	case <-r.p.Exited():
	default:
		return ""
	}
	tail := r.p.Tail()
	if len(tail) > ownedTailLines {
		tail = tail[len(tail)-ownedTailLines:]
	}
	s := "the --target-cmd server " + r.p.ExitStatus() + " before the run began"
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
	how := r.stop()
	tp := r.p.Snapshot()
	tp.Stop = how
	res.Run.TargetProcess = &tp
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
func noteExit(run *reports.Run, at time.Duration, exit string, tail []string) {
	for _, o := range run.Outages {
		if o.Kind == reports.DownExited && o.Exit == exit {
			return // the watchdog has it
		}
	}
	if n := len(run.Outages); n > 0 && !run.Outages[n-1].Back {
		o := &run.Outages[n-1]
		o.Kind, o.Exit, o.Output = reports.DownExited, exit, tail
	} else {
		// No watchdog counted what the load had answered: the seconds
		// of the time series wholly before the end give a lower bound.
		var answered int64
		for _, p := range run.TimeSeries {
			if time.Duration(p.Second+1)*time.Second <= at {
				answered += p.Requests - p.Errors
			}
		}
		run.Outages = append(run.Outages, reports.Outage{StartNS: at, Kind: reports.DownExited,
			Exit: exit, Output: tail, AnsweredBefore: answered})
	}
	run.NoteTargetDown()
}

// ownedCommand picks the command that starts the target: --target-cmd,
// else the scenario's target_cmd; "" when neither. A --workers worker
// never starts it: its parent does.
func ownedCommand(flagCmd string, plan *scenario.Plan, worker bool) string {
	if worker {
		return ""
	}
	if strings.TrimSpace(flagCmd) != "" {
		return flagCmd
	}
	return plan.TargetCmd
}
