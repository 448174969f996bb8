package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/capacity"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

const capacityUsage = `Usage: lobbybench capacity [flags] SCENARIO.yaml

Finds the highest load at which the scenario's thresholds (its
service-level objective) still hold, and what breaks first above it.
Each step holds one constant load, the open model's rate (sessions
started a second: the scenario's stages are replaced by a flat rate) or
the closed model's clients: a warm-up run of --warmup, then, against the
same server, the judged run of --step, whose figures are shown and whose
thresholds judge the step, as 'run' judges a run. From --start (the
scenario's peak by default) the load doubles while a step holds, up to
--max, then the search bisects between the last load that held and the
first that broke until their gap is within --precision, or --budget runs
out. One line per step goes to stderr.

A step is PASS (every threshold held), FAIL (a threshold breached, a
protocol violation or a step that never succeeded; what broke first is
named), HARNESS-BOUND (the harness could not offer the load: sessions
that could not open a socket or were dropped late, a worker that left no
result, a send lag p99 over --lag-bound, its own CPU saturated, or
breaches its send lag explains; the search stops and the limit is the
harness's, not the server's: use --workers or more machines), or TARGET
DOWN (the target stopped answering: the search stops, that is the
finding).

--workers N (or auto) plays each step as N local worker processes, each
its share of the step's flat load, merged exactly and judged as one
process's run would be; each worker's send lag and CPU, and the workers'
CPU together, are judged too. With no target they aim at the step's
embedded server.

--loads L1,L2,... plays that fixed ladder of increasing loads, one step
each, instead of searching: every load is played (a FAIL does not end
it), and the sustainable load is the highest that held below the first
that did not.

--shard i/n plays shard i of n of a fixed ladder (--loads, or doubling
from --start to --max) on several machines: each shard its share of
every load, in order, into a document that keeps each step's run.
'lobbybench report merge' of the shards' documents merges them step by
step (aligned by order), judges every merged step again and builds the
result, saying which shard or step is missing. lobbybench does not start
the shards together: start them at once (a Kubernetes Indexed Job).

With --target-cmd 'COMMAND ARGS…' (or the scenario's target_cmd)
lobbybench starts the server at --target once, waits up to
--target-ready-timeout for it to answer, runs every step against it and
stops it at the end; each step then says what it cost the server (CPU
seconds, peak RSS), and its death is TARGET DOWN.

No step inherits another's leftovers: against the embedded server (no
target) each step gets a fresh one (for its warm-up and judged runs);
against a udp-lobby or tcp-lobby target the room count of its listing,
and against a leviathan target the player count of its ServerStatus, is
taken before the first step and waited for (up to --drain) before each
later one, and a step says when it did not drain. A leviathan server
that never answers Serverstatus gets one line: the drain is not checked.

Exit codes: 0 a limit found, every load held up to --max, or a shard's
ladder played; 1 no load held; 2 invalid usage, flags or scenario; 3
target unreachable; 5 interrupted; 7 the target went down; 8
harness-bound (the limit found is the harness's), or a ladder's load
broke below one that held (no limit to find). The JSON, JUnit,
Markdown and HTML files are written in every case where a step ran.`

func init() {
	register("capacity", command{
		summary: "find the highest load a scenario's thresholds hold at, and what breaks first",
		usage:   capacityUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			c := addCapacityFlags(fs)
			return func(ctx context.Context, e *env, args []string) int {
				c.parsed(fs)
				return runCapacity(ctx, e, c, args)
			}
		},
	})
}

// runCapacity is the capacity command once its flags are parsed into c.
func runCapacity(ctx context.Context, e *env, c *capacityOptions, args []string) (code int) {
	if err := c.check(args); err != nil {
		return usageErr(e, "capacity", "%v", err)
	}
	plan, bad := loadPlan(e, "capacity", args[0], c.o)
	if plan == nil {
		return bad
	}
	if code := settleFlows(e, "capacity", plan, c.o.Flows != "", false); code != exitOK {
		return code
	}
	cc, err := c.config(ctx, plan)
	if err != nil {
		return usageErr(e, "capacity", "%v", err)
	}
	if err := c.outs.check(e); err != nil {
		return usageErr(e, "capacity", "%v", err)
	}
	targetName := plan.Target
	defer c.outs.settle(e, "capacity", &code, func(why *result.NotStarted) result.Doc {
		doc := c.doc(plan, targetName, nil)
		doc.NotStarted = why
		return doc
	})
	e.setStopNote(func() string { return "the step running ends, then the results so far are written" })
	r := cc.runner
	r.Base.Abort, r.Base.Warnings = e.abort, e.stderr
	r.Note = func(line string) { reports.WriteWrapped(e.stderr, "lobbybench capacity: "+line, 2) }
	if c.given["workers"] {
		run, done, err := capacityWorkers(plan, cc.workers, c.grace, c.watchdog, c.allowRedir, args[0])
		if err != nil {
			return usageErr(e, "capacity", "%v", err)
		}
		defer done()
		r.Run = run
	}
	if plan.Target == "" {
		targetName = "embedded reference server (a fresh one per step)"
	} else if !r.CountTarget() && !c.quiet {
		fmt.Fprintf(e.stderr, "lobbybench capacity: %s: the server's drain between steps is not checked (the protocol offers no count of what its server still holds)\n", plan.Protocol)
	}
	owner, code := c.startOwner(ctx, e, r)
	if code != exitOK {
		return code
	}
	if owner != nil {
		defer owner.stop()
		targetName += " (started by --target-cmd)"
	}
	res, err := cc.play(ctx, r, c.progress(e, plan))
	res = c.doc(plan, targetName, res)
	if err != nil && len(res.Steps) == 0 {
		return capacityFailed(ctx, e, err)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "lobbybench capacity: %v\n", err)
	}
	return reportCapacity(e, res, c.outs)
}

