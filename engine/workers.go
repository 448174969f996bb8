package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// MaxWorkers caps `run --workers`.
const MaxWorkers = 256

// WorkerLineInterval is how often a worker sends its progress to the
// parent (ProgressJSON).
const WorkerLineInterval = 250 * time.Millisecond

// maxProgressLine bounds one progress line from a worker (with its
// encoded metrics: a few KB per step and message type).
const maxProgressLine = 64 << 20

// stderrTail is how many of a worker's last stderr lines a death report
// quotes.
const stderrTail = 10

// AutoWorkers is the number of worker processes `run --workers auto`
// starts for plan: enough that each holds its share of max_clients under
// the open-files limit (0: unknown, one worker), at least one; on virtual
// flows, whose clients hold no descriptor each, enough that each share
// fits one process's flows (vflow.DefaultHubFlows).
func AutoWorkers(plan *scenario.Plan, limit uint64) int {
	per := ClientsPerProcess(limit)
	if plan.FlowsMode == scenario.FlowsVirtual {
		per = vflow.DefaultHubFlows
	}
	return min(max((plan.Load.MaxClients+per-1)/per, 1), MaxWorkers)
}

// Workers describes a run split over local worker processes: the same
// binary run once per shard (`run --shard i/N`), its progress combined and
// its results merged (MergeShards) into one.
type Workers struct {
	// Config is the run as one process would make it: Plan, progress,
	// warnings, Embedded, EmbeddedAt (a server the caller started, which
	// the workers then target instead of one RunWorkers starts). Shard,
	// Factory and MetricsAddr are not used.
	Config
	// N is the number of workers (shards), 1..MaxWorkers.
	N int
	// Command returns the command that runs shard s: the same binary's
	// `run` in worker mode (progress as ProgressJSON lines on stdout) with
	// the user's overrides, writing its JSON result to jsonPath, and
	// targeting embeddedAt (Config.EmbeddedAt) when it is valid.
	Command func(s Shard, jsonPath string, embeddedAt netip.AddrPort) *exec.Cmd
	// ShardPath is where shard s's JSON result is written (and kept).
	ShardPath func(s Shard) string
	// Gate: the workers' command has no start instant; each says when it
	// is ready and reads the instant from its standard input
	// (Config.StartGate, AwaitStart), which RunWorkers sets once all are
	// ready (gate.go) and which StartAt must then not be.
	Gate bool
}

// worker is one running shard process.
type worker struct {
	shard Shard
	cmd   *exec.Cmd
	path  string
	index int
	live  *metrics.Merged // nil: no live metrics
	stdin io.WriteCloser  // the start gate's (Workers.Gate), else nil
	// settled is signalled when the worker says it is ready or ends
	// (openGate).
	settled chan<- struct{}

	mu    sync.Mutex
	ready bool // it said it is ready for its start instant (Workers.Gate)
	last  ProgressSample
	tail  []string // last stderr lines
	err   error    // Start or Wait error
	done  bool
	lines sync.WaitGroup // stdout and stderr readers
}

func (w *worker) addTail(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail = append(w.tail, line)
	if len(w.tail) > stderrTail {
		w.tail = w.tail[len(w.tail)-stderrTail:]
	}
}

