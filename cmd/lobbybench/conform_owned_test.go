package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
)

// fakeCmd is the --target-cmd line that runs the fake server mode at
// addr, with env added ("KEY=value").
func fakeCmd(t *testing.T, mode, addr string, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("env %s=%s %s '%s' %s", fakeEnv, mode, strings.Join(env, " "), exe, addr)
}

// freeTCP returns a loopback TCP address nothing listens on (freePorts):
// an owned server binds it a moment later.
func freeTCP(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", quietport.Pick(t, "tcp", 1))
}

func readConformJSON(t *testing.T, path string) *result.Conform {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c result.Conform
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &c
}

func caseByID(c *result.Conform, id string) *result.Case {
	for i := range c.Cases {
		if c.Cases[i].ID == id {
			return &c.Cases[i]
		}
	}
	return nil
}

// TestConformTargetCmdUsage: --target-cmd's flags are checked before
// anything starts, and so is the command (exit 2); a server that cannot be
// brought up is a clear error naming why, exit 3.
func TestConformTargetCmdUsage(t *testing.T) {
	t.Parallel()
	ref := startConformRef(t).Addr(tcpwire.ProtocolName).String()
	tests := []struct {
		name   string
		args   func(t *testing.T) []string
		code   int
		stderr []string
	}{
		{"no --target", func(t *testing.T) []string { return []string{"--target-cmd", "true"} },
			exitUsage, []string{"--target-cmd needs --target HOST:PORT"}},
		{"bad ready timeout", func(t *testing.T) []string {
			return []string{"--target", freeTCP(t), "--target-cmd", "true", "--target-ready-timeout", "0s"}
		}, exitUsage, []string{"--target-ready-timeout 0s must be above 0"}},
		{"log without command", func(t *testing.T) []string {
			return []string{"--target", freeTCP(t), "--target-log", filepath.Join(t.TempDir(), "x.log")}
		}, exitUsage, []string{"--target-log needs --target-cmd"}},
		{"command not found", func(t *testing.T) []string {
			return []string{"--target", freeTCP(t), "--target-cmd", "no-such-lobby-server-xyz --port 1"}
		}, exitUsage, []string{"command not found: no-such-lobby-server-xyz", "status 127"}},
		{"exits at once", func(t *testing.T) []string {
			a := freeTCP(t)
			return []string{"--target", a, "--target-cmd", fakeCmd(t, "exit3", a)}
		}, exitUnreachable, []string{"exited with status 3", "before it answered at", "fatal: no config file"}},
		{"never ready", func(t *testing.T) []string {
			a := freeTCP(t)
			return []string{"--target", a, "--target-cmd", fakeCmd(t, "mute", a), "--target-ready-timeout", "1s"}
		}, exitUnreachable, []string{"never became ready: no answer at", "within 1s", "checks; the last said:", "lobbybench stopped it"}},
		{"port already in use", func(t *testing.T) []string {
			return []string{"--target", ref, "--target-cmd", fakeCmd(t, "tcp", ref)}
		}, exitUnreachable, []string{"port already in use: something already answers at " + ref}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"conform", "--protocol", "tcp-lobby", "--cases", "tcp-lobby/5.1/1"}, tt.args(t)...)
			code, out, errs := runCLI(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, out, errs)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// TestConformTargetCmdSlowStart: a server that takes seconds to answer
// is waited for; a slow start is no failure.
func TestConformTargetCmdSlowStart(t *testing.T) {
	t.Parallel()
	a := freeTCP(t)
	code, out, errs := runCLI(t, "conform", "--protocol", "tcp-lobby", "--cases", "tcp-lobby/5.1/1",
		"--target", a, "--target-cmd", fakeCmd(t, "slow-tcp", a))
	if code != exitOK || !strings.Contains(out, "✔ tcp-lobby/5.1/1") || !strings.Contains(out, "PASS ·") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// TestConformTargetCmdCrash: an owned server that dies on a message (by
// SIGABRT, after saying why) or hangs on it is reported with how it
// ended and its last output, restarted, and the suite goes on: the case
// that killed it fails naming the death, the later case runs and passes.
// A hung server is killed (SIGKILL to its group) before the restart.
func TestConformTargetCmdCrash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, mode string
		kind       string // the outage's
		exit       string // how the first process ended
		output     string // a line of its output the terminal shows
	}{
		{"abort", "tcp-abort=READY_REQ", result.DownExited, "killed by SIGABRT", "lobby: assertion failed in handle_ready_req: player->room != NULL"},
		{"hang", "tcp-hang=READY_REQ", result.DownSilent, "killed by SIGKILL", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := freeTCP(t)
			dir := t.TempDir()
			js, log := filepath.Join(dir, "c.json"), filepath.Join(dir, "server.log")
			code, out, errs := runCLI(t, "conform", "--protocol", "tcp-lobby", "--cases", "tcp-lobby/5.3/1,tcp-lobby/5.1/7",
				"--timeout", "500ms", "--target", a, "--target-cmd", fakeCmd(t, tt.mode, a), "--target-log", log, "--json", js)
			if code != exitTargetDown {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitTargetDown, out, errs)
			}
			lead := "TARGET DOWN · the server stopped answering (" + (result.Outage{Kind: tt.kind, Exit: tt.exit}).What() + ") during tcp-lobby/5.3/1"
			if !strings.HasPrefix(out, lead) {
				t.Errorf("terminal does not lead with %q:\n%s", lead, out)
			}
			if !strings.Contains(out, "✘ tcp-lobby/5.3/1") || !strings.Contains(out, "✔ tcp-lobby/5.1/7") || strings.Contains(out, "⊘ ") {
				t.Errorf("want the killing case failed, the later one passed, none not run:\n%s", out)
			}
			if tt.output != "" && !strings.Contains(out, "  output: "+tt.output) {
				t.Errorf("terminal lacks the server's last output %q:\n%s", tt.output, out)
			}
			doc := readConformJSON(t, js)
			if len(doc.Outages) != 1 {
				t.Fatalf("outages %+v", doc.Outages)
			}
			o := doc.Outages[0]
			if o.Kind != tt.kind || !o.Back || !slices.Equal(o.During, []string{"tcp-lobby/5.3/1"}) {
				t.Errorf("outage %+v", o)
			}
			if tt.kind == result.DownExited && (o.Exit != tt.exit || !slices.Contains(o.Output, tt.output)) {
				t.Errorf("outage exit %q output %q", o.Exit, o.Output)
			}
			k := caseByID(doc, "tcp-lobby/5.3/1")
			if k == nil || k.Verdict != result.VerdictFail || !strings.Contains(k.Actual, "during this case") {
				t.Errorf("killing case %+v", k)
			} else if tt.output != "" && !strings.Contains(k.Actual, "the process "+tt.exit+"; its last output: ") {
				t.Errorf("killing case does not name the death and its output: %q", k.Actual)
			}
			tp := doc.TargetProcess
			if tp == nil || tp.Starts != 2 || len(tp.PIDs) != 2 || len(tp.Exits) != 2 || tp.Exits[0] != tt.exit {
				t.Fatalf("target process %+v", tp)
			}
			if !strings.Contains(out, "target process: 2 starts, exits: "+tt.exit+", ") {
				t.Errorf("terminal lacks the target process summary:\n%s", out)
			}
			b, err := os.ReadFile(log)
			if err != nil || strings.Count(string(b), "fake lobby listening on") != 2 {
				t.Errorf("--target-log: %v\n%s", err, b)
			}
		})
	}
}

