package main

import (
	"context"
	"flag"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/scenario"
)

// parseOptions declares a command's flags with add on a fresh flag set
// and parses args as the command does, nothing run: the options, the flag
// set and the positional arguments.
func parseOptions[T any](t *testing.T, add func(*flag.FlagSet) T, args ...string) (T, *flag.FlagSet, []string) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := add(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return o, fs, pos
}

// parseRunOptions parses run's flags from args as the command does,
// nothing run: the options and the positional arguments.
func parseRunOptions(t *testing.T, args ...string) (*runOptions, []string) {
	t.Helper()
	r, _, pos := parseOptions(t, addRunFlags, args...)
	r.parsed()
	return r, pos
}

// closedPlan is a closed-model plan of peak clients for 10s.
func closedPlan(peak float64) *scenario.Plan {
	return &scenario.Plan{Load: scenario.LoadShape{Model: scenario.Closed, Start: 1, Stages: []scenario.Stage{{Target: peak, For: time.Second}}, Duration: 10 * time.Second}}
}

// TestRunOptionsConfig checks the engine.Config run's flags make, nothing
// run: each flag lands in its field, in the engine's spelling.
func TestRunOptionsConfig(t *testing.T) {
	now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c engine.Config)
	}{
		{"defaults", nil, func(t *testing.T, c engine.Config) {
			if c.Watchdog != 250*time.Millisecond || c.Grace != engine.DefaultGrace || !c.StartAt.IsZero() || c.NoSpin || c.Client.Precise || c.WorkerMetrics || c.NoFilesWarning || c.EmbeddedAt.IsValid() || c.MetricsAddr != "" || c.Shard != (engine.Shard{}) {
				t.Errorf("config %+v: want the defaults", c)
			}
		}},
		{"watchdog 0 is the engine's off", []string{"--watchdog", "0"}, func(t *testing.T, c engine.Config) {
			if c.Watchdog != -1 {
				t.Errorf("Watchdog %v, want -1", c.Watchdog)
			}
		}},
		{"watchdog and grace", []string{"--watchdog", "1s", "--grace", "7s"}, func(t *testing.T, c engine.Config) {
			if c.Watchdog != time.Second || c.Grace != 7*time.Second {
				t.Errorf("Watchdog %v Grace %v, want 1s 7s", c.Watchdog, c.Grace)
			}
		}},
		{"start-at offset", []string{"--start-at", "+30s"}, func(t *testing.T, c engine.Config) {
			if want := now.Add(30 * time.Second); !c.StartAt.Equal(want) {
				t.Errorf("StartAt %v, want %v", c.StartAt, want)
			}
		}},
		{"client options", []string{"--precise", "--no-spin", "--allow-redirect", "any", "--metrics-addr", "127.0.0.1:0", "--shard", "1/3"}, func(t *testing.T, c engine.Config) {
			if !c.Client.Precise || !c.NoSpin || !c.Client.AllowRedirect.Any || c.MetricsAddr != "127.0.0.1:0" || c.Shard != (engine.Shard{Index: 1, Count: 3}) {
				t.Errorf("config %+v: want precise, no spin, any redirect, the metrics address and shard 1/3", c)
			}
		}},
		{"worker metrics only in a worker", []string{"--worker-metrics"}, func(t *testing.T, c engine.Config) {
			if c.WorkerMetrics {
				t.Error("WorkerMetrics set without --worker")
			}
		}},
		{"a worker's internals", []string{"--worker", "--worker-metrics", "--capacity-step", "20:1s", "--embedded-at", "127.0.0.1:9000"}, func(t *testing.T, c engine.Config) {
			if !c.WorkerMetrics || !c.NoFilesWarning || c.EmbeddedAt != netip.MustParseAddrPort("127.0.0.1:9000") {
				t.Errorf("config %+v: want worker metrics, no files warning, the embedded address", c)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := parseRunOptions(t, tc.args...)
			plan := closedPlan(4)
			c, err := r.config(context.Background(), plan, now)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			if c.Plan != plan {
				t.Error("config lost the plan")
			}
			tc.check(t, c)
		})
	}
}

