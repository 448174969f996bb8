package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/reports"
)

// ownedTargetFlags are the flags with which lobbybench starts and owns the
// server under test: --target-cmd, --target-ready-timeout, --target-log.
// conform uses them; run may too.
type ownedTargetFlags struct {
	cmd          string
	readyTimeout time.Duration
	log          string
}

func addOwnedTargetFlags(fs *flag.FlagSet) *ownedTargetFlags {
	f := &ownedTargetFlags{}
	fs.StringVar(&f.cmd, "target-cmd", "", "`command` that starts the server under test (run as /bin/sh -c 'exec COMMAND'): lobbybench starts it, waits until it answers at --target, restarts it after a crash and stops it at the end (SIGTERM, SIGKILL after 5s)")
	fs.DurationVar(&f.readyTimeout, "target-ready-timeout", owned.DefaultReadyTimeout, "with --target-cmd: how long to wait for the started server to answer at --target (a slow start is not a failure)")
	fs.StringVar(&f.log, "target-log", "", "with --target-cmd: write the server's whole output (stdout and stderr) to `file`")
	return f
}

// check reports a usage problem with the flags; target is --target.
func (f *ownedTargetFlags) check(target string) error {
	if f.cmd == "" {
		switch {
		case f.log != "":
			return errors.New("--target-log needs --target-cmd")
		}
		return nil
	}
	if strings.TrimSpace(f.cmd) == "" {
		return errors.New("--target-cmd: the command is empty")
	}
	if target == "" {
		return errors.New("--target-cmd needs --target HOST:PORT: the address the started server answers at")
	}
	if f.readyTimeout <= 0 {
		return fmt.Errorf("--target-ready-timeout: must be positive, got %v", f.readyTimeout)
	}
	return nil
}

// ownedTarget is a server lobbybench started (--target-cmd) and owns until
// Stop: the conformance runner's TargetExit and RestartTarget hooks, and
// its telemetry.
type ownedTarget struct {
	p   *owned.Process
	log *os.File
}

// startOwnedTarget starts f.cmd and waits until ready, the protocol's
// reachability check of target, answers. Its errors are the *StartError
// of owned (command not found, exited at once, never ready, port in use)
// or a problem with --target-log.
func startOwnedTarget(ctx context.Context, f *ownedTargetFlags, target string, ready func(context.Context) error, epoch time.Time) (*ownedTarget, error) {
	spec := owned.Spec{Command: f.cmd, Addr: target, Ready: ready, ReadyTimeout: f.readyTimeout, Epoch: epoch}
	t := &ownedTarget{}
	if f.log != "" {
		lf, err := os.Create(f.log)
		if err != nil {
			return nil, fmt.Errorf("--target-log: %w", err)
		}
		t.log, spec.Log = lf, lf
	}
	p, err := owned.Start(ctx, spec)
	if err != nil {
		t.closeLog()
		return nil, err
	}
	t.p = p
	return t, nil
}

func (t *ownedTarget) closeLog() {
	if t.log != nil {
		t.log.Close()
		t.log = nil
	}
}

// TargetExit is conformance.Config.TargetExit: whether the current
// process has ended, how, and its last lines of output.
func (t *ownedTarget) TargetExit() (exit string, output []string, exited bool) {
	select {
	case <-t.p.Exited():
		return t.p.ExitStatus(), t.p.Tail(), true
	default:
		return "", nil, false
	}
}

// Restart is conformance.Config.RestartTarget: a process that still runs
// after an outage is hung, and is killed (SIGKILL to its group) before
// the command is started again and waited for.
func (t *ownedTarget) Restart(ctx context.Context) error {
	exited := t.p.Exited()
	select {
	case <-exited:
	default:
		if err := t.p.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, owned.ErrNotRunning) {
			return err
		}
		select {
		case <-exited:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return fmt.Errorf("--target-cmd: process %d not reaped 30s after SIGKILL", t.p.PID())
		}
	}
	return t.p.Restart(ctx)
}

// Stop ends the server (SIGTERM to its group, SIGKILL after the grace)
// and closes --target-log. It returns how the last process ended, and an
// error when it had to be killed.
func (t *ownedTarget) Stop() (string, error) {
	t.p.SampleNow()
	err := t.p.Stop()
	t.closeLog()
	return t.p.ExitStatus(), err
}

// Kill sends SIGKILL to the server's process group at once, without
// waiting: lobbybench is about to exit on the spot (a third Ctrl-C).
func (t *ownedTarget) Kill() { _ = t.p.Signal(syscall.SIGKILL) }

// Snapshot is the server's telemetry so far.
func (t *ownedTarget) Snapshot() *reports.TargetProcess {
	s := t.p.Snapshot()
	return &s
}
