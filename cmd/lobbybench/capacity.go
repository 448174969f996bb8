package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/lobbybench/lobbybench/capacity"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient/udpclient"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
	"github.com/lobbybench/lobbybench/wire/udplobby"
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
that could not open a socket or were dropped late, a send lag p99 over
--lag-bound, its own CPU saturated, or breaches its send lag explains;
the search stops and the limit is the harness's, not the server's: use
--workers or more machines), or TARGET DOWN (the target stopped
answering: the search stops, that is the finding).

With --target-cmd 'COMMAND ARGS…' (or the scenario's target_cmd)
lobbybench starts the server at --target once, waits up to
--target-ready-timeout for it to answer, runs every step against it and
stops it at the end; each step then says what it cost the server (CPU
seconds, peak RSS), and its death is TARGET DOWN.

No step inherits another's leftovers: against the embedded server (no
target) each step gets a fresh one (for its warm-up and judged runs); against a udp-lobby or tcp-lobby
target the room count of its listing is taken before the first step and
waited for (up to --drain) before each later one, and a step says when it
did not drain.

Exit codes: 0 a limit found, or every load held up to --max; 1 no load
held; 2 invalid usage, flags or scenario; 3 target unreachable; 5
interrupted; 7 the target went down; 8 harness-bound (the limit found is
the harness's). The JSON, JUnit, Markdown and HTML files are written in
every case where a step ran.`

func init() {
	register("capacity", command{
		summary: "find the highest load a scenario's thresholds hold at, and what breaks first",
		usage:   capacityUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			var (
				o         scenario.Overrides
				seed      seedFlag
				outs      = outputFlags(fs, result.KindCapacity)
				quiet     = fs.Bool("quiet", false, "no line per step")
				start     = fs.Float64("start", 0, "first load: sessions/s (open model) or clients (closed); default the scenario's peak, or 10")
				maxLoad   = fs.Float64("max", 100000, "highest load tried")
				step      = fs.Duration("step", 10*time.Second, "how long each load is held and judged (the judged run), after its warm-up")
				warmup    = fs.Duration("warmup", 2*time.Second, "how long each load runs before it is judged (a run of its own; 0: none)")
				precision = fs.Float64("precision", 0.1, "stop when the gap between the load that held and the one that broke is within this share (0.1: 10%)")
				budget    = fs.Duration("budget", 5*time.Minute, "total time of the search: no step starts that would end after it")
				drain     = fs.Duration("drain", 30*time.Second, "how long to wait before a step for a udp-lobby or tcp-lobby target's rooms to fall back to their count before the first step")
				lagBound  = fs.Duration("lag-bound", 100*time.Millisecond, "a step whose send lag p99 is above it is harness-bound")
				grace     = fs.Duration("grace", engine.DefaultGrace, "how long in-flight sessions may run on after each step")
				watchdog  = fs.Duration("watchdog", 250*time.Millisecond, "probe the target every `INTERVAL` on its own socket (0: no watchdog, and no TARGET DOWN verdict but an unreachable next step)")
				// --target-cmd starts the server once, for the whole search;
				// what each step costs it is measured.
				own = addOwnedTargetFlags(fs, true)
			)
			fs.StringVar(&o.Target, "target", "", "server `host:port` (overrides the scenario's target)")
			fs.Var(&seed, "seed", "seed `N` of every random choice (overrides the scenario's)")
			return func(ctx context.Context, e *env, args []string) int {
				if len(args) != 1 {
					return usageErr(e, "capacity", "want exactly one SCENARIO.yaml argument, got %d", len(args))
				}
				o.Seed = seed.v
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
				}
				if err := own.check(); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				plan, err := scenario.Load(args[0])
				if err != nil {
					var errs scenario.Errors
					if errors.As(err, &errs) {
						fmt.Fprintln(e.stderr, errs.Error())
					} else {
						fmt.Fprintf(e.stderr, "lobbybench capacity: %v\n", err)
					}
					return exitUsage
				}
				if err := plan.Apply(o); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				if *start == 0 {
					*start = math.Round(peakOf(plan.Load))
					if *start < 1 {
						*start = 10
					}
				}
				s := capacity.Settings{Start: *start, Max: *maxLoad, Precision: *precision, Budget: *budget, StepCost: *warmup + *step + *grace/3}
				if err := s.Check(); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				if err := outs.check(); err != nil {
					return usageErr(e, "capacity", "%v", err)
				}
				e.stopNote = func() string { return "the step running ends, then the results so far are written" }
				cfg := engine.Config{Grace: *grace, Abort: e.abort, Mode: engine.ProgressNone, Warnings: e.stderr, Watchdog: *watchdog}
				if *watchdog == 0 {
					cfg.Watchdog = -1
				}
				j := capacity.DefaultJudgement
				j.LagBound = *lagBound
				r := &capacity.EngineRunner{Plan: plan, Base: cfg, Hold: *step, Warmup: *warmup, Judge: j, Drain: *drain}
				targetName := plan.Target
				if plan.Target == "" {
					targetName = "embedded reference server (a fresh one per step)"
				} else if plan.Protocol == udplobby.ProtocolName || plan.Protocol == tcplobby.ProtocolName {
					r.Rooms = func(ctx context.Context) (int, error) {
						addr, err := target.Resolve(ctx, plan.Target)
						if err != nil {
							return 0, err
						}
						if plan.Protocol == tcplobby.ProtocolName {
							return capacity.TCPRooms(ctx, addr, 2*time.Second)
						}
						return capacity.UDPRooms(ctx, addr, udpclient.OptionsOf(plan).HeaderProfile, 2*time.Second)
					}
				} else if !*quiet {
					fmt.Fprintf(e.stderr, "lobbybench capacity: %s: the server's drain between steps is not checked (only udp-lobby's and tcp-lobby's room lists are)\n", plan.Protocol)
				}
				cmdline := own.command(plan.TargetCmd)
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
				c, err := capacity.Search(ctx, s, r, time.Now, progress)
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

// stepLine is one step's progress line: "step 3  80/s  PASS  achieved
// 79.8/s  p99 1.2ms  err 0.0%  lag p99 52µs".
func stepLine(n int, unit string, st result.CapacityStep) string {
	line := fmt.Sprintf("step %d  %s  %s  achieved %.1f/s  p99 %v  err %.1f%%  lag p99 %v",
		n, result.FormatLoad(st.Load, unit), capVerdict(st.Verdict), st.Throughput,
		time.Duration(st.P99US)*time.Microsecond, st.ErrorRate*100, time.Duration(st.SendLagP99US)*time.Microsecond)
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
	code := exitOK
	switch c.Stop {
	case result.StopTargetDown:
		code = exitTargetDown
	case result.StopInterrupted:
		code = exitInterrupted
	case result.StopHarness:
		code = exitInconclusive
	case result.StopNoLoadHeld:
		code = exitFailed
	default:
		if c.Sustainable == 0 {
			code = exitFailed
		}
	}
	if code == exitOK && !wrote {
		code = exitUsage
	}
	if code != exitOK {
		fmt.Fprintf(e.stderr, "lobbybench capacity: %s\n", c.Headline().Text)
	}
	return code
}