// doc is res (a new document when nil) with what plan says of the
// search (its scenario, protocol and model), its target's name and the
// flags' settings.
func (c *capacityOptions) doc(plan *scenario.Plan, target string, res *result.Capacity) *result.Capacity {
	if res == nil {
		res = &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, StartedAt: time.Now()}
	}
	res.Scenario, res.Target, res.Protocol, res.Model = plan.Name, target, string(plan.Protocol), string(plan.Load.Model)
	res.Settings.StepNS, res.Settings.WarmupNS, res.Settings.DrainNS, res.Settings.LagBoundNS = c.step, c.warmup, c.drain, c.lagBound
	return res
}

// capacityFailed is the exit code of a search that played no step, err
// saying why; an unreachable target's or an interruption's why is kept
// for the result files (env.notStarted, outputs.settle).
func capacityFailed(ctx context.Context, e *env, err error) int {
	var unreach *engine.UnreachableError
	switch {
	case errors.As(err, &unreach):
		fmt.Fprintf(e.stderr, "lobbybench capacity: %v\n", err)
		e.notStarted = err.Error()
		return exitUnreachable
	case ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "lobbybench capacity: interrupted before the first step: %v\n", err)
		e.notStarted = "stopped before the first step (" + err.Error() + ")"
		return exitInterrupted
	}
	return usageErr(e, "capacity", "%v", err)
}

// startOwner starts the server --target-cmd (or the scenario's target_cmd)
// names, once for every step, and makes r's steps watch and measure it
// (ownTarget); nil when there is none.
func (c *capacityOptions) startOwner(ctx context.Context, e *env, r *capacity.EngineRunner) (*ownedRun, int) {
	plan := r.Plan
	cmdline := c.own.command(plan.TargetCmd)
	if c.sharded() && cmdline != "" {
		return nil, usageErr(e, "capacity", "the scenario's target_cmd cannot be used with --shard: every shard must load the one server; start it apart and give --target")
	}
	owner, code := ownTarget(ctx, e, "capacity", c.own, cmdline, plan, &r.Base)
	if owner == nil {
		return nil, code
	}
	r.Telemetry = owner.Snapshot
	// A step's workers see only that the address stopped answering; the
	// process's end, and how, is known here.
	inner := r.Run
	if inner == nil {
		inner = engine.Run
	}
	r.Run = func(ctx context.Context, cfg engine.Config) (*engine.Result, error) {
		res, err := inner(ctx, cfg)
		if res != nil && res.Run != nil {
			owner.noteEnd(res)
		}
		return res, err
	}
	return owner, exitOK
}

// progress is the line per step on stderr (nil with --quiet).
func (c *capacityOptions) progress(e *env, plan *scenario.Plan) func(result.CapacityStep) {
	if c.quiet {
		return nil
	}
	n := 0
	unit := "/s"
	if plan.Load.Model == scenario.Closed {
		unit = " clients"
	}
	return func(st result.CapacityStep) {
		n++
		fmt.Fprintln(e.stderr, stepLine(n, unit, st))
	}
}

// play runs the ladder, or the search when there is none, with r.
func (cc capacityConfig) play(ctx context.Context, r *capacity.EngineRunner, progress func(result.CapacityStep)) (*result.Capacity, error) {
	if cc.ladder.Loads != nil {
		return capacity.Ladder(ctx, cc.ladder, r, time.Now, progress)
	}
	return capacity.Search(ctx, cc.search, r, time.Now, progress)
}

