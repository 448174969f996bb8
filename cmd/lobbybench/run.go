package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/dashboard"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

const runUsage = `Usage: lobbybench run [flags] SCENARIO.yaml
       lobbybench run [flags] --protocol P --flow STEPS --duration D (--rate N/s | --clients N)

Drives simulated clients through the scenario's flows against its target
(or an embedded reference server on free loopback ports when it names
none), checks every packet against the protocol rules, and prints a summary
table. A broken scenario is listed as file:line: message, one problem per
line, and nothing is sent. Without a file, --protocol and --flow (steps,
comma-separated: list_rooms or create_room,join=created,leave) make a
one-flow scenario, checked as a file is; --rate N/s runs the open model,
--clients N the closed one.

A watchdog probes the target on its own socket during the load (every
--watchdog, 250ms by default; 0 turns it off), with the protocol's own
check (tcp-lobby: LIST_ROOMS_REQ must draw a frame). Its probes are not
counted as load. When the target stops answering (refused: nothing
listens; silent: two probes in a row unanswered) a TARGET DOWN line is
printed at once, the failures while it was down are counted apart, and
every output leads with TARGET DOWN.

With --target-cmd 'COMMAND ARGS…' (or the scenario's target_cmd)
lobbybench owns the server: it starts the command (through /bin/sh, in a
process group of its own), waits up to --target-ready-timeout (30s) for
the protocol's check to answer at --target (or the scenario's target),
runs, and stops it at the end and after an early failure (SIGTERM,
SIGKILL 5s later; a third Ctrl-C kills it at once). If it dies during the
run, TARGET DOWN says how ("exited: killed by SIGABRT") with its last 10
output lines. Every output then says what the load cost it: CPU per 1,000
requests, share of a core, peak RSS, threads and open files, sampled
once a second (the embedded server's figures include the load
generator's own work). A start that fails exits 2 when the command is
not found, 3 when it exits before it answers, never answers, or its port
is already in use (something answered there before it started).

Exit codes: 0 all good; 1 protocol violations; 2 invalid usage, flags or
scenario; 3 target unreachable; 4 a threshold breached (the default error
gate, errors.rate < 1%, included, unless the scenario gives its own error
threshold or --no-default-gate), or a step was tried and never succeeded (every request failed or was cut; a step never
reached does not count); 5 interrupted
(Ctrl-C); 6 the load was not all generated (a client could not open its
socket, e.g. too many open files, a --workers worker died, or the closed
model's live clients stayed under 90% of what its stages asked for), or
none of it (NO LOAD: no request was sent); 7 the
target went down during the run (the watchdog's probes refused or
unanswered); 8 inconclusive: every breached threshold is a latency the
harness's own send lag explains (harness-bound; a late harness is not a
slow server). When several apply, the first in the
order 7, 5, 1, 6, 4, 8 wins. The JSON, JUnit, Markdown and HTML files are
written in every case where the run started (Ctrl-C included), each led by
the run's verdict: TARGET DOWN, INTERRUPTED, NO LOAD, INCOMPLETE, FAIL,
INCONCLUSIVE or PASS.`

// seedFlag is an optional int64 flag: nil until set.
type seedFlag struct{ v *int64 }

func (s *seedFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strconv.FormatInt(*s.v, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", v)
	}
	s.v = &n
	return nil
}

// addLoadFlags declares the flags that reshape a scenario's load
// (--duration, --rate, --clients) and its protocol's own (udp-lobby's
// --instance-ports) on o.
func addLoadFlags(fs *flag.FlagSet, o *scenario.Overrides) {
	fs.DurationVar(&o.Duration, "duration", 0, "run length (cuts the stages or holds the last target longer)")
	fs.Var(&o.Rate, "rate", "open model: scale the arrival rate, `2x` or an absolute peak like 800/s")
	fs.IntVar(&o.Clients, "clients", 0, "closed model: scale the stages so the peak is `N` clients (open model: max clients)")
	o.Protocol = scenario.AddProtocolFlags(fs)
}

