package owned

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Process is the server lobbybench started. Restart replaces its operating
// system process with a new one; PID, Exited, ExitStatus and Tail are about
// the current one.
type Process struct {
	spec  Spec
	acct  *account
	teeMu sync.Mutex

	life sync.Mutex // serialises Start, Stop and Restart
	mu   sync.Mutex
	cur  *incarnation
	n    int // starts so far
}

// incarnation is one operating-system process of a Process.
type incarnation struct {
	n      int
	pid    int
	cmd    *exec.Cmd
	out    *ring
	exited chan struct{}
	// Set before exited is closed.
	status string
	code   int // exit status, -1 when killed by a signal

	sigMu    sync.Mutex // held while signalling, so no signal follows the reap
	reaped   bool
	stopOnce sync.Once
	stopErr  error
}

// Start runs spec.Command and waits until spec.Ready answers. It fails,
// with a *StartError, when something answers before the command starts,
// when the command is not found, when the process ends first, or when it
// does not answer within ReadyTimeout (the process is then stopped).
func Start(ctx context.Context, spec Spec) (*Process, error) {
	s, err := spec.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := supported(); err != nil {
		return nil, err
	}
	epoch := s.Epoch
	if epoch.IsZero() {
		epoch = time.Now()
	}
	p := &Process{spec: s, acct: newAccount(s.Command, epoch)}
	p.life.Lock()
	defer p.life.Unlock()
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Process) start(ctx context.Context) error {
	s := p.spec
	// Is something already there? Then the run would measure it, not the
	// command's server.
	pre, cancel := context.WithTimeout(ctx, min(s.ReadyTimeout, 5*time.Second))
	err := s.Ready(pre)
	cancel()
	if err == nil {
		return &StartError{Kind: ErrPortInUse, Msg: fmt.Sprintf(
			"port already in use: something already answers at %s before --target-cmd started; stop it, or give the command and target another port", s.Addr)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	inc, err := p.launch()
	if err != nil {
		return err
	}
	if err := p.waitReady(ctx, inc); err != nil {
		inc.stop(s.Grace)
		return err
	}
	return nil
}

func (p *Process) launch() (*incarnation, error) {
	s := p.spec
	cmd := exec.Command("/bin/sh", "-c", s.script)
	cmd.Dir = s.Dir
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	setGroup(cmd)
	out := newRing(s.TailLines, s.Log, &p.teeMu)
	// One writer for both: exec gives them one pipe, so the lines keep
	// their order.
	cmd.Stdout, cmd.Stderr = out, out
	// A grandchild holding the pipe open must not keep Wait from
	// returning once the server has gone.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, &StartError{Kind: ErrNotFound, Msg: fmt.Sprintf("--target-cmd %q: cannot start /bin/sh: %v", s.Command, err)}
	}
	p.mu.Lock()
	inc := &incarnation{n: p.n, pid: cmd.Process.Pid, cmd: cmd, out: out, exited: make(chan struct{})}
	p.n++
	p.cur = inc
	p.mu.Unlock()
	p.acct.started(inc.n, inc.pid)
	go func() {
		err := cmd.Wait()
		inc.sigMu.Lock()
		inc.reaped = true
		inc.sigMu.Unlock()
		out.flush()
		words, code, cpu := exitInfo(cmd.ProcessState)
		if words == "" {
			words = fmt.Sprintf("ended: %v", err)
		}
		inc.status, inc.code = words, code
		p.acct.exited(inc.n, words, cpu)
		close(inc.exited)
	}()
	go p.sample(inc)
	return inc, nil
}

func (p *Process) waitReady(ctx context.Context, inc *incarnation) error {
	s := p.spec
	began := time.Now()
	deadline := began.Add(s.ReadyTimeout)
	timer := time.NewTimer(0)
	defer timer.Stop()
	checks := 0
	var last error
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("--target-cmd: interrupted while waiting for the server to answer at %s: %w", s.Addr, ctx.Err())
		case <-inc.exited:
			return p.exitedErr(inc, time.Since(began))
		case <-timer.C:
		}
		if checks > 0 && !time.Now().Before(deadline) {
			return p.neverReadyErr(inc, checks, last)
		}
		cctx, cancel := context.WithDeadline(ctx, deadline)
		err := s.Ready(cctx)
		cancel()
		checks++
		if err == nil {
			select {
			case <-inc.exited:
				return p.exitedErr(inc, time.Since(began))
			default:
			}
			return nil
		}
		last = err
		timer.Reset(s.Poll)
	}
}