// capacityWorkers is the engine run of a `capacity --workers` step: n
// local worker processes (0: engine.AutoWorkers of each run's plan), each
// this binary's `run --worker` playing its shard of the step's flat load
// (--capacity-step, since --rate and --duration scale a scenario's stages
// rather than flatten them) against the plan's target or the step's
// embedded server, merged by engine.RunWorkers. done removes the workers'
// result files.
func capacityWorkers(plan *scenario.Plan, n int, grace, watchdog time.Duration, allowRedir, scenarioPath string) (run func(context.Context, engine.Config) (*engine.Result, error), done func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("--workers: cannot find this program to start its workers: %v", err)
	}
	paths, done, err := shardPaths("")
	if err != nil {
		return nil, nil, err
	}
	// The worker reads the scenario file again: what the parent's plan
	// took from flags is passed as flags.
	// The flows mode as settled (settleFlows): each worker takes a
	// virtual range of its own.
	pass := []string{"--grace=" + grace.String(), "--watchdog=" + watchdog.String(), "--seed=" + strconv.FormatInt(plan.Seed, 10),
		"--flows=" + string(plan.FlowsMode)}
	if plan.Target != "" {
		pass = append(pass, "--target="+plan.Target)
	}
	if allowRedir != "" {
		pass = append(pass, "--allow-redirect="+allowRedir)
	}
	if plan.NoDefaultGate {
		pass = append(pass, "--no-default-gate")
	}
	return func(ctx context.Context, cfg engine.Config) (*engine.Result, error) {
		k := n
		if k == 0 {
			k = engine.AutoWorkers(cfg.Plan, engine.OpenFilesLimit())
		}
		flat := "--capacity-step=" + capacityStepArg(cfg.Plan.Load.Start, cfg.Plan.Load.Duration)
		command := func(s engine.Shard, jsonPath string, embeddedAt netip.AddrPort) *exec.Cmd {
			args := append([]string{"run", "--worker", "--shard", s.String(), "--json", jsonPath, "--start-gate", flat}, pass...)
			if embeddedAt.IsValid() {
				args = append(args, "--embedded-at", embeddedAt.String())
			}
			return exec.Command(exe, append(args, scenarioPath)...)
		}
		return engine.RunWorkers(ctx, engine.Workers{Config: cfg, N: k, Command: command, ShardPath: paths, Gate: true})
	}, done, nil
}

// capacityStepArg is --capacity-step's value: "LOAD:DURATION".
func capacityStepArg(load float64, d time.Duration) string {
	return strconv.FormatFloat(load, 'f', -1, 64) + ":" + d.String()
}

// parseCapacityStep reads --capacity-step (capacityStepArg).
func parseCapacityStep(v string) (float64, time.Duration, error) {
	l, ds, ok := strings.Cut(v, ":")
	load, err1 := strconv.ParseFloat(l, 64)
	d, err2 := time.ParseDuration(ds)
	if !ok || err1 != nil || err2 != nil || !(load >= 1 && load <= capacity.MaxLoad) || d <= 0 {
		return 0, 0, fmt.Errorf("--capacity-step %q: want LOAD:DURATION, e.g. 200:10s", v)
	}
	return load, d, nil
}

// stepLine is one step's progress line: "step 3  80/s  PASS  achieved
// 79.8/s  p99 1.2ms  err 0.0%  lag p99 52µs".
func stepLine(n int, unit string, st result.CapacityStep) string {
	line := fmt.Sprintf("step %d  %s  %s  achieved %.1f/s  p99 %v  err %.1f%%  lag p99 %v",
		n, result.FormatLoad(st.Load, unit), capVerdict(st.Verdict), st.Throughput,
		time.Duration(st.P99US)*time.Microsecond, st.ErrorRate*100, time.Duration(st.SendLagP99US)*time.Microsecond)
	if st.Workers > 0 {
		line += fmt.Sprintf("  workers %d", st.Workers)
	}
	switch {
	case len(st.Broke) > 0:
		line += "  broke: " + st.Broke[0]
	case st.Why != "":
		line += "  (" + st.Why + ")"
	}
	if st.Drain != "" {
		line += "  [" + st.Drain + "]"
	}
	return line
}

func capVerdict(v string) string {
	switch v {
	case result.CapHarnessBound:
		return "HARNESS-BOUND"
	case result.CapTargetDown:
		return "TARGET DOWN"
	case result.CapFail:
		return "FAIL"
	}
	return "PASS"
}

// reportCapacity prints the search, writes the files asked for and picks
// the exit code.
func reportCapacity(e *env, c *result.Capacity, outs *outputs) int {
	if err := reports.WriteCapacityText(e.stdout, c); err != nil {
		fmt.Fprintf(e.stderr, "lobbybench capacity: writing the table: %v\n", err)
	}
	wrote := outs.write(e, "capacity", c, reports.Options{})
	code := capacityExit(c)
	if code != exitOK {
		fmt.Fprintf(e.stderr, "lobbybench capacity: %s\n", c.Headline().Text)
	}
	return withOutputs(code, wrote)
}

// capacityExit is the exit code of a capacity result: 7 the target went
// down, 5 interrupted; a shard's document (no verdict of its own) 0;
// else 8 harness-bound or a ladder whose verdicts do not rise with the
// load, 1 no load held, 0 a limit found.
func capacityExit(c *result.Capacity) int {
	switch {
	case c.Stop == result.StopTargetDown:
		return exitTargetDown
	case c.Stop == result.StopInterrupted:
		return exitInterrupted
	case c.Shard != "":
		return exitOK
	case c.Stop == result.StopHarness, c.Stop == result.StopNotMonotone:
		return exitInconclusive
	case c.Stop == result.StopNoLoadHeld || c.Sustainable == 0:
		return exitFailed
	}
	return exitOK
}
