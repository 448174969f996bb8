package owned

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Defaults of a Spec's zero fields.
const (
	DefaultReadyTimeout = 30 * time.Second
	DefaultPoll         = 100 * time.Millisecond
	DefaultGrace        = 5 * time.Second
	DefaultTailLines    = 50
	DefaultSampleEvery  = time.Second
)

// Spec says how to start and watch the server under test.
type Spec struct {
	// Command is the command line as the user gave it to --target-cmd. It
	// runs under /bin/sh -c with exec before the server's own command
	// (Script: 'exec ./srv', 'cd d && VAR=x exec ./srv'), so quoting,
	// globs, $VARS, assignments and a cd first work and the process
	// lobbybench watches is the server itself, not a shell.
	Command string
	// Dir is its working directory; empty = lobbybench's.
	Dir string
	// Env is added to lobbybench's environment ("KEY=value").
	Env []string
	// Addr is where the server should answer (the scenario's target), for
	// messages only.
	Addr string
	// Ready is the protocol's reachability check: nil when the target
	// answers. It must honour its context's deadline. Required.
	Ready func(ctx context.Context) error
	// ReadyTimeout bounds the wait for Ready after the start (default
	// 30s: a slow start is not a failure).
	ReadyTimeout time.Duration
	// Poll is the pause between two Ready checks (default 100ms).
	Poll time.Duration
	// Grace is how long Stop waits after SIGTERM before SIGKILL (default
	// 5s).
	Grace time.Duration
	// TailLines is how many of the last lines of output (stdout and
	// stderr, merged) are kept (default 50).
	TailLines int
	// Log, when set, receives all the server's output as it comes
	// (--target-log FILE).
	Log io.Writer
	// SampleEvery is the /proc sampling interval (default 1s).
	SampleEvery time.Duration
	// Epoch is the time sample offsets count from (the report's
	// StartedAt); zero = the first start.
	Epoch time.Time

	script, prog string // Script's, set by withDefaults
}

func (s Spec) withDefaults() (Spec, error) {
	if strings.TrimSpace(s.Command) == "" {
		return s, errors.New("--target-cmd: the command is empty")
	}
	var err error
	if s.script, s.prog, err = Script(s.Command); err != nil {
		return s, err
	}
	if s.Ready == nil {
		return s, errors.New("owned: Spec.Ready is nil (the caller must give the protocol's reachability check)")
	}
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	if s.Poll <= 0 {
		s.Poll = DefaultPoll
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.TailLines <= 0 {
		s.TailLines = DefaultTailLines
	}
	if s.SampleEvery <= 0 {
		s.SampleEvery = DefaultSampleEvery
	}
	if s.Addr == "" {
		s.Addr = "the target"
	}
	return s, nil
}

// program is the server's program, the word exec runs, for "command not
// found"; in a list, any of its commands may be the one.
func (s Spec) program() string {
	if s.prog == "" {
		return "one of its commands, named in its output"
	}
	return s.prog
}

// What went wrong, for errors.Is on a *StartError or *StopError.
var (
	// ErrPortInUse: something already answered at the target before the
	// command started, or the server said "address already in use".
	ErrPortInUse = errors.New("port already in use")
	// ErrNotFound: the shell could not find the command (exit 127).
	ErrNotFound = errors.New("command not found")
	// ErrExited: the process ended before it answered.
	ErrExited = errors.New("exited before it was ready")
	// ErrNeverReady: it ran but did not answer within ReadyTimeout.
	ErrNeverReady = errors.New("never ready")
	// ErrKilled: Stop had to send SIGKILL after the grace period.
	ErrKilled = errors.New("did not stop on SIGTERM")
	// ErrNotRunning: Signal or a fault found no running process.
	ErrNotRunning = errors.New("not running")
	// ErrUnsupported: this operating system cannot do it.
	ErrUnsupported = errors.New("not supported on this operating system")
)

// StartError is why a start or restart failed, with what the process said.
type StartError struct {
	Kind   error    // one of the Err* values
	Msg    string   // the whole sentence
	Status string   // how the process ended, when it did ("exited with status 3")
	Tail   []string // its last lines of output
}

func (e *StartError) Error() string {
	if len(e.Tail) == 0 {
		return e.Msg
	}
	return e.Msg + "; its last output:\n    " + strings.Join(e.Tail, "\n    ")
}

func (e *StartError) Unwrap() error { return e.Kind }

// StopError says Stop had to kill the process.
type StopError struct {
	Grace  time.Duration
	Status string
}

func (e *StopError) Error() string {
	return fmt.Sprintf("did not stop within %s of SIGTERM; lobbybench killed its process group with SIGKILL (%s)", e.Grace, e.Status)
}

func (e *StopError) Unwrap() error { return ErrKilled }

// lastLines returns at most n of the last lines.
func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}
