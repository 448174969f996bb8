package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/metrics/prom"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Config is one run: the plan and how to drive and show it.
type Config struct {
	Plan  *scenario.Plan
	Shard Shard
	// Grace, MaxLateness, PollInterval, Abort: see Options (zero =
	// defaults).
	Grace, MaxLateness, PollInterval time.Duration
	Abort                            <-chan struct{}
	// NoSpin (`run --no-spin`) keeps the open model's schedule from
	// spinning on its core before each arrival (Options.HoldP).
	NoSpin bool
	// ReachTimeout bounds the reachability check (zero = default).
	ReachTimeout time.Duration
	// Progress is where progress goes in Mode (nil or ProgressNone: none);
	// LineInterval paces ProgressLines.
	Progress     io.Writer
	Mode         ProgressMode
	LineInterval time.Duration
	// Client tunes the simulated clients (recorders, socket buffers, tick).
	Client simclient.Options
	// Embedded configures the reference server started when the plan names
	// no target; nil means refserver.Loopback().
	Embedded *refserver.Config
	// Factory makes the sessions; nil means the simclient factory
	// registered for the plan's protocol.
	Factory simclient.Factory
	// Warnings receives the run's warnings as they happen, even with
	// progress off: an estimate of open files above the limit, the first
	// failed start. Nil: none are printed (they are in the result too).
	// The engine writes to it one write at a time, from whichever of its
	// goroutines has something to say: it need not be safe for
	// concurrent use.
	Warnings io.Writer
	// NoFilesWarning leaves the open-files warning to the caller, who
	// knows the run's need better than max_clients does (a capacity step
	// says it once, from its own load); the estimate is still in Info.
	NoFilesWarning bool
	// EmbeddedAt, when valid, is the reference server a `run --workers`
	// parent started for its workers: the run targets it as the embedded
	// server (its instance ports are whatever it took) without starting
	// one.
	EmbeddedAt netip.AddrPort
	// Watchdog is the interval of the target's watchdog (liveness: the
	// protocol's own probe on its own socket, not counted as load): 0
	// means liveness.DefaultInterval, below 0 no watchdog (`run
	// --watchdog 0`). WatchdogTimeout bounds one probe (0: the scenario's
	// shortest request timeout, within 1-5 s).
	Watchdog, WatchdogTimeout time.Duration
	// OnWatchdog, when set, is handed the run's watchdog before it
	// starts: the hook through which an owned target process's death is
	// reported (Watchdog.MarkDown with result.DownExited, its exit and
	// last output), so it opens or completes the outage the probes see.
	// An owner's telemetry goes to Result.Run.TargetProcess after Run
	// returns.
	OnWatchdog func(*liveness.Watchdog)
	// MetricsAddr, when set, serves the live counters and latencies in the
	// Prometheus/OpenMetrics text format at http://MetricsAddr/metrics for
	// the length of the run.
	MetricsAddr string
	// MetricsUntil, when set, keeps the metrics server up after Run (or
	// RunWorkers) returns, until it is done: `run --serve-linger`
	// serves the final figures while a scraper takes them. Nil: the
	// server stops when the run returns.
	MetricsUntil context.Context
	// Observers is the connection budget the run's HTTP observers share
	// (the metrics server here, the caller's live page): the run sets it
	// from its open-files estimate (observe.Budget.Reserve), its own
	// sockets first. Nil: the metrics server has a budget of its own.
	Observers *observe.Budget
	// WorkerMetrics (a --workers worker whose parent serves live metrics)
	// adds the cumulative metrics.LiveState to the ProgressJSON lines: at
	// most once a second, and on the final line.
	WorkerMetrics bool
	// OnLive, when set, is handed the run's live view as its load starts
	// (Live: the one process's figures, or with RunWorkers the exact
	// merge of its workers' states, the one MetricsAddr serves): what
	// `run --dashboard-addr` shows. RunWorkers's workers must send their
	// states (WorkerMetrics) for it to hold more than their deaths.
	OnLive func(*Live)
	// Owned is the target's process when lobbybench started it
	// (--target-cmd); Faults, the scenario's recovery drill, are applied
	// to it during the run (engine/drill.go, Result.Run.Drill). Faults
	// need Owned.
	Owned  *owned.Process
	Faults []owned.Fault
	// OnStart, when set, is called with the run's start (the origin of
	// its offsets, Run.StartedAt) as the load begins: an owner of the
	// target process (--target-cmd) takes its baseline then.
	OnStart func(start time.Time)
	// StartAt, when set, is the run's start instant (`run --start-at`):
	// once the target answers, the run waits for it (ctx ends the wait:
	// a *StartWaitError, nothing measured) and starts its schedule there,
	// the zero of its offsets and of every shard's of a coordinated run.
	// Come to it more than MaxLateness late, the run joins late
	// (Options.Start): it says so on Warnings and in its result, and the
	// arrivals it missed are dropped starts (late_start). Bounding how
	// far ahead or behind it may be is the caller's (the flags').
	StartAt time.Time
	// TargetTelemetry, when set, returns the owned target process's
	// figures so far (owned.Process.Snapshot), for the live metrics. The
	// embedded server's are sampled by the run itself.
	TargetTelemetry func() *result.TargetProcess
}