func (p *Process) exitedErr(inc *incarnation, after time.Duration) error {
	s := p.spec
	tail := lastLines(inc.out.tail(), QuotedLines)
	switch {
	case inc.code == 127:
		return &StartError{Kind: ErrNotFound, Status: inc.status, Tail: tail, Msg: fmt.Sprintf(
			"command not found: %s (--target-cmd %q: the shell exited with status 127)", s.program(), s.Command)}
	case inc.code == 126:
		return &StartError{Kind: ErrNotFound, Status: inc.status, Tail: tail, Msg: fmt.Sprintf(
			"command not executable: %s (--target-cmd %q: the shell exited with status 126; check its permissions)", s.program(), s.Command)}
	case inc.out.sawInUse():
		return &StartError{Kind: ErrPortInUse, Status: inc.status, Tail: tail, Msg: fmt.Sprintf(
			"port already in use: the --target-cmd server could not bind (its output says \"address already in use\") and %s after %s", inc.status, round(after))}
	}
	return &StartError{Kind: ErrExited, Status: inc.status, Tail: tail, Msg: fmt.Sprintf(
		"--target-cmd %q %s after %s, before it answered at %s", s.Command, inc.status, round(after), s.Addr)}
}

func (p *Process) neverReadyErr(inc *incarnation, checks int, last error) error {
	s := p.spec
	tail := lastLines(inc.out.tail(), QuotedLines)
	kind, lead := ErrNeverReady, "--target-cmd never became ready"
	if inc.out.sawInUse() {
		kind, lead = ErrPortInUse, "port already in use: the --target-cmd server says \"address already in use\" and never became ready"
	}
	return &StartError{Kind: kind, Tail: tail, Msg: fmt.Sprintf(
		"%s: no answer at %s within %s (%d checks; the last said: %v); lobbybench stopped it (raise the wait if it starts slowly)",
		lead, s.Addr, s.ReadyTimeout, checks, last)}
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func (p *Process) current() *incarnation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// PID is the current process's id (the process group has the same id).
func (p *Process) PID() int { return p.current().pid }

// Exited is closed when the current process has ended.
func (p *Process) Exited() <-chan struct{} { return p.current().exited }

// ExitStatus says in words how the current process ended ("exited with
// status 2", "killed by SIGABRT"); empty while it runs.
func (p *Process) ExitStatus() string {
	inc := p.current()
	select {
	case <-inc.exited:
		return inc.status
	default:
		return ""
	}
}

// Life is one operating-system process of a Process, taken with Current:
// unlike Exited and Ended, it stays about that process after a restart,
// so that whoever saw it end reads its own exit, not the next one's.
type Life struct{ inc *incarnation }

// Current returns the current process's Life.
func (p *Process) Current() Life { return Life{p.current()} }

// Exited is closed when the process has ended.
func (l Life) Exited() <-chan struct{} { return l.inc.exited }

// Ended says whether the process has ended and, when it has, how
// ("killed by SIGKILL") and its last QuotedLines lines of output.
func (l Life) Ended() (status string, output []string, ended bool) {
	select {
	case <-l.inc.exited:
		return l.inc.status, lastLines(l.inc.out.tail(), QuotedLines), true
	default:
		return "", nil, false
	}
}

// Tail returns the current process's last lines of output, oldest first.
func (p *Process) Tail() []string { return p.current().out.tail() }

// QuotedLines is how many of the server's last lines of output a message
// or an outage quotes: a start that failed, a process that ended.
const QuotedLines = 10

// Ended says whether the current process has ended and, when it has,
// how ("killed by SIGABRT") and its last QuotedLines lines of output.
func (p *Process) Ended() (status string, output []string, ended bool) {
	return p.Current().Ended()
}

// Shutdown is the stop at the end: it takes a last sample, stops the
// current process as Stop does and says how, in the words of
// result.TargetProcess.Stop: "stopped on SIGTERM: exited with status 0",
// or what went wrong ("did not stop within 5s of SIGTERM; …"); "" when
// the process had already ended on its own (its exit is in the
// telemetry's Exits).
func (p *Process) Shutdown() string {
	p.SampleNow()
	if _, _, ended := p.Ended(); ended {
		return ""
	}
	if err := p.Stop(); err != nil {
		return err.Error()
	}
	return "stopped on SIGTERM: " + p.ExitStatus()
}

// Stop ends the current process: SIGTERM to its process group, then
// SIGKILL after Grace. It returns nil when the process ended within the
// grace period (or had already ended), a *StopError when it had to be
// killed. Calling it again returns the same answer.
func (p *Process) Stop() error {
	p.life.Lock()
	defer p.life.Unlock()
	return p.current().stop(p.spec.Grace)
}

func (inc *incarnation) stop(grace time.Duration) error {
	inc.stopOnce.Do(func() {
		select {
		case <-inc.exited:
			return
		default:
		}
		_ = inc.signal(sigTerm)
		_ = inc.signal(sigCont) // a stopped process would not see the SIGTERM
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-inc.exited:
			return
		case <-t.C:
		}
		_ = inc.signal(sigKill)
		t2 := time.NewTimer(30 * time.Second)
		defer t2.Stop()
		select {
		case <-inc.exited:
			inc.stopErr = &StopError{Grace: grace, Status: inc.status}
		case <-t2.C:
			inc.stopErr = fmt.Errorf("process %d still not reaped 30s after SIGKILL to its group", inc.pid)
		}
	})
	return inc.stopErr
}

