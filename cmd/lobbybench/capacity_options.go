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
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// capacityOptions is what capacity's flags say, filled by parsing them
// (addCapacityFlags, then parsed): check refuses a bad combination, config
// turns it into the search's or ladder's settings and the runner of its
// steps.
type capacityOptions struct {
	o          scenario.Overrides
	seed       seedFlag
	shard      engine.Shard
	outs       *outputs
	quiet      bool
	start      float64
	maxLoad    float64
	loads      string
	workers    string
	step       time.Duration
	warmup     time.Duration
	precision  float64
	budget     time.Duration
	drain      time.Duration
	lagBound   time.Duration
	grace      time.Duration
	watchdog   time.Duration
	own        *ownedTargetFlags
	allowRedir string
	given      map[string]bool
}

// addCapacityFlags declares capacity's flags on fs, each filling its field
// of the returned options.
func addCapacityFlags(fs *flag.FlagSet) *capacityOptions {
	c := &capacityOptions{outs: outputFlags(fs, result.KindCapacity)}
	fs.BoolVar(&c.quiet, "quiet", false, "no line per step")
	fs.Float64Var(&c.start, "start", 0, "first load: sessions/s (open model) or clients (closed); default the scenario's peak, or 10")
	fs.Float64Var(&c.maxLoad, "max", 100000, "highest load tried")
	fs.StringVar(&c.loads, "loads", "", "play this fixed ladder of `L1,L2,…` loads in increasing order, each one step, instead of searching (no bisection)")
	fs.StringVar(&c.workers, "workers", "", "play each step as `N` local worker processes (or auto: enough for the open-files limit at that step's load), judged on their merge")
	fs.DurationVar(&c.step, "step", 10*time.Second, "how long each load is held and judged (the judged run), after its warm-up")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "how long each load runs before it is judged (a run of its own; 0: none)")
	fs.Float64Var(&c.precision, "precision", 0.1, "stop when the gap between the load that held and the one that broke is within this share (0.1: 10%)")
	fs.DurationVar(&c.budget, "budget", 5*time.Minute, "total time of the search: no step starts that would end after it")
	fs.DurationVar(&c.drain, "drain", 30*time.Second, "how long to wait before a step for the target's rooms (udp-lobby, tcp-lobby) or players (leviathan) to fall back to their count before the first step")
	fs.DurationVar(&c.lagBound, "lag-bound", 100*time.Millisecond, "a step whose send lag p99 is above it is harness-bound")
	fs.DurationVar(&c.grace, "grace", engine.DefaultGrace, "how long in-flight sessions may run on after each step")
	fs.DurationVar(&c.watchdog, "watchdog", 250*time.Millisecond, "probe the target every `INTERVAL` on its own socket (0: no watchdog, and no TARGET DOWN verdict but an unreachable next step)")
	// --target-cmd starts the server once, for the whole search; what
	// each step costs it is measured.
	c.own = addOwnedTargetFlags(fs, true)
	allowRedirectFlag(fs, &c.allowRedir)
	addTargetSeedFlags(fs, &c.o, &c.seed)
	addFlowsFlag(fs, &c.o)
	fs.Var(&c.shard, "shard", "play shard `i/n` (0-based) of a fixed ladder (--loads, or doubling from --start to --max): its share of every load, in a document 'report merge' merges with the other shards'")
	return c
}

// parsed records the seed and which flags the command line set (fs).
func (c *capacityOptions) parsed(fs *flag.FlagSet) {
	c.o.Seed = c.seed.v
	c.given = givenFlags(fs)
}

func (c *capacityOptions) sharded() bool { return c.given["shard"] }

// check refuses a bad flag or combination before the scenario is read,
// each error naming its flag.
func (c *capacityOptions) check(args []string) error {
	switch {
	case len(args) != 1:
		return fmt.Errorf("want exactly one SCENARIO.yaml argument, got %d", len(args))
	case c.step <= 0:
		return fmt.Errorf("--step %v must be above 0", c.step)
	case c.warmup < 0:
		return fmt.Errorf("--warmup %v must be 0 or above", c.warmup)
	case c.drain < 0:
		return fmt.Errorf("--drain %v must be 0 or above", c.drain)
	case c.lagBound <= 0:
		return fmt.Errorf("--lag-bound %v must be above 0", c.lagBound)
	case c.grace <= 0:
		return fmt.Errorf("--grace %v must be above 0", c.grace)
	case c.watchdog < 0:
		return fmt.Errorf("--watchdog %v must be 0 (off) or above", c.watchdog)
	case c.sharded() && c.given["workers"]:
		return errors.New("--shard cannot be used with --workers: a shard is one process; run more shards instead")
	case c.sharded() && (c.given["target-cmd"] || c.given["target-log"]):
		return errors.New("--target-cmd cannot be used with --shard: every shard must load the one server; start it apart and give --target")
	}
	if err := c.checkLadder(); err != nil {
		return err
	}
	return c.own.check()
}

