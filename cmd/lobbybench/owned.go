package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/result"
)

// ownedTargetFlags are the flags with which lobbybench starts and owns the
// server under test, the same for conform and run: --target-cmd,
// --target-ready-timeout, --target-log.
type ownedTargetFlags struct {
	cmd          string
	cmdGiven     bool
	readyTimeout time.Duration
	log          string
	// scenario: a scenario's target_cmd and target may stand in for
	// --target-cmd and --target (run).
	scenario bool
}

func addOwnedTargetFlags(fs *flag.FlagSet, scenario bool) *ownedTargetFlags {
	f := &ownedTargetFlags{scenario: scenario}
	help := fmt.Sprintf("start the server under test with `COMMAND ARGS…` (/bin/sh -c, exec before the server's command: 'exec ./srv', 'cd d && VAR=x exec ./srv'; in its own process group): wait until it answers at --target, watch and sample it, stop it at the end (SIGTERM, SIGKILL after %v)", owned.DefaultGrace)
	if scenario {
		help += "; overrides the scenario's target_cmd"
	}
	fs.Func("target-cmd", help, func(s string) error {
		f.cmd, f.cmdGiven = s, true
		return nil
	})
	fs.DurationVar(&f.readyTimeout, "target-ready-timeout", owned.DefaultReadyTimeout, "how long the --target-cmd server may take to answer at --target before lobbybench gives up (a slow start is not a failure)")
	fs.StringVar(&f.log, "target-log", "", "write everything the --target-cmd server prints (stdout and stderr) to `FILE`")
	return f
}

// or names the scenario's stand-in for a flag, when there is one.
func (f *ownedTargetFlags) or(key string) string {
	if f.scenario {
		return " (or the scenario's " + key + ")"
	}
	return ""
}

// check reports a usage problem with the flags' own values.
func (f *ownedTargetFlags) check() error {
	if f.cmdGiven && strings.TrimSpace(f.cmd) == "" {
		return errors.New("--target-cmd is empty (want the command that starts the server, e.g. 'lobbybench serve --udp-lobby-addr 127.0.0.1:9000')")
	}
	if f.readyTimeout <= 0 {
		return fmt.Errorf("--target-ready-timeout %v must be above 0", f.readyTimeout)
	}
	return nil
}

// command is the command that starts the target: --target-cmd, else
// scenarioCmd (a scenario's target_cmd); "" when neither.
func (f *ownedTargetFlags) command(scenarioCmd string) string {
	if strings.TrimSpace(f.cmd) != "" {
		return f.cmd
	}
	return scenarioCmd
}

// need reports what the flags lack once the command (see command) and the
// target are known.
func (f *ownedTargetFlags) need(command, target string) error {
	switch {
	case command == "" && f.log != "":
		return errors.New("--target-log needs --target-cmd" + f.or("target_cmd"))
	case command != "" && target == "":
		return errors.New("--target-cmd needs --target HOST:PORT" + f.or("target") + ": the address the started server answers at")
	}
	return nil
}

// ownedTarget is a server lobbybench started (--target-cmd) and owns until
// Stop.
type ownedTarget struct {
	p    *owned.Process
	log  *os.File
	e    *env
	name string // the lobbybench command, for messages

	stopOnce sync.Once
	mu       sync.Mutex
	how      string // how the stop went (result.TargetProcess.Stop)
}

// startOwnedTarget starts command and waits until ready, the protocol's
// reachability check of target, answers; it then owns the server: a
// third Ctrl-C kills it, and a first one says it will be stopped. On
// failure it says why on stderr and returns nil and the exit code
// (startExit).
func startOwnedTarget(ctx context.Context, e *env, name string, f *ownedTargetFlags, command, target string, ready func(context.Context) error) (*ownedTarget, int) {
	spec := owned.Spec{Command: command, Addr: target, Ready: ready, ReadyTimeout: f.readyTimeout}
	t := &ownedTarget{e: e, name: name}
	if f.log != "" {
		lf, err := os.Create(f.log)
		if err != nil {
			return nil, usageErr(e, name, "--target-log: %v", err)
		}
		t.log, spec.Log = lf, lf
	}
	script, _, err := owned.Script(command)
	if err != nil {
		t.closeLog()
		return nil, usageErr(e, name, "%v", err)
	}
	from := "--target-cmd"
	if !f.cmdGiven {
		from = "the scenario's target_cmd"
	}
	fmt.Fprintf(e.stderr, "lobbybench %s: starting the target (%s): /bin/sh -c %s; waiting up to %v for it to answer at %s\n", name, from, shellQuote(script), f.readyTimeout, target)
	p, err := owned.Start(ctx, spec)
	if err != nil {
		t.closeLog()
		fmt.Fprintf(e.stderr, "lobbybench %s: %v\n", name, err)
		e.notStarted = err.Error()
		return nil, startExit(ctx, err)
	}
	t.p = p
	e.setOnQuit(t.Kill)
	note := e.stopNoteFunc()
	e.setStopNote(func() string {
		s := "finishing up"
		if note != nil {
			s = note()
		}
		return s + "; then the --target-cmd server is stopped"
	})
	return t, exitOK
}

// shellQuote quotes s as one word for a POSIX shell, so that the command
// lobbybench prints is the one it runs.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// startExit is the exit code of a start that failed with err: 5 when
// interrupted; 2 when the command is wrong (not found, not executable) or
// cannot be used here; 3 when the server could not be brought up (it
// exited first, never answered, or its port was taken).
func startExit(ctx context.Context, err error) int {
	var se *owned.StartError
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.Is(err, owned.ErrNotFound):
		return exitUsage
	case errors.As(err, &se):
		return exitUnreachable
	}
	return exitUsage
}

func (t *ownedTarget) closeLog() {
	if t.log != nil {
		t.log.Close()
		t.log = nil
	}
}

// Stop ends the server once (SIGTERM to its group, SIGKILL after the
// grace), closes --target-log, says on stderr how it went and returns
// that ("" when it had ended on its own).
func (t *ownedTarget) Stop() string {
	t.stopOnce.Do(func() {
		how := t.p.Shutdown()
		t.closeLog()
		t.e.setOnQuit(nil)
		if how != "" {
			fmt.Fprintf(t.e.stderr, "lobbybench %s: --target-cmd server: %s\n", t.name, how)
		}
		t.mu.Lock()
		t.how = how
		t.mu.Unlock()
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.how
}

// Kill sends SIGKILL to the server's process group at once, without
// waiting: lobbybench is about to exit on the spot (a third Ctrl-C).
func (t *ownedTarget) Kill() { _ = t.p.Signal(syscall.SIGKILL) }

// Snapshot is the server's telemetry so far, with how the stop went once
// it is stopped.
func (t *ownedTarget) Snapshot() *result.TargetProcess {
	s := engine.TargetProcess(t.p.Snapshot(), "")
	t.mu.Lock()
	s.Stop = t.how
	t.mu.Unlock()
	return s
}