// signal sends sig to the incarnation's process group, unless it has
// already been reaped (its id could then belong to another process).
func (inc *incarnation) signal(sig os.Signal) error {
	inc.sigMu.Lock()
	defer inc.sigMu.Unlock()
	if inc.reaped {
		return fmt.Errorf("--target-cmd process %d: %w (it %s)", inc.pid, ErrNotRunning, inc.statusNow())
	}
	return signalGroup(inc.pid, sig)
}

func (inc *incarnation) statusNow() string {
	select {
	case <-inc.exited:
		return inc.status
	default:
		return "has ended"
	}
}

// Signal sends sig to the current process's group: SIGKILL or SIGTERM to
// crash it, SIGSTOP to hang it, SIGCONT to resume it.
func (p *Process) Signal(sig os.Signal) error { return p.current().signal(sig) }

// Restart starts the command again with the same Spec (stopping the
// current process first if it still runs) and waits until it answers.
// The new process has a new PID.
func (p *Process) Restart(ctx context.Context) error {
	p.life.Lock()
	defer p.life.Unlock()
	if err := p.current().stop(p.spec.Grace); err != nil && !errors.Is(err, ErrKilled) {
		return err
	}
	return p.start(ctx)
}

// Snapshot is what the process has cost so far: PIDs, starts, exits, the
// /proc samples, peak RSS and CPU time summed over its processes. Safe to
// call at any time, also after Stop.
func (p *Process) Snapshot() Telemetry { return p.acct.snapshot() }

func (p *Process) sample(inc *incarnation) {
	t := time.NewTicker(p.spec.SampleEvery)
	defer t.Stop()
	for {
		select {
		case <-inc.exited:
			return
		case now := <-t.C:
			if r, err := readProc(inc.pid); err == nil {
				p.acct.sample(inc.n, r, now)
			}
		}
	}
}
