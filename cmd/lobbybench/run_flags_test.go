package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestRunFromFlagsUsage checks run's errors for a scenario made of flags:
// exit 2, nothing run, each problem naming its flag.
func TestRunFromFlagsUsage(t *testing.T) {
	file := writeScenario(t, shortRun)
	tests := []struct {
		name string
		args []string
		want []string // lines of stderr, each a substring
	}{
		{"both a file and a flow", []string{"--protocol", "udp-lobby", "--flow", "list_rooms", "--rate", "1/s", "--duration", "1s", file},
			[]string{"lobbybench run: --protocol and --flow make the scenario; give them or a SCENARIO.yaml (" + file + "), not both"}},
		{"no protocol", []string{"--flow", "list_rooms", "--rate", "1/s", "--duration", "1s"},
			[]string{"lobbybench run: --protocol is needed to run without a scenario file (" + strings.Join(scenario.ProtocolNames()[:len(scenario.ProtocolNames())-1], ", ") + " or "}}, // the registered protocols
		{"unknown step", []string{"--protocol", "udp-lobby", "--flow", "list_room", "--rate", "1/s", "--duration", "1s"},
			[]string{`lobbybench run: --flow: unknown step "list_room" (did you mean "list_rooms"?)`}},
		{"a bare think", []string{"--protocol", "tcp-lobby", "--flow", "connect,think", "--clients", "2", "--duration", "1s"},
			[]string{"lobbybench run: --flow: think: give exactly one of", "lobbybench run: --flow: think cannot run bare (tcp-lobby steps that cannot: "}},
		{"a flag of another protocol", []string{"--protocol", "tcp-lobby", "--flow", "connect", "--clients", "2", "--duration", "1s", "--instance-ports", "9000-9063"},
			[]string{"lobbybench run: --instance-ports applies to udp-lobby only, not tcp-lobby"}},
		{"virtual flows on tcp-lobby", []string{"--protocol", "tcp-lobby", "--flow", "connect", "--clients", "2", "--duration", "1s", "--flows", "virtual"},
			[]string{"lobbybench run: --flows virtual: virtual flows are UDP only, and tcp-lobby runs over TCP: use sockets"}},
		{"virtual flows to a target off loopback", []string{"--protocol", "udp-lobby", "--flow", "list_rooms", "--rate", "1/s", "--duration", "1s", "--flows", "virtual", "--target", "192.0.2.7:7777"},
			[]string{"lobbybench run: --flows virtual: the target 192.0.2.7 is not on this machine's loopback: a virtual flow's address lies in 127.0.0.0/8, which only a server on 127.0.0.0/8 can answer"}},
		{"unknown flows mode", []string{"--protocol", "udp-lobby", "--flow", "list_rooms", "--rate", "1/s", "--duration", "1s", "--flows", "virtua"},
			[]string{`lobbybench run: invalid value "virtua" for --flows: unknown value "virtua" (want one of sockets, virtual, auto)`}},
		{"neither", nil, []string{"lobbybench run: want exactly one SCENARIO.yaml argument, got 0 (or --protocol and --flow to run without one)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"run", "--quiet"}, tc.args...)...)
			if code != exitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing run", code, out, exitUsage)
			}
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("stderr %q: want %d lines", errs, len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.Contains(lines[i], want) {
					t.Errorf("stderr line %q lacks %q", lines[i], want)
				}
			}
		})
	}
}

// TestRunFromFlagsEmbedded is a short run made of flags against the
// embedded server: exit 0, the result named as the command line's; its
// --csv is the per-second series, as 'report csv' renders the JSON.
func TestRunFromFlagsEmbedded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, cs := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	code, out, errs := runCLI(t, "run", "--quiet", "--json", js, "--csv", cs, "--protocol", "udp-lobby", "--flow", "create_room,leave", "--rate", "20/s", "--duration", "500ms", "--seed", "5")
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s\nstdout %s", code, errs, out)
	}
	if !strings.HasPrefix(out, "Run "+scenario.CommandLine+" against embedded ") {
		t.Errorf("stdout does not name the run as the command line's:\n%s", out)
	}
	run := readRunFile(t, js)
	if run.Scenario != scenario.CommandLine || run.Totals.SessionsStarted == 0 || run.Totals.Failures != 0 || len(run.Steps) != 2 {
		t.Errorf("result %q: totals %+v, steps %+v", run.Scenario, run.Totals, run.Steps)
	}
	if len(run.ShardRuns) != 1 || run.ShardRuns[0].Seed != 5 {
		t.Errorf("shard runs %+v: want one, seed 5 (--seed applies as to a file)", run.ShardRuns)
	}
	checkRunCSV(t, js, cs)
}

func checkRunCSV(t *testing.T, js, cs string) {
	t.Helper()
	written, err := os.ReadFile(cs)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(written)).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "verdict" || rows[0][1] != "second" {
		t.Fatalf("--csv: %v\n%s", err, written)
	}
	code, out, errs := runCLI(t, "report", "csv", js)
	if code != exitOK || out != string(written) {
		t.Errorf("report csv: exit %d, stderr %s; its output differs from run --csv's:\n%s\nvs\n%s", code, errs, out, written)
	}
}

// readRunFile reads the run result a --json wrote.
func readRunFile(t *testing.T, path string) *result.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := result.ReadRun(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return run
}