// metricsContext is the metrics server's life: until the run returns
// (cancel), or until until is done when it is set.
func metricsContext(ctx, until context.Context) (context.Context, context.CancelFunc) {
	if until != nil {
		return until, func() {}
	}
	return context.WithCancel(context.WithoutCancel(ctx))
}

// selfSampleEvery is how often the embedded server's process is sampled.
const selfSampleEvery = time.Second

// Notes of the embedded server's TargetProcess: where its figures come
// from.
const (
	noteEmbedded        = "the embedded server runs in lobbybench's own process: these figures include the load generator's own work"
	noteEmbeddedWorkers = "the embedded server runs in the --workers parent process, the load in the worker processes: these figures are the server's, plus the parent's merging of their progress"
)

// sampleSelf starts sampling this process, where the embedded server
// runs, from start; nil where it cannot (no /proc).
func sampleSelf(start time.Time) *owned.SelfSampler {
	s, err := owned.SampleSelf(selfSampleEvery, start)
	if err != nil {
		return nil
	}
	return s
}

// selfTelemetry is the embedded server's TargetProcess so far, or the
// owner's (Config.TargetTelemetry).
func selfTelemetry(cfg Config, s *owned.SelfSampler, note string) func() *result.TargetProcess {
	switch {
	case cfg.TargetTelemetry != nil:
		return cfg.TargetTelemetry
	case s != nil:
		return func() *result.TargetProcess { return TargetProcess(s.Snapshot(), note) }
	}
	return nil
}

// Info is what the engine adds to a run's result beyond result.Run: the
// shard, the session counters, the harness's resource use and the
// embedded server's counters.
type Info struct {
	Shard    string `json:"shard"` // "i/n"
	Protocol string `json:"protocol"`
	Model    string `json:"model"`
	Seed     int64  `json:"seed"`
	// Embedded is true when the run started its own reference server.
	Embedded    bool        `json:"embedded"`
	Interrupted bool        `json:"interrupted"`
	Sessions    SessionInfo `json:"sessions"`
	Sources     int         `json:"source_addresses"`
	Harness     Harness     `json:"harness"`
	// Server holds the embedded reference server's counters.
	Server *EmbeddedStats `json:"embedded_server,omitempty"`
	// Files is the estimate of descriptors the run needed against the
	// open-files limit, made before it started.
	Files Files `json:"open_files"`
	// Workers is the number of worker processes of a `run --workers`
	// result (0: one process ran it). Why such a result covers only part
	// of the load (a worker that died) is in the Run (Run.Incomplete),
	// where every report reads it.
	Workers int `json:"workers,omitempty"`
	// MetricsAddr is where the live Prometheus metrics were served.
	MetricsAddr string `json:"metrics_addr,omitempty"`
	// Precise is true for a `run --precise` run (simclient.Options.Precise).
	Precise bool `json:"precise,omitempty"`
	// NoSpin is true for a `run --no-spin` run (Config.NoSpin).
	NoSpin bool `json:"no_spin,omitempty"`
	// Watchdog is what the target's watchdog did; nil when it was off.
	Watchdog *WatchdogInfo `json:"watchdog,omitempty"`
	// StartAt, StartWaitNS, LateStartNS, PlayedPerSecond: see
	// result.ShardRun (Config.StartAt).
	StartAt         time.Time     `json:"start_at,omitzero"`
	StartWaitNS     time.Duration `json:"start_wait_ns,omitempty"`
	LateStartNS     time.Duration `json:"late_start_ns,omitempty"`
	PlayedPerSecond []int64       `json:"-"`
}