// checkLoadFlags refuses a zero given explicitly to addLoadFlags' flags: a
// zero value means "not given" to Plan.Apply, so given it is a mistake,
// not a request for the scenario's value.
func checkLoadFlags(given map[string]bool, o scenario.Overrides) error {
	if given["duration"] && o.Duration == 0 {
		return errors.New("--duration must be above 0")
	}
	if given["clients"] && o.Clients == 0 {
		return errors.New("--clients 0 is outside 1-1000000")
	}
	return nil
}

// loadPlan loads the scenario at path and applies o; a broken scenario is
// printed as file:line: message lines. A nil plan comes with the exit code.
func loadPlan(e *env, cmd, path string, o scenario.Overrides) (*scenario.Plan, int) {
	plan, err := scenario.Load(path)
	if err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) {
			fmt.Fprintln(e.stderr, errs.Error())
		} else {
			fmt.Fprintf(e.stderr, "lobbybench %s: %v\n", cmd, err)
		}
		return nil, exitUsage
	}
	if err := plan.Apply(o); err != nil {
		return nil, usageErr(e, cmd, "%v", err)
	}
	return plan, exitOK
}

// addTargetSeedFlags declares --target, --seed and --no-default-gate,
// which every command that loads a scenario takes over the scenario's
// own, on o and seed (o.Seed is seed.v once the flags are parsed).
func addTargetSeedFlags(fs *flag.FlagSet, o *scenario.Overrides, seed *seedFlag) {
	fs.StringVar(&o.Target, "target", "", "server `host:port` (overrides the scenario's target)")
	fs.Var(seed, "seed", "seed `N` of every random choice (overrides the scenario's)")
	fs.BoolVar(&o.NoDefaultGate, "no-default-gate", false, fmt.Sprintf("judge the run by the scenario's thresholds alone: no default gates %q and %q (as the scenario's default_error_gate: false)", result.DefaultErrorGate.Name, result.DefaultSilentGate.Name))
}

func init() {
	register("run", command{
		summary: "run a YAML scenario of simulated clients against a lobby",
		usage:   runUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			r := addRunFlags(fs)
			return func(ctx context.Context, e *env, args []string) int {
				r.parsed()
				return runRun(ctx, e, r, args)
			}
		},
	})
}

// runRun is the run command once its flags are parsed into r.
func runRun(ctx context.Context, e *env, r *runOptions, args []string) (code int) {
	if err := r.check(args); err != nil {
		return usageErr(e, "run", "%v", err)
	}
	plan, code := r.plan(e, args)
	if plan == nil {
		return code
	}
	// The output files are written once the run has a result; a bad path
	// is a usage error, found before anything is sent.
	if err := r.outs.check(e); err != nil {
		return usageErr(e, "run", "%v", err)
	}
	if !r.worker { // a worker's parent says it for every worker
		defer r.outs.settle(e, "run", &code, func(ns *result.NotStarted) result.Doc { return notStartedRun(plan, ns) })
	}
	e.setStopNote(func() string {
		return fmt.Sprintf("no new session starts; requests in flight get up to %v (--grace) to finish, then the results are written", r.grace)
	})
	notes := &barNotes{stderr: e.stderr}
	e.setNotes(notes)
	cfg, err := r.config(ctx, plan, time.Now())
	if err != nil {
		return usageErr(e, "run", "%v", err)
	}
	cfg.Abort, cfg.Progress, cfg.Mode, cfg.Warnings, cfg.ConnBudget = e.abort, notes, progressMode(e, r.quiet), e.stderr, observe.NewBudget()
	if r.linger > 0 {
		// The metrics server outlives the run by the linger.
		until, end := context.WithCancel(context.WithoutCancel(ctx))
		defer end()
		cfg.MetricsUntil = until
	}
	dash, code := r.openDashboard(e, &cfg)
	if code != exitOK {
		return code
	}
	if dash != nil {
		defer dash.Close()
	}
	if r.precise && !r.worker {
		fmt.Fprintf(e.stderr, "lobbybench run: %s\n", simclient.PreciseNote(plan.Protocol, plan.Target == ""))
	}
	owner, code := r.startOwner(ctx, e, &cfg)
	if code != exitOK {
		return code
	}
	if owner != nil {
		// Stopped on every way out: the end, an error; a third Ctrl-C
		// kills it.
		defer owner.stop()
	}
	res, re, done, err := r.execute(ctx, e, cfg, args)
	defer done()
	if err != nil {
		return runFailed(ctx, re, err, owner)
	}
	return r.finish(ctx, re, res, owner, dash)
}