// checkLadder refuses the search's flags beside a fixed ladder (--loads,
// --shard) and a --loads that does not parse.
func (c *capacityOptions) checkLadder() error {
	if !c.given["loads"] {
		if c.sharded() && c.given["precision"] {
			return errors.New("--precision cannot be used with --shard: a sharded run plays a fixed ladder (doubling from --start to --max, or --loads), it does not bisect")
		}
		return nil
	}
	for _, f := range []string{"start", "max", "precision"} {
		if c.given[f] {
			return fmt.Errorf("--%s cannot be used with --loads: the ladder names every load it plays", f)
		}
	}
	_, err := capacity.ParseLoads(c.loads)
	return err
}

// capacityConfig is what the search or ladder of a capacity command
// takes, made of its options (capacityOptions.config).
type capacityConfig struct {
	// ladder's Loads nil: a search of search's settings.
	ladder capacity.LadderSettings
	search capacity.Settings
	// workers is --workers' count, 0 for auto (see useWorkers).
	workers int
	// runner plays the steps: its Plan, Base, Hold, Warmup, Judge, Drain
	// and KeepRuns set; the rest (Note, Run, Telemetry) is the caller's.
	runner *capacity.EngineRunner
}

// config turns the options into the settings of plan's search or ladder
// and the runner of its steps; each error names its flag.
func (c *capacityOptions) config(ctx context.Context, plan *scenario.Plan) (capacityConfig, error) {
	var cc capacityConfig
	if c.sharded() && !c.shard.Whole() && plan.Target == "" {
		return cc, fmt.Errorf("--shard %s needs --target (or the scenario's target): the shards on their machines must load one server, not an embedded server each", c.shard)
	}
	if c.given["workers"] && c.workers != "auto" {
		var err error
		if cc.workers, err = parseWorkers(c.workers, plan); err != nil {
			return cc, err
		}
	}
	if err := c.settings(&cc, plan); err != nil {
		return cc, err
	}
	base := engine.Config{Grace: c.grace, Mode: engine.ProgressNone, Watchdog: engineWatchdog(c.watchdog), Shard: c.shard}
	var err error
	if base.Client.AllowRedirect, err = allowRedirect(ctx, c.allowRedir); err != nil {
		return cc, err
	}
	j := capacity.DefaultJudgement
	j.LagBound = c.lagBound
	cc.runner = &capacity.EngineRunner{Plan: plan, Base: base, Hold: c.step, Warmup: c.warmup, Judge: j, Drain: c.drain, KeepRuns: c.sharded()}
	return cc, nil
}

// settings fills cc's search or ladder settings: --start defaults to the
// plan's peak (10 under 1), a sharded run without --loads doubles from
// --start to --max.
func (c *capacityOptions) settings(cc *capacityConfig, plan *scenario.Plan) error {
	start := c.start
	if start == 0 {
		if start = math.Round(peakOf(plan.Load)); start < 1 {
			start = 10
		}
	}
	stepCost := c.warmup + c.step + c.grace/3
	cc.search = capacity.Settings{Start: start, Max: c.maxLoad, Precision: c.precision, Budget: c.budget, StepCost: stepCost}
	cc.ladder = capacity.LadderSettings{Budget: c.budget, StepCost: stepCost}
	if c.sharded() {
		cc.ladder.Shard = c.shard.String()
	}
	if c.given["loads"] {
		loads, err := capacity.ParseLoads(c.loads)
		if err != nil {
			return err
		}
		cc.ladder.Loads = loads
		return cc.ladder.Check()
	}
	if err := cc.search.Check(); err != nil {
		return err
	}
	if c.sharded() {
		cc.ladder.Loads = capacity.DoublingLoads(start, c.maxLoad)
		return cc.ladder.Check()
	}
	return nil
}
