package owned

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Fault is one recovery drill of a scenario's faults list: at At into the
// run, either Kill the server (SIGKILL or SIGTERM), wait for it to end and
// start it again after RestartAfter, or Stop it (SIGSTOP: a hang) for the
// Stop duration and then let it go on (SIGCONT).
type Fault struct {
	At           time.Duration
	Kill         string // "SIGKILL" or "SIGTERM" (see ParseKillSignal); empty for a stop
	RestartAfter time.Duration
	Stop         time.Duration // how long it stays stopped; 0 for a kill
}

// MaxFaultPause bounds restart_after and stop.
const MaxFaultPause = 10 * time.Minute

// FaultError is a problem with one fault, naming the key at fault (for the
// scenario's file:line) and, for problems between faults, which one.
type FaultError struct {
	Index int    // the fault's position in the list
	Key   string // "at", "kill", "stop", "restart_after", or "" for the fault as a whole
	Msg   string
}

func (e *FaultError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("faults[%d]: %s", e.Index, e.Msg)
	}
	return fmt.Sprintf("faults[%d].%s: %s", e.Index, e.Key, e.Msg)
}

// ParseKillSignal accepts SIGKILL, KILL, 9, SIGTERM, TERM and 15 (any
// case) and returns "SIGKILL" or "SIGTERM".
func ParseKillSignal(s string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "SIGKILL", "KILL", "9":
		return "SIGKILL", nil
	case "SIGTERM", "TERM", "15":
		return "SIGTERM", nil
	}
	return "", fmt.Errorf("unknown signal %q (want SIGKILL or SIGTERM; for a hang use stop: 5s)", s)
}

// String names the fault for reports ("SIGKILL at +20s, restart after
// 1s", "SIGSTOP at +40s for 5s").
func (f Fault) String() string {
	if f.Kill != "" {
		s := fmt.Sprintf("%s at +%s, then restart", f.Kill, f.At)
		if f.RestartAfter > 0 {
			s += fmt.Sprintf(" after %s", f.RestartAfter)
		}
		return s
	}
	return fmt.Sprintf("SIGSTOP at +%s for %s, then SIGCONT", f.At, f.Stop)
}

// CheckFaults validates each fault and the schedule: faults in time order,
// none starting while an earlier one still holds the server, none at or
// after the end of the run (runLength; 0 = unknown).
func CheckFaults(faults []Fault, runLength time.Duration) []*FaultError {
	var errs []*FaultError
	bad := func(i int, key, format string, args ...any) {
		errs = append(errs, &FaultError{Index: i, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	for i, f := range faults {
		switch {
		case f.Kill == "" && f.Stop == 0:
			bad(i, "", "give kill: SIGKILL|SIGTERM (crash and restart) or stop: DURATION (hang)")
		case f.Kill != "" && f.Stop != 0:
			bad(i, "", "give either kill: or stop:, not both")
		}
		if f.Kill != "" {
			if _, err := ParseKillSignal(f.Kill); err != nil {
				bad(i, "kill", "%v", err)
			}
		}
		if f.At < 0 {
			bad(i, "at", "must not be negative, got %s", f.At)
		}
		if runLength > 0 && f.At >= runLength {
			bad(i, "at", "%s is not before the end of the run (%s): the fault would never happen", f.At, runLength)
		}
		if f.RestartAfter < 0 || f.RestartAfter > MaxFaultPause {
			bad(i, "restart_after", "must be between 0 and %s, got %s", MaxFaultPause, f.RestartAfter)
		}
		if f.RestartAfter != 0 && f.Kill == "" {
			bad(i, "restart_after", "applies to kill: only")
		}
		if f.Stop < 0 || f.Stop > MaxFaultPause {
			bad(i, "stop", "must be between 0 and %s, got %s", MaxFaultPause, f.Stop)
		}
		if i == 0 {
			continue
		}
		prev := faults[i-1]
		switch {
		case f.At <= prev.At:
			bad(i, "at", "%s is not after the previous fault's %s: list faults in time order", f.At, prev.At)
		case prev.Stop > 0 && f.At < prev.At+prev.Stop:
			bad(i, "at", "%s is while the server is still stopped by the previous fault (until %s)", f.At, prev.At+prev.Stop)
		case prev.Kill != "" && f.At <= prev.At+prev.RestartAfter:
			bad(i, "at", "%s is before the previous fault restarts the server (%s at the earliest)", f.At, prev.At+prev.RestartAfter)
		}
	}
	return errs
}

// Apply carries out f on p now (the caller schedules it at f.At). A kill
// sends the signal to the process group, waits for the process to end
// (SIGKILL after the Spec's Grace when SIGTERM is not enough), waits
// RestartAfter and restarts it, waiting until it answers. A stop sends
// SIGSTOP, waits, and always sends SIGCONT, even when ctx ends first.
func Apply(ctx context.Context, p *Process, f Fault) error {
	if errs := CheckFaults([]Fault{f}, 0); len(errs) > 0 {
		return errs[0]
	}
	if f.Kill != "" {
		name, _ := ParseKillSignal(f.Kill)
		sig := sigKill
		if name == "SIGTERM" {
			sig = sigTerm
		}
		exited := p.Exited()
		if err := p.Signal(sig); err != nil {
			return fmt.Errorf("fault %s: %w", f, err)
		}
		if err := waitExit(ctx, p, exited, sig); err != nil {
			return fmt.Errorf("fault %s: %w", f, err)
		}
		if err := sleep(ctx, f.RestartAfter); err != nil {
			return fmt.Errorf("fault %s: %w", f, err)
		}
		if err := p.Restart(ctx); err != nil {
			return fmt.Errorf("fault %s: restart: %w", f, err)
		}
		return nil
	}
	if err := p.Signal(sigStop); err != nil {
		return fmt.Errorf("fault %s: %w", f, err)
	}
	slept := sleep(ctx, f.Stop)
	if err := p.Signal(sigCont); err != nil {
		return fmt.Errorf("fault %s: %w", f, err)
	}
	if slept != nil {
		return fmt.Errorf("fault %s: %w", f, slept)
	}
	return nil
}

// waitExit waits for the process to end after sig, escalating a SIGTERM
// to SIGKILL after the grace period.
func waitExit(ctx context.Context, p *Process, exited <-chan struct{}, sig os.Signal) error {
	grace := p.spec.Grace
	if sig == sigKill {
		grace = 30 * time.Second
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	if sig == sigKill {
		return fmt.Errorf("process %d not reaped %s after SIGKILL", p.PID(), grace)
	}
	if err := p.Signal(sigKill); err != nil {
		return err
	}
	t2 := time.NewTimer(30 * time.Second)
	defer t2.Stop()
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t2.C:
		return fmt.Errorf("process %d not reaped 30s after SIGKILL", p.PID())
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