// RunWorkers runs w.Plan as w.N worker processes and returns their merged
// result. With no target in the plan the parent starts the embedded
// server (or takes w.EmbeddedAt's) and the workers target it. Progress is one combined display on
// w.Progress; each worker's stderr lines are passed on to w.Warnings
// prefixed with its shard. When ctx is cancelled every worker is
// interrupted (SIGINT) and the result merges what they wrote. A worker
// that exits abnormally or writes no result is reported in the result's
// Run.Incomplete with its stderr tail (every report then leads with
// INCOMPLETE); the merge then covers the others.
// It fails only when no worker left a result.
func RunWorkers(ctx context.Context, w Workers) (*Result, error) {
	if w.Plan == nil {
		return nil, errors.New("engine: Workers.Plan is nil")
	}
	if w.N < 1 || w.N > MaxWorkers {
		return nil, fmt.Errorf("engine: %d workers is outside 1-%d", w.N, MaxWorkers)
	}
	if w.Gate && !w.StartAt.IsZero() {
		return nil, errors.New("engine: Workers.Gate sets the start instant: StartAt must be zero")
	}
	w.Warnings = serialWarnings(w.Warnings) // every worker's stderr pump writes to it
	plan := w.Plan
	r := &workersRun{ctx: ctx, w: w, embeddedAt: w.EmbeddedAt,
		info: &Info{Shard: "0/1", Workers: w.N, Protocol: string(plan.Protocol), Model: string(plan.Load.Model), Seed: plan.Seed, Precise: w.Client.Precise, NoSpin: w.NoSpin, Pacing: precise.Pacing}}
	// A server of the caller's (capacity keeps one through a step's
	// warm-up and judged runs) is the caller's to sample and report.
	if !r.embeddedAt.IsValid() && plan.Target == "" {
		srv, err := r.startEmbedded()
		if err != nil {
			return nil, err
		}
		defer srv.close()
		defer func() { r.info.Server = srv.stats() }()
	}
	if err := r.reachTarget(); err != nil {
		return nil, err // as one process: nothing else is sent, no worker started
	}
	r.startSampling()
	stopMetrics, err := r.startObservers()
	if err != nil {
		return nil, err
	}
	defer stopMetrics()
	allDone := r.startWorkers()
	if w.Gate {
		r.openGate(allDone)
	}
	r.showLive()
	r.await(allDone)
	harness, targetProc := r.stopSampling()
	return r.merge(harness, targetProc)
}

// workersRun is one RunWorkers as it goes through its phases, as runState
// is one Run.
type workersRun struct {
	ctx        context.Context
	w          Workers // Warnings serialised
	info       *Info
	embeddedAt netip.AddrPort // the server the workers target, or invalid
	mem        *memSampler
	self       *owned.SelfSampler // the embedded server's process, or nil
	// liveStart is the zero of the workers' offsets and of the elapsed
	// time of the progress and the live metrics: their start instant.
	liveStart time.Time
	live      *metrics.Merged // the workers' live states, or nil
	workers   []*worker
	settled   chan struct{} // a worker said it is ready or ended (openGate)
	telemetry func() *result.TargetProcess
}

// reachTarget checks a target of the plan's (not the embedded server)
// answers before any worker starts, as Run does: an unreachable target
// is an *UnreachableError here, said once, not each worker's death.
func (r *workersRun) reachTarget() error {
	plan := r.w.Plan
	if r.embeddedAt.IsValid() || plan.Target == "" {
		return nil
	}
	addr, err := target.Resolve(r.ctx, plan.Target)
	if err != nil {
		return &UnreachableError{Target: plan.Target, Err: err}
	}
	return Reach(r.ctx, plan.Protocol, plan.Options, addr, r.w.ReachTimeout)
}

// startEmbedded starts the embedded server the workers target. The
// parent holds the server's sockets (one per client for the TCP lobby),
// not the clients': its open files are the server's, reserved from the
// observers' budget and warned of when over the limit.
func (r *workersRun) startEmbedded() (*embedded, error) {
	w, plan, info := r.w, r.w.Plan, r.info
	c, err := embeddedConfig(plan.Protocol, plan.Embedded)
	if err != nil {
		return nil, err
	}
	if w.Embedded != nil {
		c = *w.Embedded
	}
	srv, err := startEmbedded(plan, &c)
	if err != nil {
		return nil, err
	}
	r.embeddedAt = srv.addr
	info.Embedded = true
	info.Files = Files{Server: ServerFiles(c, plan.Load.MaxClients), Margin: FilesMargin, Limit: OpenFilesLimit()}
	if w.ConnBudget != nil {
		w.ConnBudget.Reserve(info.Files.Limit, info.Files.Needed())
	}
	if !info.Files.Fits() && w.Warnings != nil {
		fmt.Fprintf(w.Warnings, "lobbybench: warning: the embedded server needs about %d open files against an open-files limit (RLIMIT_NOFILE) of %d: run it as a separate process (lobbybench serve) and give --target\n",
			info.Files.Needed(), info.Files.Limit)
	}
	return srv, nil
}

