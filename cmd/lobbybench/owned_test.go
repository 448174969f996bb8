package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/owned"
)

// TestStartExit: one mapping of a failed start to an exit code for both
// commands.
func TestStartExit(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	start := func(kind error) error { return &owned.StartError{Kind: kind, Msg: kind.Error()} }
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"command not found", context.Background(), start(owned.ErrNotFound), exitUsage},
		{"exited first", context.Background(), start(owned.ErrExited), exitUnreachable},
		{"never ready", context.Background(), start(owned.ErrNeverReady), exitUnreachable},
		{"port in use", context.Background(), start(owned.ErrPortInUse), exitUnreachable},
		{"wrapped", context.Background(), fmt.Errorf("x: %w", start(owned.ErrExited)), exitUnreachable},
		{"interrupted", cancelled, errors.New("--target-cmd: interrupted while waiting"), exitInterrupted},
		{"interrupted beats the kind", cancelled, start(owned.ErrNeverReady), exitInterrupted},
		{"not a start error", context.Background(), errors.New("--target-cmd: the command is empty"), exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := startExit(tt.ctx, tt.err); got != tt.want {
				t.Errorf("startExit = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOwnedTargetFlags: the one flag set's checks, with and without a
// scenario that may stand in for --target-cmd and --target (run, conform).
func TestOwnedTargetFlags(t *testing.T) {
	tests := []struct {
		name        string
		scenario    bool
		args        []string
		scenarioCmd string
		target      string
		want        string // substring of the error; "" for none
	}{
		{"none", false, nil, "", "", ""},
		{"command and target", false, []string{"--target-cmd", "srv"}, "", "127.0.0.1:1", ""},
		{"empty command", false, []string{"--target-cmd", " "}, "", "127.0.0.1:1", "--target-cmd is empty"},
		{"empty command, scenario has one", true, []string{"--target-cmd", ""}, "srv", "127.0.0.1:1", "--target-cmd is empty"},
		{"ready timeout 0", false, []string{"--target-ready-timeout", "0s"}, "", "", "--target-ready-timeout 0s must be above 0"},
		{"negative ready timeout", true, []string{"--target-ready-timeout", "-1s"}, "", "", "--target-ready-timeout -1s must be above 0"},
		{"no target", false, []string{"--target-cmd", "srv"}, "", "", "--target-cmd needs --target HOST:PORT: the address"},
		{"no target, run", true, []string{"--target-cmd", "srv"}, "", "", "--target-cmd needs --target HOST:PORT (or the scenario's target): the address"},
		{"scenario command, no target", true, nil, "srv", "", "--target-cmd needs --target HOST:PORT (or the scenario's target)"},
		{"log alone", false, []string{"--target-log", "x.log"}, "", "127.0.0.1:1", "--target-log needs --target-cmd"},
		{"log alone, run", true, []string{"--target-log", "x.log"}, "", "127.0.0.1:1", "--target-log needs --target-cmd (or the scenario's target_cmd)"},
		{"log with the scenario's command", true, []string{"--target-log", "x.log"}, "srv", "127.0.0.1:1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			f := addOwnedTargetFlags(fs, tt.scenario)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := f.check()
			if err == nil {
				err = f.need(f.command(tt.scenarioCmd), tt.target)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestOwnedTargetFlagsHelp: both commands describe the flags in the same
// words; run only adds that --target-cmd overrides the scenario's.
func TestOwnedTargetFlagsHelp(t *testing.T) {
	help := func(scenario bool) map[string]string {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		addOwnedTargetFlags(fs, scenario)
		m := map[string]string{}
		fs.VisitAll(func(f *flag.Flag) { m[f.Name] = f.Usage })
		return m
	}
	conform, run := help(false), help(true)
	for _, name := range []string{"target-cmd", "target-ready-timeout", "target-log"} {
		c, r := conform[name], run[name]
		if c == "" || !strings.HasPrefix(r, c) {
			t.Errorf("--%s: conform %q, run %q", name, c, r)
		}
	}
	if want := conform["target-cmd"] + "; overrides the scenario's target_cmd"; run["target-cmd"] != want {
		t.Errorf("run --target-cmd: %q", run["target-cmd"])
	}
}
