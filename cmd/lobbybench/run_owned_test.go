//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
)

// freeUDPPort returns a loopback UDP address free a moment ago: the
// owned server must be told where to listen before it starts.
func freeUDPPort(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", quietport.Pick(t, "udp", 1))
}

// serveCmd is a --target-cmd running this test binary as `lobbybench
// serve` with only its UDP lobby at addr (env: more VAR=value first).
func serveCmd(t *testing.T, addr string, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("env %s=1 %s %s serve --udp-lobby-addr %s --base-port 0 --no-tcp-lobby --no-leviathan",
		asMainEnv, strings.Join(env, " "), exe, addr)
}

// ownedScenario is a short open-model udp-lobby run against addr.
func ownedScenario(t *testing.T, addr, duration string) string {
	return writeScenario(t, fmt.Sprintf("protocol: udp-lobby\ntarget: %s\nseed: 5\ndefaults: {timeout: 300ms, retries: 0}\nload: {rate: 150/s, duration: %s, max_clients: 50}\nflows:\n  - name: poll\n    steps: [list_rooms]\n", addr, duration))
}

// readOwnedRun reads a run's JSON result.
func readOwnedRun(t *testing.T, path string) *result.Run {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.ReadRun(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runSub runs lobbybench as a real process (killed after a minute) and
// returns its exit code, stdout and stderr.
func runSub(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := lobbybenchCmd(t, nil, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// gone reports whether no process has the id any more.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestRunOwnsTarget: `run --target-cmd` starts `lobbybench serve`, runs
// against it and stops it cleanly at the end (also with --workers,
// whose parent owns it); the result has plausible telemetry, every
// summary says what the load cost the server, and --target-log has its
// output.
func TestRunOwnsTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra []string
		// sub: run lobbybench as a real process, as --workers needs
		// (its workers are this binary run as lobbybench: in-process,
		// they would run the tests instead).
		sub bool
	}{
		{"one process", nil, false},
		{"workers", []string{"--workers", "2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeUDPPort(t)
			dir := t.TempDir()
			js, md, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md"), filepath.Join(dir, "server.log")
			args := append([]string{"run", "--quiet", "--target-cmd", serveCmd(t, addr), "--target-log", logf, "--json", js, "--markdown", md}, tt.extra...)
			args = append(args, ownedScenario(t, addr, "1500ms"))
			var code int
			var out, errs string
			if tt.sub {
				code, out, errs = runSub(t, args...)
			} else {
				code, out, errs = runCLI(t, args...)
			}
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			r := readOwnedRun(t, js)
			tp := r.TargetProcess
			if tp == nil {
				t.Fatal("no target_process in the JSON")
			}
			c, _ := r.TargetCost()
			if tp.CPUNS <= 0 || c.PeakRSSBytes < 1<<20 || c.PeakThreads < 1 || c.PeakOpenFDs < 3 || c.Samples < 1 || r.Totals.Requests == 0 {
				t.Errorf("implausible telemetry: %+v (requests %d)", c, r.Totals.Requests)
			}
			if len(tp.PIDs) != 1 || tp.Starts != 1 {
				t.Fatalf("pids %v, starts %d", tp.PIDs, tp.Starts)
			}
			if tp.Stop != "stopped on SIGTERM: exited with status 0" || len(tp.Exits) != 1 || tp.Exits[0] != "exited with status 0" {
				t.Errorf("not a clean stop: stop %q, exits %q", tp.Stop, tp.Exits)
			}
			if !strings.Contains(errs, "lobbybench run: --target-cmd server: stopped on SIGTERM: exited with status 0") {
				t.Errorf("stderr does not say it stopped cleanly:\n%s", errs)
			}
			if !gone(tp.PIDs[0]) {
				t.Errorf("the server (pid %d) still runs", tp.PIDs[0])
			}
			if len(r.Outages) > 0 {
				t.Errorf("outages %+v", r.Outages)
			}
			for where, text := range map[string]string{"terminal": out, "Markdown": mustRead(t, md)} {
				if !strings.Contains(text, "Target process (what the load cost the server)") || !strings.Contains(text, " per 1,000 requests (") || !strings.Contains(text, "peak RSS ") {
					t.Errorf("%s lacks the cost of the load:\n%s", where, text)
				}
			}
			if log := mustRead(t, logf); !strings.Contains(log, addr) {
				t.Errorf("--target-log lacks the server's address %s:\n%s", addr, log)
			}
		})
	}
}

// TestRunOwnedTargetAborts: a server that aborts mid-run makes the run
// exit 7 with TARGET DOWN first, its exit in words and its last output
// lines, whether the watchdog runs or not (the run then adds the
// outage itself).
func TestRunOwnedTargetAborts(t *testing.T) {
	t.Parallel()
	for _, wd := range []string{"50ms", "0"} {
		t.Run("watchdog "+wd, func(t *testing.T) {
			addr := freeUDPPort(t)
			js := filepath.Join(t.TempDir(), "r.json")
			code, out, errs := runCLI(t, "run", "--quiet", "--watchdog", wd, "--grace", "300ms", "--json", js,
				"--target-cmd", serveCmd(t, addr, abortEnv+"=1s"), ownedScenario(t, addr, "2500ms"))
			if code != exitTargetDown {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitTargetDown, out, errs)
			}
			r := readOwnedRun(t, js)
			last := ""
			for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
				if strings.HasPrefix(l, "lobbybench run: TARGET DOWN") {
					last = l
				}
			}
			for where, text := range map[string]string{"headline": r.Headline().Text, "stderr": strings.TrimPrefix(last, "lobbybench run: "), "stdout first line": strings.SplitN(out, "\n", 2)[0]} {
				if !strings.HasPrefix(text, "TARGET DOWN · at +") || !strings.Contains(text, "(exited: killed by SIGABRT") {
					t.Errorf("%s: %q", where, text)
				}
			}
			if !strings.Contains(out, "its last output:\n    | ") {
				t.Errorf("the terminal does not show the server's last lines:\n%s", out)
			}
			if len(r.Outages) != 1 || r.Outages[0].Kind != result.DownExited || len(r.Outages[0].Output) == 0 {
				t.Errorf("outages %+v", r.Outages)
			}
			if tp := r.TargetProcess; tp == nil || tp.Stop != "" || len(tp.Exits) != 1 || tp.Exits[0] != "killed by SIGABRT" {
				t.Errorf("target_process %+v", tp)
			}
		})
	}
}