// startSampling starts sampling the parent's harness and, with an
// embedded server, this process (the parent holds the server and not the
// load: its figures are the server's); tells an owner the start
// (Observer.LoadStart), and says when the workers wait for their start
// instant.
func (r *workersRun) startSampling() {
	w := r.w
	r.mem = startMemSampler(250 * time.Millisecond)
	start := time.Now()
	if r.info.Embedded {
		r.self = sampleSelf(start)
	}
	w.loadStart(start)
	r.liveStart = start
	if !w.StartAt.IsZero() {
		r.liveStart = w.StartAt
	}
	noteStartWait(w.Warnings, w.Mode, w.StartAt)
}

// startObservers makes the workers and the merge of their states, and
// serves it (the metrics server) before they start; it returns what stops
// the server. On error it stops the sampling.
func (r *workersRun) startObservers() (stopMetrics func(), err error) {
	w := r.w
	if w.MetricsAddr != "" || w.wantsLive() {
		r.live = metrics.NewMerged(r.liveStart, w.N)
	}
	r.settled = make(chan struct{}, 1)
	r.workers = newWorkers(w, r.live, r.settled)
	r.telemetry = selfTelemetry(w.Config, r.self, noteEmbeddedWorkers)
	stopMetrics, err = serveWorkersMetrics(r.ctx, w, r.live, r.workers, r.telemetry, r.info)
	if err != nil {
		r.mem.Stop()
		if r.self != nil {
			r.self.Stop()
		}
		return nil, err
	}
	return stopMetrics, nil
}

// showLive hands the live view (Observer.LiveReady) to the observers as
// the load starts: its zero is the workers' start instant, which the
// start gate sets only once they are ready.
func (r *workersRun) showLive() {
	w := r.w
	if !w.wantsLive() {
		return
	}
	target := w.Plan.Target
	if target == "" {
		target = "embedded " + r.embeddedAt.String()
	}
	w.liveReady(workersLive(r.ctx, w, target, r.liveStart, r.live, r.workers, r.telemetry))
}