// plan is the scenario the flags make (--protocol, --flow) or the file
// args names, shaped by the flags; a nil plan comes with the exit code, its
// problems printed.
func (r *runOptions) plan(e *env, args []string) (*scenario.Plan, int) {
	var plan *scenario.Plan
	if r.fromFlags() {
		var err error
		if plan, err = scenario.FromFlags(r.protocol, r.flow, r.o); err != nil {
			return nil, usageErrLines(e, "run", err)
		}
		if err := plan.Apply(r.o); err != nil {
			return nil, usageErr(e, "run", "%v", err)
		}
	} else {
		var bad int
		if plan, bad = loadPlan(e, "run", args[0], r.o); plan == nil {
			return nil, bad
		}
	}
	plan, err := r.shapePlan(plan)
	if err != nil {
		return nil, usageErr(e, "run", "%v", err)
	}
	if code := r.resolveFlows(e, plan); code != exitOK {
		return nil, code
	}
	return plan, exitOK
}

// openDashboard binds --dashboard-addr's live page, before anything is
// sent (a bad or taken address is a usage error), and makes cfg feed it;
// nil when the flag is not given.
func (r *runOptions) openDashboard(e *env, cfg *engine.Config) (*dashboard.Server, int) {
	if r.dashAddr == "" {
		return nil, exitOK
	}
	dash, err := dashboard.Listen(r.dashAddr, dashboard.Options{Conns: cfg.ConnBudget, Planned: cfg.Plan.Load.Duration + r.grace})
	if err != nil {
		return nil, usageErr(e, "run", "--dashboard-addr: %v", err)
	}
	cfg.Observers = append(cfg.Observers, liveObserver{dash: dash})
	if cfg.Mode != engine.ProgressNone {
		fmt.Fprintf(e.stderr, "lobbybench run: live page at http://%s/\n", dash.Addr())
	}
	return dash, exitOK
}

// liveObserver is the engine.Observer that feeds the live page the run's
// live view.
type liveObserver struct {
	engine.Observes
	dash *dashboard.Server
}

func (l liveObserver) LiveReady(v *engine.Live) { l.dash.SetSource(v.Run) }

// startOwner starts the server --target-cmd (or the scenario's target_cmd)
// names and makes cfg watch it (ownTarget); nil when there is none, or in
// a --workers worker, whose parent starts it.
func (r *runOptions) startOwner(ctx context.Context, e *env, cfg *engine.Config) (*ownedRun, int) {
	if r.worker {
		return nil, exitOK
	}
	owner, code := ownTarget(ctx, e, "run", r.own, r.own.command(cfg.Plan.TargetCmd), cfg.Plan, cfg)
	if owner != nil {
		// A recovery drill runs where the server is owned: the engine
		// applies the scenario's faults to it.
		cfg.Owned, cfg.Faults = owner.p, cfg.Plan.Faults
	}
	return owner, code
}

// execute runs cfg: as --workers processes, as a --workers worker, or
// here. A worker's env (the returned one) prints no table; done cleans up
// after the workers.
func (r *runOptions) execute(ctx context.Context, e *env, cfg engine.Config, args []string) (*engine.Result, *env, func(), error) {
	switch {
	case r.workers != "":
		res, done, err := runWorkers(ctx, r.fs, r.o.Protocol.Names(), cfg, r.workers, r.outs.path("json"), args)
		return res, e, done, err
	case r.worker:
		// stdout carries the progress to the parent; the parent prints
		// the merged table.
		cfg.Mode, cfg.Progress, cfg.LineInterval = engine.ProgressJSON, e.stdout, engine.WorkerLineInterval
		if r.startGate {
			cfg.StartGate = func(ctx context.Context) (time.Time, error) { return engine.AwaitStart(ctx, e.stdout, e.stdin) }
		}
		res, err := engine.Run(ctx, cfg)
		we := *e
		we.stdout = io.Discard
		if r.capStep != "" {
			// A capacity step's share: the parent judges the step (send
			// lag, failed starts) from the result; the summary's warnings
			// would only repeat it once per worker and step.
			we.stderr = io.Discard
		}
		return res, &we, func() {}, err
	}
	res, err := engine.Run(ctx, cfg)
	return res, e, func() {}, err
}

