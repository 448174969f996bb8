package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/precise"
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

// The phases of Run, in the order Run calls them. Each is a method of
// runState, which holds what one phase makes for the later ones; a
// phase that fails returns the error Run returns, and whatever the
// phases started is stopped by the phase that failed or by release.

// runState is one Run as it goes through its phases.
type runState struct {
	ctx     context.Context
	cfg     Config         // Warnings serialised (serialWarnings)
	plan    *scenario.Plan // the run's copy of cfg.Plan, which its phases adjust
	proto   *simclient.Client
	factory simclient.Factory
	info    *Info

	// The target (resolveTarget, reachTarget, estimateFiles).
	addr       netip.AddrPort
	targetName string
	srv        *embedded         // the server this run started, or nil
	srvCfg     *refserver.Config // its configuration, or nil
	sources    []netip.Addr

	// The measuring (startCollector, serveMetrics, startSampling).
	start   time.Time // the schedule's zero
	col     *metrics.Collector
	mcancel context.CancelFunc // ends the metrics server, or nil
	mem     *memSampler
	self    *owned.SelfSampler // the embedded server's process, or nil
	// selfAt is self once it samples: the live metrics start before it.
	selfAt atomic.Pointer[owned.SelfSampler]

	// The load (buildSessions, sessionOptions, execute).
	sh           *simclient.Shared
	dr           *drill                // the recovery drill, or nil
	engineRec    *metrics.Recorder     // dropped starts, from the scheduling goroutine
	firstKey     []metrics.Key         // each flow's first step, by flow
	firstStart   sync.Once             // the warning of the first failed start
	firstRefusal sync.Once             // the warning of the first refused request
	x            *Execution            // the schedule, once xready is closed
	xready       chan struct{}         // closed when Execute has started
	liveWD       atomic.Pointer[watch] // the watchdog once it runs

	// The observers (startObservers).
	live         *Live
	ended        atomic.Bool // the load is over: the next progress sample is the final one
	stopProgress func()
	// note prints a line at once: above the bar, between the progress
	// lines, or as a warning when progress is off or goes to a parent.
	note func(string)
	wd   *watch             // the watchdog, or nil
	wdog *liveness.Watchdog // wd's, or nil
}

// newRun checks cfg and makes the run's state: its own copy of the plan,
// the protocol's client and factory, and its Info.
func newRun(ctx context.Context, cfg Config) (*runState, error) {
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
	info := &Info{Shard: cfg.Shard.String(), Protocol: string(plan.Protocol), Model: string(plan.Load.Model), Seed: plan.Seed, Precise: cfg.Client.Precise, NoSpin: cfg.NoSpin, Pacing: precise.Pacing}
	return &runState{ctx: ctx, cfg: cfg, plan: plan, proto: proto, factory: factory, info: info,
		xready: make(chan struct{}), stopProgress: func() {}, note: warningNote(cfg)}, nil
}

// warningNote prints a line at once on cfg.Warnings (none when nil): the
// note of a run whose progress is off or goes to a parent.
func warningNote(cfg Config) func(string) {
	return func(line string) {
		if cfg.Warnings != nil {
			fmt.Fprintln(cfg.Warnings, line)
		}
	}
}

// release stops what outlives the phases until Run returns: the metrics
// server (unless it lingers, Config.MetricsUntil), then the embedded
// server.
func (r *runState) release() {
	if r.mcancel != nil {
		r.mcancel()
	}
	if r.srv != nil {
		r.srv.close()
	}
}