// startWorkers starts the worker processes; the channel is closed when
// every one that started has exited. One that does not start is done,
// with its error.
func (r *workersRun) startWorkers() <-chan struct{} {
	var wg sync.WaitGroup
	for _, wk := range r.workers {
		s := wk.shard
		os.Remove(wk.path) // a stale result must not pass for this run's
		wk.cmd = r.w.Command(s, wk.path, r.embeddedAt)
		if err := wk.start(r.w.Warnings, r.w.Gate); err != nil {
			wk.err, wk.done = err, true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk.lines.Wait() // Wait closes the pipes: read them to the end first
			err := wk.cmd.Wait()
			wk.mu.Lock()
			wk.err, wk.done = err, true
			wk.mu.Unlock()
			wk.settle()
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	return allDone
}

// await shows the workers' combined progress until all are done; when
// ctx ends first (Ctrl-C) it interrupts every worker, which stops its
// schedule, finishes within its grace and writes its result.
func (r *workersRun) await(allDone <-chan struct{}) {
	w := r.w
	stopProgress, _ := startProgress(w.Mode, w.Progress, w.Plan.Load.Duration, w.LineInterval, r.progressSample)
	select {
	case <-allDone:
	case <-r.ctx.Done():
		for _, wk := range r.workers {
			if wk.cmd.Process != nil {
				_ = wk.cmd.Process.Signal(os.Interrupt)
			}
		}
		<-allDone
	}
	stopProgress()
}

// progressSample is the sum of the workers' last progress samples.
func (r *workersRun) progressSample() ProgressSample {
	sum := ProgressSample{Total: r.w.Plan.Load.Duration}
	for _, wk := range r.workers {
		wk.mu.Lock()
		s := wk.last
		wk.mu.Unlock()
		sum.add(s)
	}
	sum.Elapsed = max(time.Since(r.liveStart), 0)
	return sum
}

// stopSampling stops the samplers: the parent's harness, and the
// embedded server's figures (nil without one).
func (r *workersRun) stopSampling() (Harness, *result.TargetProcess) {
	parentHarness := r.mem.Stop()
	if r.self == nil {
		return parentHarness, nil
	}
	return parentHarness, TargetProcess(r.self.Stop(), noteEmbeddedWorkers)
}

// merge merges the results the workers left (MergeShards), with those
// that left none in Incomplete and the engine's Info from the merge and
// the parent's harness; it fails only when no worker left a result.
func (r *workersRun) merge(parentHarness Harness, targetProc *result.TargetProcess) (*Result, error) {
	w := r.w
	runs, names, incomplete := r.results()
	if len(runs) == 0 {
		if r.ctx.Err() != nil {
			// Each worker's part was said as it ended (results).
			return nil, errors.New("every worker was stopped before its load began")
		}
		if err := r.reachTarget(); err != nil {
			// It went between the parent's check and the workers'.
			return nil, err
		}
		return nil, fmt.Errorf("engine: no worker wrote a result: %s", strings.Join(incomplete, "; "))
	}
	merged, warns, thOK, err := MergeShards(runs, names)
	if err != nil {
		return nil, err
	}
	merged.Incomplete = append(merged.Incomplete, incomplete...)
	// A worker that left no result is in Incomplete, with why: its shard
	// is not also counted missing.
	merged.MissingShards = nil
	if targetProc != nil {
		merged.TargetProcess = targetProc
	}
	for _, m := range warns {
		if w.Warnings != nil {
			fmt.Fprintf(w.Warnings, "lobbybench: warning: %s\n", m)
		}
	}
	r.fillInfo(merged, parentHarness)
	return &Result{Run: merged, Engine: r.info, ThresholdsOK: thOK, WorkerRuns: runs}, nil
}

// results are the workers' results and their files, and why each worker
// that did not finish well did not (said on Warnings as well).
func (r *workersRun) results() (runs []*result.Run, names, incomplete []string) {
	for _, wk := range r.workers {
		run, why := wk.result()
		if why != "" {
			incomplete = append(incomplete, why)
			if r.w.Warnings != nil {
				fmt.Fprintf(r.w.Warnings, "lobbybench: %s\n", why)
			}
		}
		if run != nil {
			runs = append(runs, run)
			names = append(names, wk.path)
		}
	}
	return runs, names, incomplete
}

// fillInfo completes the Info from the merged run: its sessions, the
// harness (the parent's and every shard's), interrupted and sources.
func (r *workersRun) fillInfo(merged *result.Run, parentHarness Harness) {
	info := r.info
	if merged.Sessions != nil {
		s := merged.Sessions
		info.Sessions = SessionInfo{Started: s.Started, Completed: s.Completed, Failed: s.Failed, FailedStarts: s.FailedStarts,
			Aborted: s.Cut, DroppedNoSlot: s.DroppedNoSlot, DroppedLate: s.DroppedLate, DroppedLateStart: s.DroppedLateStart, MaxActive: s.MaxActive,
			ClientsAsked: s.ClientsAsked, ClientsPeak: s.ClientsPeak}
	}
	info.Harness = parentHarness
	for _, sr := range merged.ShardRuns {
		addHarness(&info.Harness, sr.Harness)
		info.Interrupted = info.Interrupted || sr.Interrupted
		info.Sources = max(info.Sources, sr.Sources)
	}
	info.Interrupted = info.Interrupted || r.ctx.Err() != nil
}

// start starts the worker with its stdout (progress) and stderr (passed on
// to warn, prefixed, and kept as a tail) read by goroutines, and with
// gate (Workers.Gate) a pipe to its stdin for its start instant.
func (wk *worker) start(warn io.Writer, gate bool) error {
	out, err := wk.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if gate {
		if wk.stdin, err = wk.cmd.StdinPipe(); err != nil {
			return err
		}
	}
	errp, err := wk.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := wk.cmd.Start(); err != nil {
		return err
	}
	wk.lines.Add(2)
	go func() {
		defer wk.lines.Done()
		sc := bufio.NewScanner(out)
		// A line with the worker's metrics holds its encoded histograms.
		sc.Buffer(make([]byte, 64<<10), maxProgressLine)
		for sc.Scan() {
			var s ProgressSample
			if json.Unmarshal(sc.Bytes(), &s) != nil {
				continue
			}
			if s.Ready {
				wk.mu.Lock()
				wk.ready = true
				wk.mu.Unlock()
				wk.settle()
				continue
			}
			wk.takeMetrics(s.Metrics)
			s.Metrics = nil
			wk.mu.Lock()
			wk.last = s
			wk.mu.Unlock()
		}
	}()
	go func() {
		defer wk.lines.Done()
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			line := sc.Text()
			wk.addTail(line)
			if warn != nil {
				fmt.Fprintf(warn, "worker %s: %s\n", wk.shard, line)
			}
		}
	}()
	return nil
}

// result reads the worker's JSON result; why is set when the worker died
// (a signal, an exit code a finished run does not use) or left no
// readable result.
func (wk *worker) result() (run *result.Run, why string) {
	wk.mu.Lock()
	err, tail := wk.err, strings.Join(wk.tail, "\n  ")
	wk.mu.Unlock()
	if tail != "" {
		tail = "; its stderr ended:\n  " + tail
	}
	// A run that finished writes its result whatever its exit code
	// (violations, thresholds, interrupted, failed starts); one killed by
	// a signal or that failed before or while writing it did not.
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || !ee.Exited()) {
		return nil, fmt.Sprintf("worker %s died (%v): the result is incomplete%s", wk.shard, err, tail)
	}
	f, ferr := os.Open(wk.path)
	if ferr == nil {
		defer f.Close()
		run, ferr = result.ReadRun(f)
	}
	if ferr != nil {
		return nil, fmt.Sprintf("worker %s left no result (%v): the result is incomplete%s", wk.shard, ferr, tail)
	}
	return run, ""
}

