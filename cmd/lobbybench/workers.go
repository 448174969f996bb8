package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/scenario"
)

// workerFlags are the run flags a --workers parent passes on to its
// workers as given: the overrides that shape the plan, the grace,
// --precise, --no-spin and --watchdog (each worker watches the target; the
// merge keeps the union of their outages), --no-default-gate (each worker
// judges its share, and the merge by the thresholds they carry), where a
// server may send them (--allow-redirect), the protocols' own flags
// (--instance-ports), and --protocol and --flow, a run's scenario without
// a file.
var workerFlags = []string{"target", "duration", "rate", "clients", "seed", "max-clients", "grace", "precise", "no-spin", "watchdog", "allow-redirect", "no-default-gate", "protocol", "flow", "flows"}

// parseWorkers reads --workers: a count 1..engine.MaxWorkers or "auto".
func parseWorkers(v string, plan *scenario.Plan) (int, error) {
	if v == "auto" {
		return engine.AutoWorkers(plan, engine.OpenFilesLimit()), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > engine.MaxWorkers {
		return 0, fmt.Errorf("--workers %q: want a number of processes 1-%d or auto", v, engine.MaxWorkers)
	}
	return n, nil
}

// workerCommand returns how the parent starts shard s: this binary's run
// in worker mode with the given overrides, on the same scenario file
// (scenarioArgs: the run's arguments, none when its flags make the scenario).
// Every worker gets the start instant at, the parent's (--start-at, or
// one it picked), so the workers start their schedules together.
func workerCommand(fs *flag.FlagSet, protoFlags []string, scenarioArgs []string, at time.Time) (func(engine.Shard, string, netip.AddrPort) *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--workers: cannot find this program to start its workers: %v", err)
	}
	var pass []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "metrics-addr" || f.Name == "dashboard-addr" {
			// The parent serves the merge of what its workers send.
			if !slices.Contains(pass, "--worker-metrics") {
				pass = append(pass, "--worker-metrics")
			}
		}
		for _, n := range append(workerFlags, protoFlags...) {
			if f.Name == n {
				pass = append(pass, "--"+n+"="+f.Value.String())
			}
		}
	})
	return func(s engine.Shard, jsonPath string, embeddedAt netip.AddrPort) *exec.Cmd {
		start := "--start-gate"
		if !at.IsZero() {
			start = "--start-at=" + at.UTC().Format(time.RFC3339Nano)
		}
		args := append([]string{"run", "--worker", "--shard", s.String(), "--json", jsonPath, start}, pass...)
		if embeddedAt.IsValid() {
			args = append(args, "--embedded-at", embeddedAt.String())
		}
		return exec.Command(exe, append(args, scenarioArgs...)...)
	}, nil
}

// shardPaths returns where the workers' results go: beside the --json
// file (FILE.shard-i-of-n.json, kept), or, without one or with --json -,
// in a temporary directory that cleanup removes.
func shardPaths(jsonPath string) (path func(engine.Shard) string, cleanup func(), err error) {
	base, cleanup := strings.TrimSuffix(jsonPath, ".json"), func() {}
	if jsonPath == "" || jsonPath == stdoutPath {
		dir, err := os.MkdirTemp("", "lobbybench-workers-")
		if err != nil {
			return nil, nil, fmt.Errorf("--workers: %v", err)
		}
		base, cleanup = dir+"/result", func() { os.RemoveAll(dir) }
	}
	return func(s engine.Shard) string {
		return fmt.Sprintf("%s.shard-%d-of-%d.json", base, s.Index, s.Count)
	}, cleanup, nil
}

// usageError is a --workers mistake found before anything ran.
type usageError struct{ error }

// runWorkers runs cfg as local worker processes (--workers v); done
// removes what only the run needed.
func runWorkers(ctx context.Context, fs *flag.FlagSet, protoFlags []string, cfg engine.Config, v, jsonPath string, scenarioArgs []string) (*engine.Result, func(), error) {
	nop := func() {}
	bad := ""
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "shard", "worker", "start-gate", "embedded-at", "worker-metrics":
			bad = f.Name
		}
	})
	if bad != "" {
		return nil, nop, usageError{fmt.Errorf("--%s cannot be used with --workers", bad)}
	}
	n, err := parseWorkers(v, cfg.Plan)
	if err != nil {
		return nil, nop, usageError{err}
	}
	// Without --start-at the workers start together at the instant their
	// start gate sets once every one is ready (engine.Workers.Gate).
	gate := cfg.StartAt.IsZero()
	command, err := workerCommand(fs, protoFlags, scenarioArgs, cfg.StartAt)
	if err != nil {
		return nil, nop, err
	}
	paths, done, err := shardPaths(jsonPath)
	if err != nil {
		return nil, nop, err
	}
	if cfg.Mode == engine.ProgressNone {
		cfg.Progress = nil
	}
	res, err := engine.RunWorkers(ctx, engine.Workers{Config: cfg, N: n, Command: command, ShardPath: paths, Gate: gate})
	return res, done, err
}
