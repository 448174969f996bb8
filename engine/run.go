package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/words"
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
	// MetricsAddr, when set, serves the live counters and latencies in the
	// Prometheus/OpenMetrics text format at http://MetricsAddr/metrics for
	// the length of the run.
	MetricsAddr string
	// MetricsUntil, when set, keeps the metrics server up after Run (or
	// RunWorkers) returns, until it is done: `run --serve-linger`
	// serves the final figures while a scraper takes them. Nil: the
	// server stops when the run returns.
	MetricsUntil context.Context
	// ConnBudget is the connection budget the run's HTTP observers share
	// (the metrics server here, the caller's live page): the run sets it
	// from its open-files estimate (observe.Budget.Reserve), its own
	// sockets first. Nil: the metrics server has a budget of its own.
	ConnBudget *observe.Budget
	// WorkerMetrics (a --workers worker whose parent serves live metrics)
	// adds the cumulative metrics.LiveState to the ProgressJSON lines: at
	// most once a second, and on the final line.
	WorkerMetrics bool
	// Observers watch the run at its named moments (Observer): its
	// watchdog ready, its load's start, its live view ready; a
	// TargetObserver's figures are the owned target's in the live
	// metrics.
	Observers []Observer
	// Owned is the target's process when lobbybench started it
	// (--target-cmd); Faults, the scenario's recovery drill, are applied
	// to it during the run (engine/drill.go, Result.Run.Drill). Faults
	// need Owned.
	Owned  *owned.Process
	Faults []owned.Fault
	// StartAt, when set, is the run's start instant (`run --start-at`):
	// once the target answers, the run waits for it (ctx ends the wait:
	// a *StartWaitError, nothing measured) and starts its schedule there,
	// the zero of its offsets and of every shard's of a coordinated run.
	// Come to it more than MaxLateness late, the run joins late
	// (Options.Start): it says so on Warnings and in its result, and the
	// arrivals it missed are dropped starts (late_start). Bounding how
	// far ahead or behind it may be is the caller's (the flags').
	StartAt time.Time
	// StartGate, when set, gives StartAt once the target answers: a
	// --workers worker says it is ready and waits for its parent's
	// instant (Workers.Gate, AwaitStart). ctx ends the wait.
	StartGate func(ctx context.Context) (time.Time, error)
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
// owner's (a TargetObserver's).
func selfTelemetry(cfg Config, s *owned.SelfSampler, note string) func() *result.TargetProcess {
	switch {
	case cfg.targetTelemetry() != nil:
		return cfg.targetTelemetry()
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
	// Pacing is how waits that end in a send were paced (precise.Pacing):
	// the pacing thread, or the Go timer off Linux.
	Pacing string `json:"pacing"`
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
	return fmt.Sprintf("stopped while waiting for the start instant %s (--start-at)", e.At.UTC().Format(time.RFC3339Nano))
}

func (e *StartWaitError) Unwrap() error { return e.Err }

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

// waitStart waits until at, or until ctx ends; it returns how long it
// waited.
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

// Stamped is r with its run's headline filled in (result.Stamped), on a
// copy, for its JSON.
func (r *Result) Stamped() result.Doc {
	cp := *r
	cp.Run = result.Stamped(r.Run).(*result.Run)
	return &cp
}

// Run executes cfg.Plan: it starts the embedded reference server when the
// plan names no target, checks the target is reachable (an *UnreachableError when it does
// not answer; nothing else is sent then), runs the load model with live
// progress, and assembles the result with thresholds evaluated. When ctx is
// cancelled it stops scheduling, lets in-flight sessions finish within the
// grace period and still returns the full result, with
// Engine.Interrupted set. The plan must be valid (scenario.Load).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	r, err := newRun(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer r.release()
	if err := r.resolveTarget(); err != nil {
		return nil, err
	}
	if err := r.reachTarget(); err != nil {
		return nil, err // nothing else is sent to a target that does not answer
	}
	r.estimateFiles()
	if err := r.passGate(); err != nil {
		return nil, err
	}
	r.startCollector()
	if err := r.serveMetrics(); err != nil {
		return nil, err
	}
	// What the clients share is made before the start instant: a
	// coordinated shard that made it after would come to the instant late
	// by that much (18 ms with virtual flows, measured).
	if err := r.buildSessions(); err != nil {
		return nil, err
	}
	if err := r.waitForStart(); err != nil {
		r.sh.Close()
		return nil, err
	}
	r.startSampling()
	o := r.sessionOptions()
	r.startObservers()
	out, err := r.execute(o)
	if err != nil {
		return nil, err
	}
	return r.assemble(out)
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

// warnRefusal prints the one line a run's first refused request gets:
// the step, what the server answered and what governs it
// (simclient.Refusal); the failures table counts them all.
func warnRefusal(w io.Writer, err error) {
	if w != nil {
		fmt.Fprintf(w, "lobbybench: warning: a request was refused (the first; the failures table counts them all): %v\n", err)
	}
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