// runFailed is the exit code of a run that has no result, err saying
// why; an unreachable target's or an interruption's why is kept for the
// result files (env.notStarted, outputs.settle).
func runFailed(ctx context.Context, e *env, err error, owner *ownedRun) int {
	var usage usageError
	if errors.As(err, &usage) {
		return usageErr(e, "run", "%v", err)
	}
	var wait *engine.StartWaitError
	if errors.As(err, &wait) {
		fmt.Fprintf(e.stderr, "lobbybench run: interrupted: %v: nothing was measured\n", err)
		e.notStarted = err.Error()
		return exitInterrupted
	}
	if ctx.Err() != nil {
		fmt.Fprintf(e.stderr, "lobbybench run: interrupted before the run started: %v\n", err)
		e.notStarted = "stopped before the run started (" + err.Error() + ")"
		return exitInterrupted
	}
	var unreach *engine.UnreachableError
	if errors.As(err, &unreach) {
		fmt.Fprintf(e.stderr, "lobbybench run: %v\n", err)
		e.notStarted = err.Error()
		if owner != nil {
			if early := owner.endedEarly(); early != "" {
				fmt.Fprintf(e.stderr, "lobbybench run: %s\n", early)
				e.notStarted += "; " + early
			}
		}
		return exitUnreachable
	}
	fmt.Fprintf(e.stderr, "lobbybench run: %v\n", err)
	return exitUsage
}

// notStartedRun is the run document of a run that measured nothing,
// why saying why: what every result file asked for then holds, so that
// none from an earlier run is left in its place.
func notStartedRun(plan *scenario.Plan, why *result.NotStarted) *result.Run {
	doc := result.NewRun()
	doc.NotStarted, doc.Scenario, doc.Target, doc.StartedAt = why, plan.Name, plan.Target, time.Now()
	if plan.Target == "" {
		doc.Target = "embedded reference server"
	}
	return doc
}

// finish reports res (reportRun), hands the live page its final report
// and serves on for --serve-linger.
func (r *runOptions) finish(ctx context.Context, e *env, res *engine.Result, owner *ownedRun, dash *dashboard.Server) int {
	if owner != nil {
		// Stopped before the reports, which include how it ended and
		// what it cost.
		owner.finish(res)
	}
	code := reportRun(e, res, r.outs)
	if dash != nil {
		if err := dash.Finish(res.Run); err != nil {
			fmt.Fprintf(e.stderr, "lobbybench run: --dashboard-addr: the final report: %v\n", err)
		}
	}
	lingerServe(ctx, e, res, dash, r.linger)
	return code
}

// usageErrLines is usageErr for an error of several lines, one problem
// a line, each led by the command's name.
func usageErrLines(e *env, cmd string, err error) int {
	for _, line := range strings.Split(err.Error(), "\n") {
		usageErr(e, cmd, "%s", line)
	}
	return exitUsage
}

