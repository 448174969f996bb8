package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
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
harness-bound (the limit found is the harness's). The JSON, JUnit,
Markdown and HTML files are written in every case where a step ran.`

func init() {
	register("capacity", command{
		summary: "find the highest load a scenario's thresholds hold at, and what breaks first",
		usage:   capacityUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			var (
				o         scenario.Overrides
				seed      seedFlag
				shard     engine.Shard
				outs      = outputFlags(fs, result.KindCapacity)
				quiet     = fs.Bool("quiet", false, "no line per step")
				start     = fs.Float64("start", 0, "first load: sessions/s (open model) or clients (closed); default the scenario's peak, or 10")
				maxLoad   = fs.Float64("max", 100000, "highest load tried")
				loads     = fs.String("loads", "", "play this fixed ladder of `L1,L2,…` loads in increasing order, each one step, instead of searching (no bisection)")
				workers   = fs.String("workers", "", "play each step as `N` local worker processes (or auto: enough for the open-files limit at that step's load), judged on their merge")
				step      = fs.Duration("step", 10*time.Second, "how long each load is held and judged (the judged run), after its warm-up")
				warmup    = fs.Duration("warmup", 2*time.Second, "how long each load runs before it is judged (a run of its own; 0: none)")
				precision = fs.Float64("precision", 0.1, "stop when the gap between the load that held and the one that broke is within this share (0.1: 10%)")
				budget    = fs.Duration("budget", 5*time.Minute, "total time of the search: no step starts that would end after it")
				drain     = fs.Duration("drain", 30*time.Second, "how long to wait before a step for the target's rooms (udp-lobby, tcp-lobby) or players (leviathan) to fall back to their count before the first step")
				lagBound  = fs.Duration("lag-bound", 100*time.Millisecond, "a step whose send lag p99 is above it is harness-bound")
				grace     = fs.Duration("grace", engine.DefaultGrace, "how long in-flight sessions may run on after each step")
				watchdog  = fs.Duration("watchdog", 250*time.Millisecond, "probe the target every `INTERVAL` on its own socket (0: no watchdog, and no TARGET DOWN verdict but an unreachable next step)")
				// --target-cmd starts the server once, for the whole search;
				// what each step costs it is measured.
				own        = addOwnedTargetFlags(fs, true)
				allowRedir = allowRedirectFlag(fs)
			)
			addTargetSeedFlags(fs, &o, &seed)
			fs.Var(&shard, "shard", "play shard `i/n` (0-based) of a fixed ladder (--loads, or doubling from --start to --max): its share of every load, in a document 'report merge' merges with the other shards'")
			return func(ctx context.Context, e *env, args []string) int {
				if len(args) != 1 {
					return usageErr(e, "capacity", "want exactly one SCENARIO.yaml argument, got %d", len(args))
				}
				o.Seed = seed.v
				given := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
				sharded := given["shard"]
				switch {
				case *step <= 0:
					return usageErr(e, "capacity", "--step %v must be above 0", *step)
				case *warmup < 0:
					return usageErr(e, "capacity", "--warmup %v must be 0 or above", *warmup)
				case *drain < 0:
					return usageErr(e, "capacity", "--drain %v must be 0 or above", *drain)
				case *lagBound <= 0:
					return usageErr(e, "capacity", "--lag-bound %v must be above 0", *lagBound)
				case *grace <= 0:
					return usageErr(e, "capacity", "--grace %v must be above 0", *grace)
				case *watchdog < 0:
					return usageErr(e, "capacity", "--watchdog %v must be 0 (off) or above", *watchdog)
				case sharded && given["workers"]:
					return usageErr(e, "capacity", "--shard cannot be used with --workers: a shard is one process; run more shards instead")
				case sharded && (given["target-cmd"] || given["target-log"]):
					return usageErr(e, "capacity", "--target-cmd cannot be used with --shard: every shard must load the one server; start it apart and give --target")
				}
				var ladder []float64
				if given["loads"] {
					for _, f := range []string{"start", "max", "precision"} {
						if given[f] {
							return usageErr(e, "capacity", "--%s cannot be used with --loads: the ladder names every load it plays", f)
						}
					}
					var err error
					if ladder, err = capacity.ParseLoads(*loads); err != nil {
						return usageErr(e, "capacity", "%v", err)
					}
				} else if sharded && given["precision"] {
					return usageErr(e, "capacity", "--precision cannot be used with --shard: a sharded run plays a fixed ladder (doubling from --start to --max, or --loads), it does not bisect")
				}
				if err := own.check(); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				plan, bad := loadPlan(e, "capacity", args[0], o)
				if plan == nil {
					return bad
				}
				var err error
				if sharded && !shard.Whole() && plan.Target == "" {
					return usageErr(e, "capacity", "--shard %s needs --target (or the scenario's target): the shards on their machines must load one server, not an embedded server each", shard)
				}
				nWorkers := 0 // auto: per step
				if given["workers"] && *workers != "auto" {
					if nWorkers, err = parseWorkers(*workers, plan); err != nil {
						return usageErr(e, "capacity", "%v", err)
					}
				}
				if *start == 0 {
					*start = math.Round(peakOf(plan.Load))
					if *start < 1 {
						*start = 10
					}
				}
				stepCost := *warmup + *step + *grace/3
				s := capacity.Settings{Start: *start, Max: *maxLoad, Precision: *precision, Budget: *budget, StepCost: stepCost}
				if ladder == nil {
					if err := s.Check(); err != nil {
						return usageErr(e, "capacity", "%v", err)
					}
					if sharded {
						ladder = capacity.DoublingLoads(*start, *maxLoad)
					}
				}
				ls := capacity.LadderSettings{Loads: ladder, Budget: *budget, StepCost: stepCost}
				if sharded {
					ls.Shard = shard.String()
				}
				if ladder != nil {
					if err := ls.Check(); err != nil {
						return usageErr(e, "capacity", "%v", err)
					}
				}
				if err := outs.check(e); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				e.setStopNote(func() string { return "the step running ends, then the results so far are written" })
				cfg := engine.Config{Grace: *grace, Abort: e.abort, Mode: engine.ProgressNone, Warnings: e.stderr, Watchdog: *watchdog, Shard: shard}
				if *watchdog == 0 {
					cfg.Watchdog = -1
				}
				if cfg.Client.AllowRedirect, err = allowRedirect(ctx, *allowRedir); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				j := capacity.DefaultJudgement
				j.LagBound = *lagBound
				r := &capacity.EngineRunner{Plan: plan, Base: cfg, Hold: *step, Warmup: *warmup, Judge: j, Drain: *drain, KeepRuns: sharded,
					Note: func(line string) { reports.WriteWrapped(e.stderr, "lobbybench capacity: "+line, 2) }}
				if given["workers"] {
					run, done, err := capacityWorkers(plan, nWorkers, *grace, *watchdog, *allowRedir, args[0])
					if err != nil {
						return usageErr(e, "capacity", "%v", err)
					}
					defer done()
					r.Run = run
				}
				targetName := plan.Target
				if plan.Target == "" {
					targetName = "embedded reference server (a fresh one per step)"
				} else if !r.CountTarget() && !*quiet {
					fmt.Fprintf(e.stderr, "lobbybench capacity: %s: the server's drain between steps is not checked (the protocol offers no count of what its server still holds)\n", plan.Protocol)
				}
				cmdline := own.command(plan.TargetCmd)
				if sharded && cmdline != "" {
					return usageErr(e, "capacity", "the scenario's target_cmd cannot be used with --shard: every shard must load the one server; start it apart and give --target")
				}
				if err := own.need(cmdline, plan.Target); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				if cmdline != "" {
					owner, code := startOwned(ctx, e, "capacity", own, cmdline, plan)
					if owner == nil {
						return code
					}
					defer owner.stop()
					r.Base.OnWatchdog, r.Base.OnStart, r.Base.TargetTelemetry = owner.onWatchdog, owner.onStart, owner.Snapshot
					r.Telemetry = owner.Snapshot
					// A step's workers see only that the address stopped
					// answering; the process's end, and how, is known here.
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
					targetName += " (started by --target-cmd)"
				}
				var progress func(result.CapacityStep)
				if !*quiet {
					n := 0
					unit := "/s"
					if plan.Load.Model == scenario.Closed {
						unit = " clients"
					}
					progress = func(st result.CapacityStep) {
						n++
						fmt.Fprintln(e.stderr, stepLine(n, unit, st))
					}
				}
				var c *result.Capacity
				if ladder != nil {
					c, err = capacity.Ladder(ctx, ls, r, time.Now, progress)
				} else {
					c, err = capacity.Search(ctx, s, r, time.Now, progress)
				}
				if c == nil {
					return usageErr(e, "capacity", "%v", err)
				}
				c.Scenario, c.Target, c.Protocol, c.Model = plan.Name, targetName, string(plan.Protocol), string(plan.Load.Model)
				c.Settings.StepNS, c.Settings.WarmupNS, c.Settings.DrainNS, c.Settings.LagBoundNS = *step, *warmup, *drain, *lagBound
				if err != nil {
					fmt.Fprintf(e.stderr, "lobbybench capacity: %v\n", err)
					if len(c.Steps) == 0 {
						var unreach *engine.UnreachableError
						if errors.As(err, &unreach) {
							return exitUnreachable
						}
						return exitUsage
					}
				}
				return reportCapacity(e, c, outs)
			}
		},
	})
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
	pass := []string{"--grace=" + grace.String(), "--watchdog=" + watchdog.String(), "--seed=" + strconv.FormatInt(plan.Seed, 10)}
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
			args := append([]string{"run", "--worker", "--shard", s.String(), "--json", jsonPath, flat}, pass...)
			if embeddedAt.IsValid() {
				args = append(args, "--embedded-at", embeddedAt.String())
			}
			return exec.Command(exe, append(args, scenarioPath)...)
		}
		return engine.RunWorkers(ctx, engine.Workers{Config: cfg, N: k, Command: command, ShardPath: paths})
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
// else 8 harness-bound, 1 no load held, 0 a limit found.
func capacityExit(c *result.Capacity) int {
	switch {
	case c.Stop == result.StopTargetDown:
		return exitTargetDown
	case c.Stop == result.StopInterrupted:
		return exitInterrupted
	case c.Shard != "":
		return exitOK
	case c.Stop == result.StopHarness:
		return exitInconclusive
	case c.Stop == result.StopNoLoadHeld || c.Sustainable == 0:
		return exitFailed
	}
	return exitOK
}
