package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/capacity"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// runOptions is what run's flags say, filled by parsing them
// (addRunFlags, then parsed): check refuses a bad combination, shapePlan
// and config turn it into the plan and the engine.Config the engine takes.
type runOptions struct {
	o          scenario.Overrides
	seed       seedFlag
	shard      engine.Shard
	outs       *outputs
	metrics    string
	dashAddr   string
	linger     time.Duration
	workerMet  bool
	quiet      bool
	maxClients int
	grace      time.Duration
	workers    string
	worker     bool
	startGate  bool
	embeddedAt string
	capStep    string
	precise    bool
	watchdog   time.Duration
	own        *ownedTargetFlags
	startAt    string
	maxWait    time.Duration
	allowRedir string
	noSpin     bool
	protocol   string
	flow       string
	// given holds the flags set on the command line (parsed fills it).
	given map[string]bool
	// fs is the flag set, whose values a --workers parent passes on.
	fs *flag.FlagSet
}

// addRunFlags declares run's flags on fs, each filling its field of the
// returned options.
func addRunFlags(fs *flag.FlagSet) *runOptions {
	r := &runOptions{fs: fs, outs: outputFlags(fs, result.KindRun)}
	fs.StringVar(&r.metrics, "metrics-addr", "", "serve live Prometheus metrics at http://`ADDR`/metrics during the run")
	fs.StringVar(&r.dashAddr, "dashboard-addr", "", "serve a live page of the run (the HTML report's charts and tables, updated every second, then the final report) at http://`ADDR`/")
	fs.DurationVar(&r.linger, "serve-linger", 0, "with --metrics-addr or --dashboard-addr: keep serving the final metrics and report `DURATION` after the run (its results written), for the last scrape and the watchers; Ctrl-C ends it")
	fs.BoolVar(&r.workerMet, "worker-metrics", false, "(internal to --workers) send the cumulative metrics on the progress lines, for the parent's --metrics-addr and --dashboard-addr")
	fs.BoolVar(&r.quiet, "quiet", false, "no progress output")
	fs.IntVar(&r.maxClients, "max-clients", 0, "cap on concurrent sessions (overrides load.max_clients)")
	fs.DurationVar(&r.grace, "grace", engine.DefaultGrace, "how long in-flight sessions may run on after the end or Ctrl-C")
	fs.StringVar(&r.workers, "workers", "", "run as `N` local shard processes (or auto: enough for the open-files limit), one merged result")
	fs.BoolVar(&r.worker, "worker", false, "(internal to --workers) run as a worker: progress as JSON lines on stdout, no table")
	fs.BoolVar(&r.startGate, "start-gate", false, "(internal to --workers) once the target answers, say ready on stdout and read the start instant from stdin")
	fs.StringVar(&r.embeddedAt, "embedded-at", "", "(internal to --workers) the parent's embedded server `ADDR`")
	fs.StringVar(&r.capStep, "capacity-step", "", "(internal to capacity --workers) play the scenario's flows at one flat `LOAD:DURATION`, as a capacity step does")
	fs.BoolVar(&r.precise, "precise", false, fmt.Sprintf("udp-lobby clients poll their socket for %v after each send before parking: a lower latency floor for more CPU per request", simclient.PreciseWindow))
	fs.DurationVar(&r.watchdog, "watchdog", 250*time.Millisecond, "probe the target every `INTERVAL` on its own socket and report when it goes down (0: no watchdog)")
	r.own = addOwnedTargetFlags(fs, true)
	fs.StringVar(&r.startAt, "start-at", "", "start the schedule at `TIME`: RFC 3339 (2026-11-26T20:00:00Z) or an offset from now (+30s), so shards on several machines start together")
	fs.DurationVar(&r.maxWait, "start-at-max-wait", DefaultStartAtMaxWait, "the furthest ahead --start-at may be (`DURATION`)")
	allowRedirectFlag(fs, &r.allowRedir)
	fs.BoolVar(&r.noSpin, "no-spin", false, fmt.Sprintf("the open model's schedule does not spin on a core for the last %v before each arrival: less CPU, and the core left to a server on this machine, for a later send", precise.Hold))
	addTargetSeedFlags(fs, &r.o, &r.seed)
	addLoadFlags(fs, &r.o)
	addFlowsFlag(fs, &r.o)
	fs.StringVar(&r.protocol, "protocol", "", "without a SCENARIO.yaml: the protocol `P` ("+strings.Join(scenario.ProtocolNames(), ", ")+")")
	fs.StringVar(&r.flow, "flow", "", "without a SCENARIO.yaml: the flow's `STEPS`, comma-separated, each KIND or KIND=VALUE (create_room,join=created,leave)")
	fs.Var(&r.shard, "shard", "run shard `i/n` (0-based) of the load: n machines together run the scenario")
	for _, name := range []string{"worker-metrics", "worker", "start-gate", "embedded-at", "capacity-step"} {
		markInternal(fs, name)
	}
	return r
}

// parsed records which flags the command line set: a zero value means
// "not given" to the checks, given explicitly it is a mistake, not a
// request for the scenario's value.
func (r *runOptions) parsed() {
	r.o.Seed = r.seed.v
	r.given = givenFlags(r.fs)
}

// givenFlags is the set of fs's flags the command line set.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// fromFlags reports whether the scenario is made of flags (--protocol,
// --flow) rather than read from a file.
func (r *runOptions) fromFlags() bool { return r.given["protocol"] || r.given["flow"] }