// resolveTarget finds the target: a --workers parent's embedded server
// (Config.EmbeddedAt), an embedded server of this run's own when the plan
// names no target, or the plan's target resolved (an *UnreachableError
// when it cannot be).
func (r *runState) resolveTarget() error {
	plan := r.plan
	switch {
	case r.cfg.EmbeddedAt.IsValid():
		r.addr = r.cfg.EmbeddedAt // the parent's: this process's harness figures do not include it
		r.embeddedTarget()
	case plan.Target == "":
		c, err := embeddedConfig(plan.Protocol, plan.Embedded)
		if err != nil {
			return err
		}
		if r.cfg.Embedded != nil {
			c = *r.cfg.Embedded
		}
		r.srvCfg = &c
		if r.srv, err = startEmbedded(plan, r.srvCfg); err != nil {
			return err
		}
		r.addr = r.srv.addr
		r.info.Embedded = true
		r.embeddedTarget()
	default:
		r.targetName = plan.Target
		var err error
		if r.addr, err = target.Resolve(r.ctx, plan.Target); err != nil {
			return &UnreachableError{Target: plan.Target, Err: err}
		}
	}
	return nil
}

// embeddedTarget names the embedded server at r.addr as the target and
// drops what the options say of the scenario's real one (udp-lobby's
// instance port range), which is not true of the embedded server.
func (r *runState) embeddedTarget() {
	if r.plan.Options != nil {
		r.plan.Options = r.plan.Options.Embedded()
	}
	r.targetName = "embedded " + r.addr.String()
}

// reachTarget checks the target answers (reach) and takes the options
// the check settled.
func (r *runState) reachTarget() error {
	settled, err := reach(r.ctx, r.proto, r.plan.Options, r.addr, r.cfg.ReachTimeout)
	if err != nil {
		return err
	}
	if settled != nil {
		r.plan.Options = settled
	}
	return nil
}

// estimateFiles estimates the descriptors the run needs, reserves the
// observers' share of the rest, warns when the run does not fit the
// open-files limit, and picks the clients' source addresses.
func (r *runState) estimateFiles() {
	plan, info := r.plan, r.info
	info.Files = EstimateFiles(plan, r.cfg.Shard, r.srvCfg)
	if r.cfg.ConnBudget != nil {
		r.cfg.ConnBudget.Reserve(info.Files.Limit, info.Files.Needed())
	}
	if !info.Files.Fits() && r.cfg.Warnings != nil && !r.cfg.NoFilesWarning {
		fmt.Fprintf(r.cfg.Warnings, "lobbybench: warning: this run needs %s: sessions beyond it will fail to start; spread the clients over processes with --workers auto (or --workers N, or --shard)\n", info.Files)
	}
	r.sources = plan.SourceAddrs
	if len(r.sources) == 0 {
		r.sources = netrange.DefaultSources(r.addr.Addr(), netrange.ForClients(plan.Load.MaxClients))
	}
	info.Sources = len(r.sources)
}

// startCollector sets the schedule's zero and the collector measured from
// it: the start instant when given, also when this process comes to it
// late (offsets are the coordinated run's), otherwise now.
func (r *runState) startCollector() {
	r.start = r.cfg.StartAt
	if r.start.IsZero() {
		r.start = time.Now()
	}
	r.col = metrics.NewCollector(r.start)
}

// serveMetrics serves the live metrics (Config.MetricsAddr) before the
// wait for the start instant: a shard waiting for it is up for its
// scraper (its counters at zero), and a busy or bad address fails now,
// not at the instant after the whole wait, when the other shards start
// without this one.
func (r *runState) serveMetrics() error {
	cfg := r.cfg
	if cfg.MetricsAddr == "" {
		return nil
	}
	var mctx context.Context
	mctx, r.mcancel = metricsContext(r.ctx, cfg.MetricsUntil)
	a, err := prom.ServeWith(mctx, cfg.MetricsAddr, r.col, prom.Options{Target: r.metricsTelemetry(), Conns: cfg.ConnBudget})
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	r.info.MetricsAddr = a.String()
	if cfg.Mode != ProgressNone && cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "lobbybench: live metrics at http://%s/metrics\n", a)
	}
	return nil
}

// metricsTelemetry is the target process's figures for the live metrics:
// the owner's (a TargetObserver's), or the embedded server's once its
// sampler is there (startSampling), or nil.
func (r *runState) metricsTelemetry() func() *result.TargetProcess {
	if t := r.cfg.targetTelemetry(); t != nil || r.srv == nil {
		return t
	}
	return func() *result.TargetProcess {
		if s := r.selfAt.Load(); s != nil {
			return selfTelemetry(r.cfg, s, noteEmbedded)()
		}
		return nil
	}
}