// TestRunOwnedTargetFails: a command that cannot be started, ends at
// once, never answers, or a port something else already answers at:
// each a clear message and its exit code, and nothing is run.
func TestRunOwnedTargetFails(t *testing.T) {
	t.Parallel()
	srv := startRefPart(t, udpwire.ProtocolName)
	taken := srv.Addr(udpwire.ProtocolName).String()
	free := freeUDPPort(t)
	tests := []struct {
		name   string
		addr   string
		args   []string
		code   int
		stderr []string
	}{
		{"not found", free, []string{"--target-cmd", "no-such-lobbyd-9x --port 1"}, exitUsage,
			[]string{"starting the target (--target-cmd): /bin/sh -c 'exec no-such-lobbyd-9x --port 1'", "command not found: no-such-lobbyd-9x"}},
		{"not found after cd", free, []string{"--target-cmd", "cd / && LOBBY=1 no-such-lobbyd-9x"}, exitUsage,
			[]string{"/bin/sh -c 'cd / && LOBBY=1 exec no-such-lobbyd-9x'", "command not found: one of its commands", "no-such-lobbyd-9x: not found"}},
		{"list ending in a pipeline", free, []string{"--target-cmd", "cd / && ./srv | tee log"}, exitUsage,
			[]string{`--target-cmd "cd / && ./srv | tee log": the last command is not a simple command`}},
		{"exits at once", free, []string{"--target-cmd", "sh -c 'echo fatal: no config file >&2; exit 3'"}, exitUnreachable,
			[]string{"exited with status 3", "before it answered at " + free, "fatal: no config file"}},
		{"never ready", free, []string{"--target-cmd", "sleep 30", "--target-ready-timeout", "400ms"}, exitUnreachable,
			[]string{"never became ready: no answer at " + free + " within 400ms", "checks; the last said"}},
		{"port in use", taken, []string{"--target-cmd", "sleep 30"}, exitUnreachable,
			[]string{"port already in use: something already answers at " + taken}},
		{"empty command", free, []string{"--target-cmd", " "}, exitUsage, []string{"--target-cmd is empty"}},
		{"bad ready timeout", free, []string{"--target-cmd", "sleep 1", "--target-ready-timeout", "0s"}, exitUsage, []string{"--target-ready-timeout 0s must be above 0"}},
		{"log without command", free, []string{"--target-log", filepath.Join(t.TempDir(), "x.log")}, exitUsage, []string{"--target-log needs --target-cmd"}},
		{"worker", free, []string{"--worker", "--target-cmd", "sleep 1"}, exitUsage, []string{"--target-cmd cannot be used with --worker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := filepath.Join(t.TempDir(), "r.json")
			args := append(append([]string{"run", "--quiet", "--json", js}, tt.args...), ownedScenario(t, tt.addr, "500ms"))
			code, out, errs := runCLI(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
			_, err := os.Stat(js)
			switch {
			case tt.code == exitUsage && err == nil:
				t.Error("a result was written for a usage error")
			case tt.code == exitUnreachable:
				// Written, so that no earlier run's result is left there.
				if hl := readOwnedRun(t, js).Headline(); hl.Status != result.StatusUnreachable || !strings.HasSuffix(hl.Text, "nothing was measured") {
					t.Errorf("result: %+v, want UNREACHABLE, nothing measured", hl)
				}
			}
		})
	}
}

// TestRunOwnedNeedsTarget: the started server's address must be known.
func TestRunOwnedNeedsTarget(t *testing.T) {
	sc := writeScenario(t, "protocol: udp-lobby\nload: {rate: 10/s, duration: 200ms}\nflows:\n  - name: poll\n    steps: [list_rooms]\n")
	code, _, errs := runCLI(t, "run", "--quiet", "--target-cmd", "sleep 1", sc)
	if code != exitUsage || !strings.Contains(errs, "--target-cmd needs --target") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestRunOwnedDrill: a scenario's recovery drill through the CLI. A
// SIGKILL the target_cmd server is restarted from is a recovered fault,
// not TARGET DOWN: exit 0, the fault recovered in the JSON, two starts.
// A drill is judged by the one process that owns the server, so
// --workers is a usage error naming it, before anything starts.
func TestRunOwnedDrill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra []string
		code  int
	}{
		{"recovers", nil, exitOK},
		{"workers", []string{"--workers", "2"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeUDPPort(t)
			js := filepath.Join(t.TempDir(), "r.json")
			sc := writeScenario(t, fmt.Sprintf("protocol: udp-lobby\ntarget: %s\ntarget_cmd: %q\nseed: 5\n"+
				"defaults: {timeout: 300ms, retries: 0}\nload: {rate: 100/s, duration: 4s, max_clients: 50}\n"+
				"flows:\n  - name: poll\n    steps: [list_rooms]\n"+
				"faults: [{at: 1s, kill: SIGKILL, restart_after: 200ms}]\n"+
				// The requests the kill fails are the drill's finding,
				// judged by it: no error budget on top.
				"default_error_gate: false\n", addr, serveCmd(t, addr)))
			args := append(append([]string{"run", "--quiet", "--grace", "300ms", "--json", js}, tt.extra...), sc)
			code, out, errs := runCLI(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			if tt.code == exitUsage {
				if !strings.Contains(errs, "--workers") {
					t.Errorf("the usage error does not name --workers:\n%s", errs)
				}
				if _, err := os.Stat(js); err == nil {
					t.Error("a result was written though nothing ran")
				}
				return
			}
			r := readOwnedRun(t, js)
			if strings.HasPrefix(r.Headline().Text, "TARGET DOWN") {
				t.Errorf("a recovered fault is TARGET DOWN: %q", r.Headline().Text)
			}
			if r.Drill == nil || len(r.Drill.Faults) != 1 {
				t.Fatalf("drill %+v", r.Drill)
			}
			if f := r.Drill.Faults[0]; !f.Recovered || f.NotApplied || f.Error != "" {
				t.Errorf("fault not recovered: %+v", f)
			}
			tp := r.TargetProcess
			if tp == nil || tp.Starts != 2 || len(tp.PIDs) != 2 {
				t.Fatalf("target_process %+v", tp)
			}
			if len(tp.Exits) != 2 || tp.Exits[0] != "killed by SIGKILL" || tp.Stop != "stopped on SIGTERM: exited with status 0" {
				t.Errorf("exits %q, stop %q", tp.Exits, tp.Stop)
			}
			for _, pid := range tp.PIDs {
				if !gone(pid) {
					t.Errorf("server pid %d still runs", pid)
				}
			}
		})
	}
}
