package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/capacity"
	"github.com/lobbybench/lobbybench/engine"
)

// parseCapacityOptions parses capacity's flags from args as the command
// does, nothing run: the options and the positional arguments.
func parseCapacityOptions(t *testing.T, args ...string) (*capacityOptions, []string) {
	t.Helper()
	c, fs, pos := parseOptions(t, addCapacityFlags, args...)
	c.parsed(fs)
	return c, pos
}

// TestCapacityOptionsCheck checks the bad flags and combinations capacity
// refuses before it reads the scenario, each error naming its flag.
func TestCapacityOptionsCheck(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // "": accepted
	}{
		{"defaults", []string{"s.yaml"}, ""},
		{"no file", nil, "want exactly one SCENARIO.yaml argument, got 0"},
		{"step 0", []string{"--step", "0s", "s.yaml"}, "--step 0s must be above 0"},
		{"warmup negative", []string{"--warmup", "-1s", "s.yaml"}, "--warmup -1s must be 0 or above"},
		{"drain negative", []string{"--drain", "-1s", "s.yaml"}, "--drain -1s must be 0 or above"},
		{"lag bound 0", []string{"--lag-bound", "0s", "s.yaml"}, "--lag-bound 0s must be above 0"},
		{"grace 0", []string{"--grace", "0s", "s.yaml"}, "--grace 0s must be above 0"},
		{"watchdog negative", []string{"--watchdog", "-1s", "s.yaml"}, "--watchdog -1s must be 0 (off) or above"},
		{"shard and workers", []string{"--shard", "0/2", "--workers", "2", "s.yaml"}, "--shard cannot be used with --workers: a shard is one process; run more shards instead"},
		{"shard and target-cmd", []string{"--shard", "0/2", "--target-cmd", "srv", "s.yaml"}, "--target-cmd cannot be used with --shard: every shard must load the one server; start it apart and give --target"},
		{"loads and start", []string{"--loads", "1,2", "--start", "3", "s.yaml"}, "--start cannot be used with --loads: the ladder names every load it plays"},
		{"loads and precision", []string{"--loads", "1,2", "--precision", "0.2", "s.yaml"}, "--precision cannot be used with --loads: the ladder names every load it plays"},
		{"shard and precision", []string{"--shard", "0/2", "--precision", "0.2", "s.yaml"}, "--precision cannot be used with --shard: a sharded run plays a fixed ladder (doubling from --start to --max, or --loads), it does not bisect"},
		{"ready timeout 0", []string{"--target-ready-timeout", "0s", "s.yaml"}, "--target-ready-timeout 0s must be above 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, pos := parseCapacityOptions(t, tc.args...)
			if got := errText(c.check(pos)); got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCapacityOptionsConfig checks the settings and the runner capacity's
// flags make of a plan, nothing run.
func TestCapacityOptionsConfig(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		target string
		check  func(t *testing.T, cc capacityConfig)
	}{
		{"a search from the plan's peak", nil, "", func(t *testing.T, cc capacityConfig) {
			want := capacity.Settings{Start: 4, Max: 100000, Precision: 0.1, Budget: 5 * time.Minute, StepCost: 12*time.Second + engine.DefaultGrace/3}
			if cc.search != want || cc.ladder.Loads != nil {
				t.Errorf("search %+v ladder %v, want %+v and no ladder", cc.search, cc.ladder.Loads, want)
			}
			r := cc.runner
			if r.Hold != 10*time.Second || r.Warmup != 2*time.Second || r.Drain != 30*time.Second || r.Judge.LagBound != 100*time.Millisecond || r.KeepRuns {
				t.Errorf("runner %+v: want the defaults", r)
			}
			if r.Base.Watchdog != 250*time.Millisecond || r.Base.Grace != engine.DefaultGrace || r.Base.Mode != engine.ProgressNone {
				t.Errorf("base %+v: want the default watchdog and grace, no progress", r.Base)
			}
		}},
		{"flags", []string{"--start", "5", "--max", "50", "--precision", "0.2", "--step", "3s", "--warmup", "0s", "--grace", "3s", "--watchdog", "0s", "--lag-bound", "5ms", "--drain", "1s", "--allow-redirect", "any"}, "", func(t *testing.T, cc capacityConfig) {
			want := capacity.Settings{Start: 5, Max: 50, Precision: 0.2, Budget: 5 * time.Minute, StepCost: 4 * time.Second}
			if cc.search != want {
				t.Errorf("search %+v, want %+v", cc.search, want)
			}
			r := cc.runner
			if r.Hold != 3*time.Second || r.Warmup != 0 || r.Drain != time.Second || r.Judge.LagBound != 5*time.Millisecond || r.Base.Watchdog != -1 || !r.Base.Client.AllowRedirect.Any {
				t.Errorf("runner %+v: want the flags' values, the watchdog off", r)
			}
		}},
		{"a ladder", []string{"--loads", "2,4,8"}, "", func(t *testing.T, cc capacityConfig) {
			if !slices.Equal(cc.ladder.Loads, []float64{2, 4, 8}) || cc.ladder.Shard != "" {
				t.Errorf("ladder %+v, want 2,4,8 unsharded", cc.ladder)
			}
		}},
		{"a shard doubles", []string{"--shard", "1/2", "--start", "2", "--max", "16"}, "127.0.0.1:9000", func(t *testing.T, cc capacityConfig) {
			if !slices.Equal(cc.ladder.Loads, []float64{2, 4, 8, 16}) || cc.ladder.Shard != "1/2" || !cc.runner.KeepRuns || cc.runner.Base.Shard != (engine.Shard{Index: 1, Count: 2}) {
				t.Errorf("ladder %+v keep %v shard %v, want 2..16 as shard 1/2, runs kept", cc.ladder, cc.runner.KeepRuns, cc.runner.Base.Shard)
			}
		}},
		{"workers", []string{"--workers", "3"}, "", func(t *testing.T, cc capacityConfig) {
			if cc.workers != 3 {
				t.Errorf("workers %d, want 3", cc.workers)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := parseCapacityOptions(t, append(tc.args, "s.yaml")...)
			plan := closedPlan(4)
			plan.Target = tc.target
			cc, err := c.config(context.Background(), plan)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			if cc.runner.Plan != plan {
				t.Error("the runner lost the plan")
			}
			tc.check(t, cc)
		})
	}
}

// TestCapacityOptionsConfigErrors checks the errors capacity's flags make
// once the plan is known, each naming its flag.
func TestCapacityOptionsConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the error; a prefix when it ends in ": " (the resolver's own words follow)
	}{
		{"a shard of the embedded server", []string{"--shard", "0/2"}, "--shard 0/2 needs --target (or the scenario's target): the shards on their machines must load one server, not an embedded server each"},
		{"start over max", []string{"--start", "10", "--max", "5"}, "--max 5 must be at least --start 10"},
		{"bad redirect", []string{"--allow-redirect", "not a host"}, "--allow-redirect: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := parseCapacityOptions(t, append(tc.args, "s.yaml")...)
			_, err := c.config(context.Background(), closedPlan(4))
			got := errText(err)
			if prefix := strings.HasSuffix(tc.want, ": "); got != tc.want && !(prefix && strings.HasPrefix(got, tc.want)) {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}