// passGate takes the start instant from the start gate, when the run has
// one (Config.StartGate): the target has answered, and the instant its
// parent sets once every worker is ready is the run's StartAt.
func (r *runState) passGate() error {
	if r.cfg.StartGate == nil {
		return nil
	}
	at, err := r.cfg.StartGate(r.ctx)
	if err != nil {
		return err
	}
	r.cfg.StartAt = at
	return nil
}

// waitForStart waits for the start instant (Config.StartAt), when there
// is one; ctx ends the wait with a *StartWaitError.
func (r *runState) waitForStart() error {
	at := r.cfg.StartAt
	if at.IsZero() {
		return nil
	}
	r.info.StartAt = at
	noteStartWait(r.cfg.Warnings, r.cfg.Mode, at)
	var err error
	r.info.StartWaitNS, err = waitStart(r.ctx, at)
	return err
}

// startSampling starts sampling the harness and, with an embedded
// server, this process, and tells an owner of the target process the
// run's start (Observer.LoadStart).
func (r *runState) startSampling() {
	r.mem = startMemSampler(250 * time.Millisecond)
	if r.srv != nil {
		r.self = sampleSelf(r.start)
		r.selfAt.Store(r.self)
	}
	r.cfg.loadStart(r.start)
}

// stopSelf stops sampling the embedded server's process and returns its
// figures; nil when it was not sampled.
func (r *runState) stopSelf() *result.TargetProcess {
	if r.self == nil {
		return nil
	}
	return TargetProcess(r.self.Stop(), noteEmbedded)
}

// buildSessions makes what the simulated clients share, then the drill
// and what the schedule records itself: its dropped starts, against each
// flow's first step.
func (r *runState) buildSessions() error {
	plan := r.plan
	opt := r.cfg.Client
	opt.Shard = r.cfg.Shard.Index
	// A closed-model client's goroutine is its own loop, which can end in
	// a pause and start again (Execution.loop); an open-model arrival's
	// goroutine runs one session.
	opt.Suspend = plan.Load.Model == scenario.Closed
	// From SuspendWaitsFrom clients in this process (or when the caller
	// asks), a client waiting for a reply or its group's room gives up
	// its goroutine too.
	opt.SuspendWaits = opt.Suspend && (opt.SuspendWaits || r.cfg.Shard.Part(plan.Load.MaxClients) >= simclient.SuspendWaitsFrom)
	sh, err := simclient.NewShared(plan, r.addr, r.col, opt)
	if err != nil {
		return err
	}
	r.sh = sh
	// A collection now, before the first session: what the clients share
	// (a virtual-flow hub's buffers, megabytes) was just allocated on a
	// heap whose goal is still the runtime's 4 MB floor, so the first
	// cycle would otherwise run as the clients start, and a client
	// allocating during it is made to assist the marking: 7-9 ms of its
	// first request's send lag, measured. Collected here, the heap's goal
	// is twice what the run keeps, and its first histograms fit under it.
	runtime.GC()
	r.dr = newDrill(r.cfg, r.start)
	r.engineRec = r.col.NewRecorder()
	r.firstKey = make([]metrics.Key, len(plan.Flows))
	for i, f := range plan.Flows {
		if len(f.Steps) > 0 {
			r.firstKey[i] = sh.StepKey(i, 0)
		} else {
			r.firstKey[i] = r.col.Step(f.Name)
		}
	}
	return nil
}