// TestConformTargetCmdCulprit: when the owned server dies with several
// cases in flight (the concurrent phase), each is re-run alone on a
// fresh server: the one that kills it is named and fails with the
// death, the others take the verdict of their solo run, and the cases
// of the batch not yet started run (not "not run").
func TestConformTargetCmdCulprit(t *testing.T) {
	t.Parallel()
	a := freeTCP(t)
	js := filepath.Join(t.TempDir(), "c.json")
	// Every frame is delayed 100ms, so no case has ended when CONNECT_REQ,
	// sent right after tcp-lobby/5.2/1 connects, kills the server.
	code, out, errs := runCLI(t, "conform", "--protocol", "tcp-lobby", "--cases", "tcp-lobby/5.1,tcp-lobby/5.2",
		"--timeout", "2s", "--target", a, "--target-cmd", fakeCmd(t, "tcp-abort=CONNECT_REQ", a, fakeLatencyEnv+"=100ms"), "--json", js)
	if code != exitTargetDown {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitTargetDown, out, errs)
	}
	doc := readConformJSON(t, js)
	if len(doc.Outages) < 2 {
		t.Fatalf("want the crash and the culprit's solo crash, got outages %+v\n%s", doc.Outages, out)
	}
	o := doc.Outages[0]
	if len(o.During) < 2 || !slices.Contains(o.During, "tcp-lobby/5.2/1") || !slices.Equal(o.ReRunAlone, o.During) ||
		!slices.Equal(o.Culprits, []string{"tcp-lobby/5.2/1"}) {
		t.Fatalf("outage %+v\n%s", o, out)
	}
	if hl := doc.Headline().Text; !strings.Contains(hl, "; tcp-lobby/5.2/1 kills it alone") {
		t.Errorf("headline %q", hl)
	}
	if !strings.Contains(out, "re-run alone: "+strings.Join(o.During, ", ")+": tcp-lobby/5.2/1 kills it alone") {
		t.Errorf("terminal lacks the re-run line:\n%s", out)
	}
	for _, k := range doc.Cases {
		switch {
		case k.ID == "tcp-lobby/5.2/1":
			if k.Verdict != result.VerdictFail || !strings.HasPrefix(k.Actual, "the server died during this case, re-run alone: killed by SIGABRT; its last output: ") ||
				!strings.Contains(k.Actual, "assertion failed in handle_connect_req") {
				t.Errorf("culprit %s %q", k.Verdict, k.Actual)
			}
		case slices.Contains(o.During, k.ID):
			if k.Verdict != result.VerdictPass || len(k.Notes) == 0 || !strings.HasPrefix(k.Notes[0], "re-run alone after the server died (exited: killed by SIGABRT) while ") {
				t.Errorf("%s: %s %q %q", k.ID, k.Verdict, k.Actual, k.Notes)
			}
		case k.Verdict != result.VerdictPass:
			t.Errorf("%s, not in flight: %s %q", k.ID, k.Verdict, k.Actual)
		}
	}
	if tp := doc.TargetProcess; tp == nil || tp.Starts != 3 || tp.Exits[0] != "killed by SIGABRT" || tp.Exits[1] != "killed by SIGABRT" {
		t.Errorf("target process %+v", tp)
	}
}