// add sums o into s: counters and rates add up, the elapsed time is the
// longest.
func (s *ProgressSample) add(o ProgressSample) {
	s.Elapsed = max(s.Elapsed, o.Elapsed)
	s.Active += o.Active
	s.Started += o.Started
	s.Finished += o.Finished
	s.Rate += o.Rate
	s.Errors += o.Errors
	s.Dropped += o.Dropped
	s.Violations += o.Violations
	s.FailedStarts += o.FailedStarts
	s.BackingOff += o.BackingOff
	// The worst worker's p99 (no exact merge of quantiles); the
	// processes' CPU adds up.
	s.SendLagP99 = max(s.SendLagP99, o.SendLagP99)
	s.CPU += o.CPU
}

// addHarness sums a process's figures into h: the processes ran at once,
// so their peaks and CPU add up (an upper bound of the joint peak);
// GOMAXPROCS is the largest; latencies that end differently are mixed.
func addHarness(h *Harness, o Harness) {
	h.PeakRSSBytes += o.PeakRSSBytes
	h.PeakHeapBytes += o.PeakHeapBytes
	h.PeakGoRuntimeBytes += o.PeakGoRuntimeBytes
	h.PeakGoroutines += o.PeakGoroutines
	h.CPUSeconds += o.CPUSeconds
	h.StrayDatagrams += o.StrayDatagrams
	h.FlowsDropped += o.FlowsDropped
	h.FlowsUnrouted += o.FlowsUnrouted
	h.LatencyEnd = result.MergeLatencyEnd(h.LatencyEnd, o.LatencyEnd)
	if h.Flows == "" {
		h.Flows = o.Flows // the same in every worker (the parent's --flows)
	}
	h.GOMAXPROCS = max(h.GOMAXPROCS, o.GOMAXPROCS)
}