// StartWaitError is a run that ended while it waited for its start
// instant (Config.StartAt): nothing was sent but the reachability check,
// nothing was measured.
type StartWaitError struct {
	At  time.Time
	Err error
}

func (e *StartWaitError) Error() string {
	return fmt.Sprintf("stopped while waiting for the start instant %s (--start-at): nothing was measured", e.At.UTC().Format(time.RFC3339Nano))
}

func (e *StartWaitError) Unwrap() error { return e.Err }

// waitStart waits until at, or until ctx ends; it returns how long it
// waited.
// noteStartWait says on w, once, that the run waits for its start
// instant, when the wait is over a second and the run shows its progress
// to a person (not a worker's JSON lines, whose parent says it once for
// all): a silent wait reads as a hang.
func noteStartWait(w io.Writer, mode ProgressMode, at time.Time) {
	d := time.Until(at)
	if w == nil || mode == ProgressNone || mode == ProgressJSON || d <= time.Second {
		return
	}
	fmt.Fprintf(w, "lobbybench: waiting %s for the start instant %s (--start-at)\n", words.Seconds(d), at.UTC().Format(time.RFC3339Nano))
}

func waitStart(ctx context.Context, at time.Time) (time.Duration, error) {
	d := time.Until(at)
	if d <= 0 {
		return 0, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return d, nil
	case <-ctx.Done():
		return 0, &StartWaitError{At: at, Err: ctx.Err()}
	}
}

// WatchdogInfo describes a run's watchdog: its pace and its probes (not
// counted in the load's figures; a server's counters include them).
type WatchdogInfo struct {
	IntervalNS time.Duration `json:"interval_ns"`
	TimeoutNS  time.Duration `json:"timeout_ns"`
	Probes     int64         `json:"probes"`
	Answered   int64         `json:"answered"`
}