// TestConformTargetCmdServe: lobbybench's own serve as the owned target:
// the suite passes, the telemetry is plausible and it stops cleanly.
func TestConformTargetCmdServe(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := freeTCP(t)
	js := filepath.Join(t.TempDir(), "c.json")
	cmd := fmt.Sprintf("env %s=1 '%s' serve --tcp-lobby-addr %s --udp-lobby-addr 127.0.0.1:0 --base-port 0 --leviathan-addr 127.0.0.1:0 --countdown-interval 20ms", asMainEnv, exe, a)
	code, out, errs := runCLI(t, "conform", "--protocol", "tcp-lobby", "--cases", "tcp-lobby/5.1,tcp-lobby/5.3",
		"--target", a, "--target-cmd", cmd, "--json", js)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if !strings.Contains(errs, "lobbybench conform: --target-cmd server: stopped on SIGTERM: exited with status 0") {
		t.Errorf("stderr does not say it stopped cleanly:\n%s", errs)
	}
	tp := readConformJSON(t, js).TargetProcess
	if tp == nil || len(tp.Samples) == 0 {
		t.Fatalf("target process %+v", tp)
	}
	last := tp.Samples[len(tp.Samples)-1]
	if tp.Stop != "stopped on SIGTERM: exited with status 0" {
		t.Errorf("target_process.stop %q", tp.Stop)
	}
	if tp.Starts != 1 || !slices.Equal(tp.Exits, []string{"exited with status 0"}) || tp.CPUNS <= 0 || tp.PeakRSSBytes <= 1<<20 ||
		last.Threads < 1 || last.OpenFDs < 3 || last.RSSBytes <= 1<<20 {
		t.Errorf("implausible telemetry %+v", tp)
	}
	if !strings.Contains(out, "target process: 1 start, exits: exited with status 0; CPU ") {
		t.Errorf("terminal lacks the summary:\n%s", out)
	}
}

// TestConformTargetCmdInterrupt: Ctrl-C during the suite stops the owned
// server too: lobbybench exits 5 and the server's process is gone, also
// when a third Ctrl-C makes lobbybench quit on the spot while it waits
// for a server that ignores SIGTERM.
func TestConformTargetCmdInterrupt(t *testing.T) {
	t.Parallel()
	for _, ctrlC := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d Ctrl-C", ctrlC), func(t *testing.T) {
			a := freeTCP(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			env := []string{fakeLatencyEnv + "=200ms", fakePIDEnv + "=" + pidFile}
			if ctrlC == 3 {
				env = append(env, fakeNoTermEnv+"=1")
			}
			cmd := lobbybenchCmd(t, nil, "conform", "--protocol", "tcp-lobby", "--target", a,
				"--target-cmd", fakeCmd(t, "tcp", a, env...))
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			pid := 0
			for i := 0; i < 600 && pid == 0; i++ { // 60s at most
				time.Sleep(100 * time.Millisecond)
				b, _ := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(string(b))
			}
			if pid == 0 {
				t.Fatal("the server never started")
			}
			time.Sleep(time.Second) // into the suite (or still waiting for it: either way)
			for range ctrlC {
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("lobbybench did not exit after Ctrl-C:\n%s", out.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, out.String())
			}
			// Gone, or a zombie waiting for init once lobbybench quit.
			gone := false
			for i := 0; i < 100 && !gone; i++ { // 10s at most
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				_, rest, _ := strings.Cut(string(b), ") ")
				gone = errors.Is(err, os.ErrNotExist) || strings.HasPrefix(rest, "Z")
				if !gone {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if !gone {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the server (pid %d) still runs after lobbybench ended\n%s", pid, out.String())
			}
		})
	}
}