// TestRunOptionsConfigErrors checks the errors of a bad flag the config
// conversion finds, each naming its flag.
func TestRunOptionsConfigErrors(t *testing.T) {
	now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		args   []string
		faults bool
		want   string
	}{
		{"start-at garbage", []string{"--start-at", "soon"}, false, `--start-at "soon": want an RFC 3339 time (2026-11-26T20:00:00Z) or an offset from now (+30s)`},
		{"start-at too far", []string{"--start-at", "+2h", "--start-at-max-wait", "1h"}, false, "--start-at 2026-11-26T22:00:00Z is 2h0m0s away, over --start-at-max-wait 1h0m0s (raise it if the wait is meant)"},
		{"embedded-at garbage", []string{"--worker", "--embedded-at", "nowhere"}, false, "--embedded-at: not an ip:port"},
		{"faults with workers", []string{"--workers", "2"}, true, "--workers: the scenario's faults (a recovery drill) are applied and judged by one process; run it without --workers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := parseRunOptions(t, tc.args...)
			plan := closedPlan(4)
			if tc.faults {
				plan.Faults = []owned.Fault{{}}
			}
			_, err := r.config(context.Background(), plan, now)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRunOptionsCheck checks the bad combinations of run's flags refused
// before any scenario is read, each error naming its flag exactly.
func TestRunOptionsCheck(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // "" : accepted
	}{
		{"a file", []string{"s.yaml"}, ""},
		{"a flow", []string{"--protocol", "udp-lobby", "--flow", "list_rooms"}, ""},
		{"flow and file", []string{"--flow", "list_rooms", "s.yaml"}, "--protocol and --flow make the scenario; give them or a SCENARIO.yaml (s.yaml), not both"},
		{"two files", []string{"a.yaml", "b.yaml"}, "want exactly one SCENARIO.yaml argument, got 2 (or --protocol and --flow to run without one)"},
		{"duration 0", []string{"--duration", "0s", "s.yaml"}, "--duration must be above 0"},
		{"max-clients 0", []string{"--max-clients", "0", "s.yaml"}, "--max-clients 0 must be at least 1"},
		{"watchdog negative", []string{"--watchdog", "-1s", "s.yaml"}, "--watchdog -1s must be 0 (off) or above"},
		{"linger alone", []string{"--serve-linger", "5s", "s.yaml"}, "--serve-linger 5s needs --metrics-addr or --dashboard-addr and must be 0 or above"},
		{"linger with metrics", []string{"--serve-linger", "5s", "--metrics-addr", "127.0.0.1:0", "s.yaml"}, ""},
		{"dashboard in a worker", []string{"--worker", "--dashboard-addr", "127.0.0.1:0", "s.yaml"}, "--dashboard-addr cannot be used with --worker: the --workers parent serves the page"},
		{"json stdout in a worker", []string{"--worker", "--json", "-", "s.yaml"}, "--json - cannot be used with --worker: its standard output carries the progress to the --workers parent"},
		{"target-log in a worker", []string{"--worker", "--target-log", "x.log", "s.yaml"}, "--target-cmd cannot be used with --worker: the --workers parent starts the server"},
		{"empty target-cmd", []string{"--target-cmd", " ", "s.yaml"}, "--target-cmd is empty (want the command that starts the server, e.g. 'lobbybench serve --udp-lobby-addr 127.0.0.1:9000')"},
		{"max wait 0", []string{"--start-at-max-wait", "0s", "s.yaml"}, "--start-at-max-wait 0s must be above 0"},
		{"max wait alone", []string{"--start-at-max-wait", "1m", "s.yaml"}, "--start-at-max-wait needs --start-at"},
		{"grace 0", []string{"--grace", "0s", "s.yaml"}, "--grace 0s must be above 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, pos := parseRunOptions(t, tc.args...)
			err := r.check(pos)
			if got := errText(err); got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRunOptionsShapePlan checks what --capacity-step and --max-clients
// do to the plan, and their refusals.
func TestRunOptionsShapePlan(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string // the error; "" : shaped
		clients int    // the plan's MaxClients once shaped
		flat    float64
	}{
		{"nothing", nil, "", 0, 0},
		{"max-clients", []string{"--max-clients", "8"}, "", 8, 0},
		{"max-clients below the peak", []string{"--max-clients", "3"}, "--max-clients 3 is below the scenario's peak of 4 clients", 0, 0},
		{"capacity step outside a worker", []string{"--capacity-step", "20:1s"}, "--capacity-step is internal to 'capacity --workers': it needs --worker", 0, 0},
		{"capacity step garbage", []string{"--worker", "--capacity-step", "20"}, `--capacity-step "20": want LOAD:DURATION, e.g. 200:10s`, 0, 0},
		{"capacity step", []string{"--worker", "--capacity-step", "20:1s"}, "", 20, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := parseRunOptions(t, tc.args...)
			plan, err := r.shapePlan(closedPlan(4))
			if got := errText(err); got != tc.want {
				t.Fatalf("error %q, want %q", got, tc.want)
			}
			if err != nil {
				return
			}
			if plan.Load.MaxClients != tc.clients {
				t.Errorf("MaxClients %d, want %d", plan.Load.MaxClients, tc.clients)
			}
			if tc.flat > 0 && (plan.Load.Start != tc.flat || plan.Load.Duration != time.Second) {
				t.Errorf("load %+v: want a flat %v for 1s", plan.Load, tc.flat)
			}
		})
	}
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