// SessionInfo counts sessions as the engine saw them.
type SessionInfo struct {
	Started   int64 `json:"started"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	// FailedStarts are the failed sessions that could not open their
	// socket or connection (out of descriptors, no free port): load the
	// scenario asked for and the run did not generate. Any fails the run.
	FailedStarts  int64 `json:"failed_starts"`
	Aborted       int64 `json:"aborted"` // cut short by the end of the run
	DroppedNoSlot int64 `json:"dropped_no_free_client"`
	DroppedLate   int64 `json:"dropped_late"`
	// DroppedLateStart: the arrivals missed by a late start
	// (Config.StartAt; result.Sessions.DroppedLateStart).
	DroppedLateStart int64 `json:"dropped_late_start,omitempty"`
	MaxActive        int64 `json:"max_active"`
	// ClientsAsked and ClientsPeak: the closed model's clients the
	// schedule asked for and the most up at once
	// (result.Sessions.ClientsAsked).
	ClientsAsked int64 `json:"clients_asked,omitempty"`
	ClientsPeak  int64 `json:"clients_peak,omitempty"`
	// WaitsSuspended counts the waits (for a reply, for a group's room) in
	// which a closed-model client gave up its goroutine
	// (simclient.SuspendWaitsFrom); absent when none did. This process's
	// alone: a --workers result leaves it to the shards' JSON.
	WaitsSuspended int64 `json:"waits_suspended,omitempty"`
}

// Result is a run's outcome: the result.Run (what every report reads) with
// the engine's Info beside it under "engine". Its JSON is a result run
// document (result.ReadRun reads it, ignoring "engine").
type Result struct {
	*result.Run
	Engine *Info `json:"engine"`
	// ThresholdsOK is false when a threshold failed (exit 4).
	ThresholdsOK bool `json:"-"`
	// WorkerRuns are a RunWorkers result's workers' own results (those
	// that left one), each as its process judged its share: what the
	// merge cannot show of one worker alone, e.g. its own send lag.
	WorkerRuns []*result.Run `json:"-"`
}

// Run executes cfg.Plan: it starts the embedded reference server when the
// plan names no target, checks the target is reachable (an *UnreachableError when it does
// not answer; nothing else is sent then), runs the load model with live
// progress, and assembles the result with thresholds evaluated. When ctx is
// cancelled it stops scheduling, lets in-flight sessions finish within the
// grace period and still returns the full result, with
// Engine.Interrupted set. The plan must be valid (scenario.Load).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Plan == nil {
		return nil, errors.New("engine: Config.Plan is nil")
	}
	if len(cfg.Faults) > 0 && cfg.Owned == nil {
		return nil, errors.New("engine: faults need a target lobbybench started (target_cmd: or --target-cmd)")
	}
	cfg.Warnings = serialWarnings(cfg.Warnings)
	p := *cfg.Plan // the run may adjust its copy
	plan := &p
	proto, ok := simclient.Describe(string(plan.Protocol))
	if !ok {
		return nil, fmt.Errorf("engine: no simulated client for protocol %q (have %v)", plan.Protocol, simclient.Protocols())
	}
	factory := cfg.Factory
	if factory == nil {
		factory = proto.New
	}
	info := &Info{Shard: cfg.Shard.String(), Protocol: string(plan.Protocol), Model: string(plan.Load.Model), Seed: plan.Seed, Precise: cfg.Client.Precise, NoSpin: cfg.NoSpin}

	// The target: the plan's, or an embedded server.
	var addr netip.AddrPort
	targetName := plan.Target
	var srv *embedded
	var srvCfg *refserver.Config
	if cfg.EmbeddedAt.IsValid() {
		addr = cfg.EmbeddedAt // the parent's: this process's harness figures do not include it
		if plan.Options != nil {
			plan.Options = plan.Options.Embedded()
		}
		targetName = "embedded " + addr.String()
	} else if plan.Target == "" {
		c, err := embeddedConfig(plan.Protocol, plan.Embedded)
		if err != nil {
			return nil, err
		}
		if cfg.Embedded != nil {
			c = *cfg.Embedded
		}
		srvCfg = &c
		if srv, err = startEmbedded(plan, srvCfg); err != nil {
			return nil, err
		}
		defer srv.close()
		addr = srv.addr
		info.Embedded = true
		// What the options say of the scenario's real target (udp-lobby's
		// instance port range) is not true of the embedded server.
		if plan.Options != nil {
			plan.Options = plan.Options.Embedded()
		}
		targetName = "embedded " + addr.String()
	} else {
		var err error
		if addr, err = target.Resolve(ctx, plan.Target); err != nil {
			return nil, &UnreachableError{Target: plan.Target, Err: err}
		}
	}
	settled, err := reach(ctx, proto, plan.Options, addr, cfg.ReachTimeout)
	if err != nil {
		return nil, err
	}
	if settled != nil {
		plan.Options = settled
	}
	info.Files = EstimateFiles(plan, cfg.Shard, srvCfg)
	if cfg.Observers != nil {
		cfg.Observers.Reserve(info.Files.Limit, info.Files.Needed())
	}
	if !info.Files.Fits() && cfg.Warnings != nil && !cfg.NoFilesWarning {
		fmt.Fprintf(cfg.Warnings, "lobbybench: warning: this run needs %s: sessions beyond it will fail to start; spread the clients over processes with --workers auto (or --workers N, or --shard)\n", info.Files)
	}

	sources := plan.SourceAddrs
	if len(sources) == 0 {
		sources = netrange.DefaultSources(addr.Addr(), netrange.ForClients(plan.Load.MaxClients))
	}
	info.Sources = len(sources)

	// The schedule's zero: the start instant when given, also when this
	// process comes to it late (offsets are the coordinated run's),
	// otherwise now.
	start := cfg.StartAt
	if start.IsZero() {
		start = time.Now()
	}
	col := metrics.NewCollector(start)
	// The embedded server's sampler starts with the schedule, after the
	// wait; the live metrics read it once it is there.
	var selfAt atomic.Pointer[owned.SelfSampler]
	if cfg.MetricsAddr != "" {
		// Served before the wait for the start instant: a shard waiting
		// for it is up for its scraper (its counters at zero), and a
		// busy or bad address fails now, not at the instant after the
		// whole wait, when the other shards start without this one.
		mctx, mcancel := metricsContext(ctx, cfg.MetricsUntil)
		defer mcancel()
		target := cfg.TargetTelemetry
		if target == nil && srv != nil {
			target = func() *result.TargetProcess {
				if s := selfAt.Load(); s != nil {
					return selfTelemetry(cfg, s, noteEmbedded)()
				}
				return nil
			}
		}
		a, err := prom.ServeWith(mctx, cfg.MetricsAddr, col, prom.Options{Target: target, Conns: cfg.Observers})
		if err != nil {
			return nil, fmt.Errorf("--metrics-addr: %w", err)
		}
		info.MetricsAddr = a.String()
		if cfg.Mode != ProgressNone && cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "lobbybench: live metrics at http://%s/metrics\n", a)
		}
	}
	if !cfg.StartAt.IsZero() {
		info.StartAt = cfg.StartAt
		noteStartWait(cfg.Warnings, cfg.Mode, cfg.StartAt)
		if info.StartWaitNS, err = waitStart(ctx, cfg.StartAt); err != nil {
			return nil, err
		}
	}
	mem := startMemSampler(250 * time.Millisecond)
	var self *owned.SelfSampler
	if srv != nil {
		self = sampleSelf(start)
		selfAt.Store(self)
	}
	if cfg.OnStart != nil {
		cfg.OnStart(start)
	}
	stopSelf := func() *result.TargetProcess {
		if self == nil {
			return nil
		}
		return TargetProcess(self.Stop(), noteEmbedded)
	}
	opt := cfg.Client
	// A closed-model client's goroutine is its own loop, which can end in
	// a pause and start again (Execution.loop); an open-model arrival's
	// goroutine runs one session.
	opt.Suspend = plan.Load.Model == scenario.Closed
	// From SuspendWaitsFrom clients in this process (or when the caller
	// asks), a client waiting for a reply or its group's room gives up
	// its goroutine too.
	opt.SuspendWaits = opt.Suspend && (opt.SuspendWaits || cfg.Shard.Part(plan.Load.MaxClients) >= simclient.SuspendWaitsFrom)
	sh, err := simclient.NewShared(plan, addr, col, opt)
	if err != nil {
		mem.Stop()
		stopSelf()
		return nil, err
	}
	// liveWD is the watchdog once it runs, for the live states a worker
	// sends (its outages) and the live view.
	var liveWD atomic.Pointer[watch]
	dr := newDrill(cfg, start)
	engineRec := col.NewRecorder() // dropped starts, from the scheduling goroutine
	var firstStart sync.Once
	firstKey := make([]metrics.Key, len(plan.Flows))
	for i, f := range plan.Flows {
		if len(f.Steps) > 0 {
			firstKey[i] = sh.StepKey(i, 0)
		} else {
			firstKey[i] = col.Step(f.Name)
		}
	}
	o := Options{
		Plan: plan, Shard: cfg.Shard, Sources: sources,
		Grace: cfg.Grace, MaxLateness: cfg.MaxLateness, PollInterval: cfg.PollInterval, Abort: cfg.Abort,
		// The schedule's spin would take a core from a server in this
		// process.
		HoldP: srv == nil && !cfg.NoSpin,
		New: func(s Start) (Session, error) {
			var prev simclient.Session
			if s.Prev != nil {
				prev = s.Prev
			}
			sess, err := simclient.Renew(factory, sh, prev, s.ID, &plan.Flows[s.Flow], s.Source)
			if err != nil {
				return nil, err
			}
			return sess, nil
		},
		// A dropped start counts against the flow's first step: the step
		// the schedule wanted run and could not.
		OnDropped:      func(s Start, _ DropReason) { engineRec.Dropped(firstKey[s.Flow]) },
		OnSessionStart: func(s Start) { sh.Recorder(s.ID).SessionStarted() },
		Start:          cfg.StartAt,
		OnLateStart: func(late time.Duration, missed int64) {
			if cfg.Warnings == nil {
				return
			}
			line := fmt.Sprintf("lobbybench: shard %s came up %s after the start instant %s (--start-at) and joins late", cfg.Shard, words.Seconds(late), cfg.StartAt.UTC().Format(time.RFC3339Nano))
			if plan.Load.Model != scenario.Closed {
				line += fmt.Sprintf(": the %s due before now are counted as dropped starts (late_start), not shifted", words.Count(missed, "arrival"))
			}
			fmt.Fprintln(cfg.Warnings, line)
		},
		OnSessionEnd: func(s Start, err error, ran bool) {
			rec := sh.Recorder(s.ID)
			if !ran && err != nil {
				// The session never ran a step: its failure counts
				// against the flow's first step, as a dropped start
				// does (a client whose first step opens the socket,
				// TCP, records it there itself).
				reason := simclient.ReasonOf(err)
				if reason == "" {
					reason = simclient.ReasonSocket
				}
				rec.Fail(firstKey[s.Flow], reason, time.Now())
			}
			if !ran || simclient.IsFailedStart(err) {
				firstStart.Do(func() { warnFailedStart(cfg.Warnings, err) })
			}
			rec.SessionFinished()
			if dr != nil {
				dr.sessionEnded(s, err)
			}
		},
	}

	var x *Execution
	xready := make(chan struct{})
	// liveSessions are the scheduler's session counts so far, for the
	// live view and a worker's live state; nil before the load starts.
	liveSessions := func() *result.Sessions {
		select {
		case <-xready:
			s := x.Stats.Snapshot().info().report()
			return &s
		default:
			return nil
		}
	}
	var live *Live
	if cfg.OnLive != nil {
		set := func() metrics.LiveSet {
			s := col.LiveSet()
			s.Sessions = liveSessions()
			return s
		}
		live = &Live{start: start, plan: plan, target: targetName, ctx: ctx, set: set, shards: []string{cfg.Shard.String()},
			telemetry: selfTelemetry(cfg, self, noteEmbedded)}
		cfg.OnLive(live)
	}
	var ended atomic.Bool // the load is over: the next progress sample is the final one
	stopProgress := func() {}
	// note prints a line at once: above the bar, between the progress
	// lines, or as a warning when progress is off or goes to a parent.
	note := func(line string) {
		if cfg.Warnings != nil {
			fmt.Fprintln(cfg.Warnings, line)
		}
	}
	if cfg.Mode != ProgressNone && cfg.Progress != nil {
		// Live sums the steps only (message types re-record the same
		// requests); the rate is taken over at least a second.
		var lastReq int64
		var rate float64
		lastAt, stateAt := start, time.Time{}
		var above func(string)
		stopProgress, above = startProgress(cfg.Mode, cfg.Progress, plan.Load.Duration, cfg.LineInterval, func() ProgressSample {
			live := col.Live()
			now := time.Now()
			if dt := now.Sub(lastAt); dt >= time.Second {
				rate = float64(live.Requests-lastReq) / dt.Seconds()
				lastReq, lastAt = live.Requests, now
			}
			s := ProgressSample{Elapsed: now.Sub(start), Total: plan.Load.Duration, Rate: rate, Errors: live.Failures,
				Dropped: live.Dropped, Violations: live.Violations, Started: live.SessionsStarted, Finished: live.SessionsFinished}
			select {
			case <-xready:
				s.Active = x.Stats.Active.Load()
				s.FailedStarts = x.Stats.FailedStarts.Load()
			default:
			}
			// The final line (after the load ended) carries the final
			// state, so the parent's last scrape equals the result.
			if cfg.WorkerMetrics && cfg.Mode == ProgressJSON && (ended.Load() || now.Sub(stateAt) >= time.Second) {
				if st, err := col.LiveState(); err == nil {
					if w := liveWD.Load(); w != nil {
						st.Outages = w.outages()
					}
					st.Sessions = liveSessions()
					s.Metrics, stateAt = st, now
				}
			}
			return s
		})
		if cfg.Mode != ProgressJSON {
			note = above
		}
	}
	var wd *watch
	if cfg.Watchdog >= 0 {
		wd = startWatch(ctx, cfg, proto, plan, addr, col, start, note)
	}
	var wdog *liveness.Watchdog
	if wd != nil {
		wdog = wd.w
		liveWD.Store(wd)
		if live != nil {
			live.watchdog.Store(wd)
		}
	}
	if dr != nil {
		dr.run(ctx, wdog)
	}
	xr, interrupted, err := Execute(ctx, o, func(e *Execution) { x = e; close(xready) })
	var rooms *result.RoomCheck
	if dr != nil {
		// The faults end with the load (a stop still sends its SIGCONT);
		// then the lobby's rooms are looked at while the watchdog still
		// watches.
		dr.stop()
		if err == nil {
			timeout := cfg.WatchdogTimeout
			if timeout <= 0 {
				timeout = watchdogTimeout(plan)
			}
			rooms = drillRooms(ctx, plan, addr, timeout, start, wdog)
		}
	}
	var wdRun result.Run
	if wd != nil {
		// Stopped with the load: what it saw after is not the run's.
		wd.stop(&wdRun)
		info.Watchdog = wd.info()
	}
	ended.Store(true)
	stopProgress()
	sh.Close()
	targetProc := stopSelf()
	if err != nil {
		mem.Stop()
		return nil, err
	}
	info.Interrupted = interrupted
	st := xr.Stats.Snapshot()
	info.Sessions = st.info()
	info.LateStartNS = st.LateStart
	if !cfg.StartAt.IsZero() && plan.Load.Model != scenario.Closed {
		info.PlayedPerSecond = xr.PlayedPerSecond()
	}
	info.Harness = mem.Stop()
	info.Harness.StrayDatagrams = sh.StrayDatagrams()
	if srv != nil {
		info.Server = srv.stats()
	}

	run, err := col.Snapshot()
	if err != nil {
		return nil, err
	}
	run.Scenario = plan.Name
	run.Target = targetName
	run.Outages = wdRun.Outages
	run.Totals.FailuresWhileDown = wdRun.Totals.FailuresWhileDown
	if dr != nil {
		end := run.DurationNS
		if end <= 0 {
			end = time.Since(start)
		}
		run.Drill = dr.result(run, end)
		run.Drill.Rooms = rooms
	}
	run.NoteTargetDown()
	// The embedded server's figures; an owner of the target process
	// (--target-cmd) fills run.TargetProcess with its own after Run
	// returns.
	run.TargetProcess = targetProc
	if run.DurationNS <= 0 {
		run.DurationNS = time.Since(start)
	}
	fillRun(run, info)
	markWaits(run, plan)
	res := &Result{Run: run, Engine: info}
	res.ThresholdsOK = result.EvaluateThresholds(run, plan.Conditions())
	return res, nil
}

// warnFailedStart prints the one line a run's first failed start gets: the
// reason and, when it ran out of descriptors, the open-files limit and the
// way past it.
func warnFailedStart(w io.Writer, err error) {
	if w == nil {
		return
	}
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		fmt.Fprintf(w, "lobbybench: a client could not open a socket: too many open files (RLIMIT_NOFILE %d per process); spread the clients over processes with --workers auto (or --workers N)\n", OpenFilesLimit())
		return
	}
	fmt.Fprintf(w, "lobbybench: a client could not start: %v\n", err)
}

// embedded is a reference server started in-process for a run.
type embedded struct {
	addr  netip.AddrPort
	stats func() *EmbeddedStats
	close func()
}

// EmbeddedStats are the embedded reference server's counters: those of the
// parts the run started (UDP lobby, TCP lobby or Leviathan endpoint).
type EmbeddedStats struct {
	refserver.Stats
}

// Counters returns every non-zero counter as "name value", sorted within
// each part, for a one-line summary.
func (e *EmbeddedStats) Counters() []string {
	var b strings.Builder
	e.Stats.WriteText(&b)
	var out []string
	for _, line := range strings.Split(b.String(), "\n") {
		if line != "" && !strings.HasSuffix(line, " 0") {
			out = append(out, line)
		}
	}
	return out
}

// embeddedConfig is the reference server configuration for a run with no
// target: free loopback ports, only the protocol's parts (EmbeddedParts)
// and those they need, and the scenario's embedded_server settings on top.
func embeddedConfig(proto scenario.ProtocolName, es scenario.EmbeddedServer) (refserver.Config, error) {
	p, ok := simclient.Describe(string(proto))
	if !ok {
		return refserver.Config{}, fmt.Errorf("engine: no simulated client for protocol %q (have %v)", proto, simclient.Protocols())
	}
	c, err := refserver.Loopback().Only(p.EmbeddedParts...)
	if err != nil {
		return c, fmt.Errorf("engine: protocol %s: %w", proto, err)
	}
	c.Embed(es)
	return c, nil
}

// startEmbedded starts the reference server c for plan's protocol, aimed
// at the first of its EmbeddedParts.
func startEmbedded(plan *scenario.Plan, c *refserver.Config) (*embedded, error) {
	p, ok := simclient.Describe(string(plan.Protocol))
	if !ok {
		return nil, fmt.Errorf("engine: no simulated client for protocol %q (have %v)", plan.Protocol, simclient.Protocols())
	}
	srv, err := refserver.Start(context.Background(), *c)
	if err != nil {
		return nil, fmt.Errorf("engine: embedded reference server: %w", err)
	}
	part := p.EmbeddedParts[0]
	addr := srv.Addr(part)
	if !addr.IsValid() {
		srv.Close()
		return nil, fmt.Errorf("engine: embedded reference server has no %s part", part)
	}
	return &embedded{addr: addr, close: func() { srv.Close() },
		stats: func() *EmbeddedStats { return &EmbeddedStats{Stats: srv.Stats()} }}, nil
}