// lingerServe waits out --serve-linger, the results written, while the
// metrics server serves the final figures and the live page the final
// report; Ctrl-C ends it.
func lingerServe(ctx context.Context, e *env, res *engine.Result, dash *dashboard.Server, d time.Duration) {
	if d <= 0 || res.Engine.MetricsAddr == "" && dash == nil || ctx.Err() != nil {
		return
	}
	var what []string
	if res.Engine.MetricsAddr != "" {
		what = append(what, fmt.Sprintf("the final metrics at http://%s/metrics", res.Engine.MetricsAddr))
	}
	if dash != nil {
		what = append(what, fmt.Sprintf("the final report at http://%s/", dash.Addr()))
	}
	e.setStopNote(func() string { return "the results are written; serving stops" })
	fmt.Fprintf(e.stderr, "lobbybench run: serving %s for %v (--serve-linger; Ctrl-C ends it)\n", strings.Join(what, " and "), d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// reportRun prints the summary, writes the requested files (outs) and
// picks the exit code.
func reportRun(e *env, res *engine.Result, outs *outputs) int {
	// The engine's lines and the run's warnings (the harness's send lag)
	// go before the thresholds: the verdict is the summary's last line,
	// where the eye (and the tail of a CI log) ends up.
	if err := reports.WriteRunTable(e.stdout, res.Run, func(w io.Writer) { writeEngineSummary(w, res) }); err != nil {
		fmt.Fprintf(e.stderr, "lobbybench run: writing the table: %v\n", err)
	}
	wrote := outs.write(e, "run", res, reports.Options{})
	if n := res.Engine.Sessions.FailedStarts; n > 0 {
		reports.WriteWrapped(e.stderr, fmt.Sprintf("lobbybench run: %s could not open %s socket (failed starts; reasons in the failures table): the server got less load than the scenario asked for", words.Count(n, "session"), words.Agree(n, "its", "their")), 2)
	}
	ex := runExit(res.Run, res.Engine.Interrupted, res.ThresholdsOK)
	switch ex {
	case exitTargetDown:
		fmt.Fprintf(e.stderr, "lobbybench run: %s\n", res.Run.Headline().Text)
	case exitInterrupted:
		fmt.Fprintln(e.stderr, "lobbybench run: interrupted; results cover the run so far")
	}
	return withOutputs(ex, wrote)
}

// runExit is the exit code of a run's result, merged or not, in the order
// every format leads with: the target stopped answering (every figure
// after is of a load against nothing), interrupted, protocol violations,
// incomplete load or none at all (NO LOAD: none of it generated), then a
// breached threshold (the default error gate included) or a step tried
// and never succeeded (no figure a threshold could judge: as much a
// failed run).
func runExit(r *result.Run, interrupted, thresholdsOK bool) int {
	switch {
	case len(r.DownOutages()) > 0:
		return exitTargetDown
	case interrupted:
		return exitInterrupted
	case r.Totals.Violations > 0:
		return exitFailed
	case len(r.MissingLoad()) > 0 || r.NoLoad() != "":
		return exitIncomplete
	case !thresholdsOK || len(r.StepsNeverSucceeded()) > 0:
		return thresholdExit(r)
	}
	return exitOK
}

// thresholdExit is the exit code of a run with a breached threshold or a
// step that never succeeded: 8 when its headline is INCONCLUSIVE (every
// breach harness-bound: the harness's lateness explains it), else 4.
func thresholdExit(r *result.Run) int {
	if r.Headline().Status == result.StatusInconclusive {
		return exitInconclusive
	}
	return exitThreshold
}

// sourcesOf says where the run's clients sent from: their source
// addresses, or virtual flows, each client an address:port of its own
// range (the sockets' source addresses are then not used).
func sourcesOf(in *engine.Info) string {
	if in.Harness.Flows == string(scenario.FlowsVirtual) {
		return "virtual flows (an address:port each)"
	}
	return words.Count(max(in.Sources, 1), "source address")
}

// writeEngineSummary prints what the table does not: shard, sessions,
// harness resources and the embedded server's counters, folded to
// reports.TermWidth columns as the table is, then a blank line.
func writeEngineSummary(w io.Writer, res *engine.Result) {
	in := res.Engine
	defer fmt.Fprintln(w)
	if in.Workers > 0 {
		reports.WriteWrapped(w, fmt.Sprintf("Run: %s, %s model, %s merged, seed %d, %s", in.Protocol, in.Model, words.Count(in.Workers, "worker process"), in.Seed, sourcesOf(in)), 2)
	} else {
		reports.WriteWrapped(w, fmt.Sprintf("Run: %s, %s model, shard %s, seed %d, %s", in.Protocol, in.Model, in.Shard, in.Seed, sourcesOf(in)), 2)
	}
	for _, why := range res.Run.Incomplete {
		reports.WriteWrapped(w, "INCOMPLETE: "+why, 2)
	}
	if s := res.Run.Sessions; s != nil {
		reports.WriteWrapped(w, fmt.Sprintf("Sessions: %s", s), 2)
	}
	h := in.Harness
	// The two memory figures measure different things, and the heap one
	// can be the larger: say which is which. One figure a line.
	last := fmt.Sprintf("  %s peak, %.1f CPU-s on %s", words.Count(h.PeakGoroutines, "goroutine"), h.CPUSeconds, words.Count(h.GOMAXPROCS, "proc"))
	if in.Embedded {
		last += " (includes the embedded server)"
	}
	first := fmt.Sprintf("Harness: peak RSS %s (resident, from the OS)", mib(h.PeakRSSBytes))
	if in.Workers > 0 {
		fmt.Fprintln(w, "Harness (summed over the workers and this process):")
		first = "  " + strings.TrimPrefix(first, "Harness: ")
	}
	lines := []string{
		first,
		fmt.Sprintf("  peak Go heap %s (objects allocated, including fresh pages never written and so not resident)", mib(h.PeakHeapBytes)),
		last,
	}
	if h.StrayDatagrams > 0 {
		lines = append(lines, fmt.Sprintf("  %s from ports the target never used, not replies to any request (other programs' traffic: not counted against the target)", words.Count(h.StrayDatagrams, "stray datagram")))
	}
	if h.FlowsDropped > 0 {
		lines = append(lines, fmt.Sprintf("  %s for virtual flows whose clients had %d unread already: lost in the harness, not by the target (flows_dropped)",
			words.Count(h.FlowsDropped, "datagram"), vflow.MaxQueued))
	}
	if h.FlowsUnrouted > 0 {
		lines = append(lines, fmt.Sprintf("  %s for virtual flows no client held: replies after their clients closed (flows_unrouted)", words.Count(h.FlowsUnrouted, "datagram")))
	}
	if line := latencyEndLine(h.LatencyEnd); line != "" {
		lines = append(lines, line)
	}
	for _, line := range lines {
		reports.WriteWrapped(w, line, 4)
	}
	if in.Server != nil {
		// Only the counters that moved: the zeros are in the JSON.
		fmt.Fprintln(w, "Embedded server:")
		for _, line := range counterLines(in.Server.Counters()) {
			reports.WriteWrapped(w, "  "+line, 4)
		}
	}
}

// counterLines groups counters ("udp-lobby.replies.SERVER_HELLO 2550")
// by the part of their name before the last dot, in their order, one
// line a group: "udp-lobby.replies: SERVER_HELLO=2550 …".
func counterLines(counters []string) []string {
	var groups []string
	items := map[string][]string{}
	for _, c := range counters {
		name, value, _ := strings.Cut(c, " ")
		group, key := "", name
		if i := strings.LastIndex(name, "."); i >= 0 {
			group, key = name[:i], name[i+1:]
		}
		if _, ok := items[group]; !ok {
			groups = append(groups, group)
		}
		items[group] = append(items[group], key+"="+value)
	}
	var out []string
	for _, g := range groups {
		line := strings.Join(items[g], " ")
		if g != "" {
			line = g + ": " + line
		}
		out = append(out, line)
	}
	return out
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func peakOf(l scenario.LoadShape) float64 {
	p := l.Start
	for _, s := range l.Stages {
		p = max(p, s.Target)
	}
	return p
}

// progressMode picks a live bar on a terminal, periodic lines otherwise
// (CI, pipes), nothing with --quiet.
func progressMode(e *env, quiet bool) engine.ProgressMode {
	if quiet {
		return engine.ProgressNone
	}
	if f, ok := e.stderr.(*os.File); ok && e.getenv("CI") == "" && e.getenv("TERM") != "dumb" {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return engine.ProgressBar
		}
	}
	return engine.ProgressLines
}

// latencyEndLine says in the Harness lines where the latencies end
// (result.Harness.LatencyEnd; "" when no client said).
func latencyEndLine(end string) string {
	switch end {
	case result.LatencyEndKernel:
		return "  latencies end at each reply's kernel receive stamp (latency_end: " + end + ")"
	case result.LatencyEndUser:
		return "  latencies end when the client saw each reply, after its wake-up: no kernel receive stamps (latency_end: " + end + ")"
	case result.LatencyEndMixed:
		return "  latencies end at the kernel's receive stamp for some replies, when the client saw them for others (latency_end: " + end + ")"
	}
	return ""
}