// check refuses a bad combination of the flags and the positional
// arguments, before any scenario is read: each error names its flag.
func (r *runOptions) check(args []string) error {
	switch {
	case r.fromFlags() && len(args) > 0:
		return fmt.Errorf("--protocol and --flow make the scenario; give them or a SCENARIO.yaml (%s), not both", args[0])
	case !r.fromFlags() && len(args) != 1:
		return fmt.Errorf("want exactly one SCENARIO.yaml argument, got %d (or --protocol and --flow to run without one)", len(args))
	}
	if err := checkLoadFlags(r.given, r.o); err != nil {
		return err
	}
	if err := r.checkServing(); err != nil {
		return err
	}
	if err := r.checkWorker(); err != nil {
		return err
	}
	if err := r.own.check(); err != nil {
		return err
	}
	return r.checkTiming()
}

// checkServing checks --max-clients, --watchdog and what serves the run
// live (--serve-linger, --dashboard-addr).
func (r *runOptions) checkServing() error {
	switch {
	case r.maxClients < 0 || r.given["max-clients"] && r.maxClients == 0:
		return fmt.Errorf("--max-clients %d must be at least 1", r.maxClients)
	case r.watchdog < 0:
		return fmt.Errorf("--watchdog %v must be 0 (off) or above", r.watchdog)
	case r.linger < 0 || r.linger > 0 && r.metrics == "" && r.dashAddr == "":
		return fmt.Errorf("--serve-linger %v needs --metrics-addr or --dashboard-addr and must be 0 or above", r.linger)
	}
	return nil
}

// checkWorker refuses what a --workers worker cannot do: its parent does
// it.
func (r *runOptions) checkWorker() error {
	switch {
	case r.dashAddr != "" && r.worker:
		return errors.New("--dashboard-addr cannot be used with --worker: the --workers parent serves the page")
	case r.worker && r.outs.path("json") == stdoutPath:
		return errors.New("--json - cannot be used with --worker: its standard output carries the progress to the --workers parent")
	case r.worker && (r.given["target-cmd"] || r.given["target-log"]):
		return errors.New("--target-cmd cannot be used with --worker: the --workers parent starts the server")
	case r.startGate && (!r.worker || r.startAt != ""):
		return errors.New("--start-gate is internal to --workers: it needs --worker, and no --start-at")
	}
	return nil
}

// checkTiming checks --start-at-max-wait and --grace.
func (r *runOptions) checkTiming() error {
	switch {
	case r.maxWait <= 0:
		return fmt.Errorf("--start-at-max-wait %v must be above 0", r.maxWait)
	case r.given["start-at-max-wait"] && r.startAt == "":
		return errors.New("--start-at-max-wait needs --start-at")
	case r.grace < 0 || r.given["grace"] && r.grace == 0:
		// The engine takes 0 for its default (3s): say so rather than
		// silently granting 3s.
		return fmt.Errorf("--grace %v must be above 0", r.grace)
	}
	return nil
}

// shapePlan applies to plan what the flags say beyond scenario.Overrides:
// a capacity step's flat share (--capacity-step: what --rate and
// --duration cannot say, they scale the stages) and --max-clients.
func (r *runOptions) shapePlan(plan *scenario.Plan) (*scenario.Plan, error) {
	if r.capStep != "" {
		if !r.worker {
			return nil, errors.New("--capacity-step is internal to 'capacity --workers': it needs --worker")
		}
		load, d, err := parseCapacityStep(r.capStep)
		if err != nil {
			return nil, err
		}
		plan = capacity.StepPlan(plan, load, d)
	}
	if r.maxClients > 0 {
		if peak := int(peakOf(plan.Load)); plan.Load.Model == scenario.Closed && r.maxClients < peak {
			return nil, fmt.Errorf("--max-clients %d is below the scenario's peak of %s", r.maxClients, words.Count(peak, "client"))
		}
		plan.Load.MaxClients = r.maxClients
	}
	return plan, nil
}

// config is the engine.Config of plan the flags say, now being the time
// --start-at's offset counts from; what the run's surroundings give
// (Abort, Progress, Mode, Warnings, ConnBudget) and its observers (the
// live page, the owned target) are the caller's.
func (r *runOptions) config(ctx context.Context, plan *scenario.Plan, now time.Time) (engine.Config, error) {
	cfg := engine.Config{Plan: plan, Shard: r.shard, Grace: r.grace, MetricsAddr: r.metrics, NoSpin: r.noSpin}
	var err error
	if r.startAt != "" {
		if cfg.StartAt, err = parseStartAt(r.startAt, now); err != nil {
			return cfg, err
		}
		if err := checkStartAt(cfg.StartAt, now, r.maxWait, plan.Load.Duration); err != nil {
			return cfg, err
		}
	}
	cfg.Client.Precise = r.precise
	if cfg.Client.AllowRedirect, err = allowRedirect(ctx, r.allowRedir); err != nil {
		return cfg, err
	}
	cfg.WorkerMetrics = r.worker && r.workerMet
	// A capacity step's worker: the parent says the step's open-files
	// need, once, from its load.
	cfg.NoFilesWarning = r.capStep != ""
	cfg.Watchdog = engineWatchdog(r.watchdog)
	if r.embeddedAt != "" {
		if cfg.EmbeddedAt, err = netip.ParseAddrPort(r.embeddedAt); err != nil {
			return cfg, fmt.Errorf("--embedded-at: %v", err)
		}
	}
	if len(plan.Faults) > 0 && r.workers != "" {
		return cfg, errors.New("--workers: the scenario's faults (a recovery drill) are applied and judged by one process; run it without --workers")
	}
	return cfg, nil
}

// engineWatchdog is --watchdog as engine.Config.Watchdog takes it: 0 (off)
// is the engine's -1, its 0 being the default.
func engineWatchdog(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