// sessionOptions are the schedule's Options: the plan, its pace, and the
// sessions it starts and ends.
func (r *runState) sessionOptions() Options {
	cfg, plan := r.cfg, r.plan
	return Options{
		Plan: plan, Shard: cfg.Shard, Sources: r.sources,
		Grace: cfg.Grace, MaxLateness: cfg.MaxLateness, PollInterval: cfg.PollInterval, Abort: cfg.Abort,
		// The schedule's spin would take a core from a server in this
		// process.
		HoldP: r.srv == nil && !cfg.NoSpin,
		New:   r.newSession,
		// A dropped start counts against the flow's first step: the step
		// the schedule wanted run and could not.
		OnDropped:      func(s Start, _ DropReason) { r.engineRec.Dropped(r.firstKey[s.Flow]) },
		OnSessionStart: func(s Start) { r.sh.Recorder(s.ID).SessionStarted() },
		Start:          cfg.StartAt,
		OnLateStart:    r.warnLateStart,
		OnSessionEnd:   r.sessionEnded,
	}
}

// newSession makes the session s, or renews its previous one (s.Prev).
func (r *runState) newSession(s Start) (Session, error) {
	var prev simclient.Session
	if s.Prev != nil {
		prev = s.Prev
	}
	sess, err := simclient.Renew(r.factory, r.sh, prev, s.ID, &r.plan.Flows[s.Flow], s.Source)
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// warnLateStart says on Warnings that this shard came to its start
// instant late, and what became of the arrivals it missed.
func (r *runState) warnLateStart(late time.Duration, missed int64) {
	cfg := r.cfg
	if cfg.Warnings == nil {
		return
	}
	line := fmt.Sprintf("lobbybench: shard %s came up %s after the start instant %s (--start-at) and joins late", cfg.Shard, words.Seconds(late), cfg.StartAt.UTC().Format(time.RFC3339Nano))
	if r.plan.Load.Model != scenario.Closed {
		line += fmt.Sprintf(": the %s due before now are counted as dropped starts (late_start), not shifted", words.Count(missed, "arrival"))
	}
	fmt.Fprintln(cfg.Warnings, line)
}

// sessionEnded records the end of session s (ran: it ran a step), warns
// of the run's first failed start, and tells the drill.
func (r *runState) sessionEnded(s Start, err error, ran bool) {
	rec := r.sh.Recorder(s.ID)
	if !ran && err != nil {
		// The session never ran a step: its failure counts against the
		// flow's first step, as a dropped start does (a client whose
		// first step opens the socket, TCP, records it there itself).
		reason := simclient.ReasonOf(err)
		if reason == "" {
			reason = simclient.ReasonSocket
		}
		rec.Fail(r.firstKey[s.Flow], reason, time.Now())
	}
	if !ran || simclient.IsFailedStart(err) {
		r.firstStart.Do(func() { warnFailedStart(r.cfg.Warnings, err) })
	}
	if simclient.IsRefusal(err) {
		r.firstRefusal.Do(func() { warnRefusal(r.cfg.Warnings, err) })
	}
	rec.SessionFinished()
	if r.dr != nil {
		r.dr.sessionEnded(s, err)
	}
}

// liveSessions are the scheduler's session counts so far, for the live
// view and a worker's live state; nil before the load starts.
func (r *runState) liveSessions() *result.Sessions {
	select {
	case <-r.xready:
		s := r.x.Stats.Snapshot().info().report()
		return &s
	default:
		return nil
	}
}

// startObservers starts what watches the run beside the load, in this
// order: the live view (Observer.LiveReady), the progress, the watchdog and
// the drill's faults.
func (r *runState) startObservers() {
	r.startLive()
	r.startProgress()
	r.startWatchdog()
	if r.dr != nil {
		r.dr.run(r.ctx, r.wdog)
	}
}

// startLive hands the run's live view to its observers, when it has any.
func (r *runState) startLive() {
	if !r.cfg.wantsLive() {
		return
	}
	set := func() metrics.LiveSet {
		s := r.col.LiveSet()
		s.Sessions = r.liveSessions()
		return s
	}
	r.live = &Live{start: r.start, plan: r.plan, target: r.targetName, ctx: r.ctx, set: set, shards: []string{r.cfg.Shard.String()},
		telemetry: selfTelemetry(r.cfg, r.self, noteEmbedded), cpu: r.mem.cpuSoFar}
	r.cfg.liveReady(r.live)
}

// startProgress shows the progress in Config.Mode, when it is on; the
// run's notes then go above the bar or between the lines (not with a
// worker's JSON lines: they stay warnings).
func (r *runState) startProgress() {
	cfg := r.cfg
	if cfg.Mode == ProgressNone || cfg.Progress == nil {
		return
	}
	var above func(string)
	r.stopProgress, above = startProgress(cfg.Mode, cfg.Progress, r.plan.Load.Duration, cfg.LineInterval, r.progressSampler())
	if cfg.Mode != ProgressJSON {
		r.note = above
	}
}

// progressSampler returns the progress's sample: the steps' live sums
// (message types re-record the same requests), the rate over at least a
// second, and for a worker that sends them (Config.WorkerMetrics) the
// live state at most once a second and on the final line.
func (r *runState) progressSampler() func() ProgressSample {
	var lastReq int64
	var rate, cpu float64
	var lag time.Duration
	lastAt, lastCPU, stateAt := r.start, cpuSeconds(), time.Time{}
	return func() ProgressSample {
		live := r.col.Live()
		now := time.Now()
		if dt := now.Sub(lastAt); dt >= time.Second {
			c := cpuSeconds()
			rate, cpu = float64(live.Requests-lastReq)/dt.Seconds(), (c-lastCPU)/dt.Seconds()
			lastReq, lastAt, lastCPU = live.Requests, now, c
			lag = sendLagP99(r.col.LiveKeys())
		}
		s := ProgressSample{Elapsed: now.Sub(r.start), Total: r.plan.Load.Duration, Rate: rate, Errors: live.Failures,
			Dropped: live.Dropped, Violations: live.Violations, Started: live.SessionsStarted, Finished: live.SessionsFinished,
			SendLagP99: lag, CPU: cpu}
		select {
		case <-r.xready:
			s.Active = r.x.Stats.Active.Load()
			s.FailedStarts = r.x.Stats.FailedStarts.Load()
			s.BackingOff = r.x.Stats.BackingOff.Load()
		default:
		}
		// The final line (after the load ended) carries the final state,
		// so the parent's last scrape equals the result.
		if r.cfg.WorkerMetrics && r.cfg.Mode == ProgressJSON && (r.ended.Load() || now.Sub(stateAt) >= time.Second) {
			if st, ok := r.liveState(); ok {
				s.Metrics, stateAt = st, now
			}
		}
		return s
	}
}

// liveState is the cumulative state a worker sends its parent: the
// collector's, with the watchdog's outages and the session counts.
func (r *runState) liveState() (*metrics.LiveState, bool) {
	st, err := r.col.LiveState()
	if err != nil {
		return nil, false
	}
	if w := r.liveWD.Load(); w != nil {
		st.Outages = w.outages()
	}
	st.Sessions = r.liveSessions()
	return st, true
}

// startWatchdog starts the target's watchdog unless it is off
// (Config.Watchdog below 0), and hands it to the live states and view.
func (r *runState) startWatchdog() {
	if r.cfg.Watchdog < 0 {
		return
	}
	r.wd = startWatch(r.ctx, r.cfg, r.proto, r.plan, r.addr, r.col, r.start, r.note)
	if r.wd == nil {
		return
	}
	r.wdog = r.wd.w
	r.liveWD.Store(r.wd)
	if r.live != nil {
		r.live.watchdog.Store(r.wd)
	}
}

// executed is what the load left for the result.
type executed struct {
	x           *Execution
	interrupted bool
	rooms       *result.RoomCheck // the drill's look at the lobby's rooms
	wdRun       result.Run        // the watchdog's outages
	targetProc  *result.TargetProcess
}

// execute runs the load model (Execute), then stops what watched it, in
// this order: the drill (and its look at the rooms, while the watchdog
// still watches), the watchdog, the progress, the clients' shared
// sockets and the embedded server's sampler.
func (r *runState) execute(o Options) (*executed, error) {
	xr, interrupted, err := Execute(r.ctx, o, func(e *Execution) { r.x = e; close(r.xready) })
	out := &executed{x: xr, interrupted: interrupted}
	if r.dr != nil {
		// The faults end with the load (a stop still sends its SIGCONT).
		r.dr.stop()
		if err == nil {
			out.rooms = r.drillRooms()
		}
	}
	if r.wd != nil {
		// Stopped with the load: what it saw after is not the run's.
		r.wd.stop(&out.wdRun)
		r.info.Watchdog = r.wd.info()
	}
	r.ended.Store(true)
	r.stopProgress()
	r.sh.Close()
	out.targetProc = r.stopSelf()
	if err != nil {
		r.mem.Stop()
		return nil, err
	}
	return out, nil
}

// drillRooms looks at the lobby's rooms after a drill.
func (r *runState) drillRooms() *result.RoomCheck {
	timeout := r.cfg.WatchdogTimeout
	if timeout <= 0 {
		timeout = watchdogTimeout(r.plan)
	}
	return drillRooms(r.ctx, r.plan, r.addr, timeout, r.start, r.wdog)
}

// fillInfo completes the engine's Info from the load's end: sessions,
// late start, harness and the embedded server's counters.
func (r *runState) fillInfo(out *executed) {
	info := r.info
	info.Interrupted = out.interrupted
	st := out.x.Stats.Snapshot()
	info.Sessions = st.info()
	info.LateStartNS = st.LateStart
	if !r.cfg.StartAt.IsZero() && r.plan.Load.Model != scenario.Closed {
		info.PlayedPerSecond = out.x.PlayedPerSecond()
	}
	info.Harness = r.mem.Stop()
	info.Harness.StrayDatagrams = r.sh.StrayDatagrams()
	info.Harness.LatencyEnd = r.sh.LatencyEnd()
	info.Harness.Flows = string(r.sh.FlowsMode())
	if h := r.sh.Flows; h != nil {
		info.Harness.FlowsDropped, info.Harness.FlowsUnrouted = h.Dropped(), h.Unrouted()
	}
	if r.srv != nil {
		info.Server = r.srv.stats()
	}
}

// assemble makes the result: the collector's run with the target, the
// watchdog's outages, the drill's verdict, the target process's figures
// and the engine's Info, thresholds evaluated.
func (r *runState) assemble(out *executed) (*Result, error) {
	r.fillInfo(out)
	run, err := r.col.Snapshot()
	if err != nil {
		return nil, err
	}
	// The collector's length ends at the last completion. The run lasted
	// at least as long as its load: a target that stopped answering early
	// must not shorten the run, and so raise its rate.
	if d := out.x.LoadEnd().Sub(r.start); d > run.DurationNS {
		run.DurationNS = d
	}
	run.Scenario = r.plan.Name
	run.Target = r.targetName
	run.Outages = out.wdRun.Outages
	if s := out.wdRun.SilentAtEnd; s != nil {
		// Said of the run as long as it lasted (the watchdog stops after
		// the load's wind-down), once it lasted result.SilentAfter.
		if s.EndNS = min(s.EndNS, run.DurationNS); s.EndNS-s.SinceNS >= result.SilentAfter {
			run.SilentAtEnd = s
		}
	}
	run.Totals.FailuresWhileDown = out.wdRun.Totals.FailuresWhileDown
	if r.dr != nil {
		end := run.DurationNS
		if end <= 0 {
			end = time.Since(r.start)
		}
		run.Drill = r.dr.result(run, end)
		run.Drill.Rooms = out.rooms
	}
	run.NoteTargetDown()
	// The embedded server's figures; an owner of the target process
	// (--target-cmd) fills run.TargetProcess with its own after Run
	// returns.
	run.TargetProcess = out.targetProc
	if run.DurationNS <= 0 {
		run.DurationNS = time.Since(r.start)
	}
	fillRun(run, r.info)
	markWaits(run, r.plan)
	res := &Result{Run: run, Engine: r.info}
	res.ThresholdsOK = result.EvaluateThresholds(run, r.plan.Conditions())
	return res, nil
}
