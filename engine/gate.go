package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// The start gate of local workers (Workers.Gate). A start instant fixed
// before the workers exist must leave room for their start-up, and on a
// busy machine any fixed margin can be too short: workers that came up
// late joined late, and a short run's shards could miss their whole
// schedule. So the parent starts the workers without an instant; each
// prepares (reads the scenario, checks the target), says it is ready on
// its progress lines (a ProgressSample with Ready), and reads the instant
// from its standard input (Config.StartGate, AwaitStart). Once every
// worker is ready, or has ended, the parent sets the instant gateMargin
// ahead and writes it to them all (openGate).

// gateMargin is how far ahead of the moment every worker is ready the
// parent sets their start instant: time for each to read it, not to start,
// also when the machine is busy (a worker waking after the instant sends
// its first arrivals late). Half a second: a run starts that much after
// its workers' reachability checks, as a server that limits bursts (a
// token bucket refilled after an idle spell, internal/testkit/caplobby's)
// would see between a one-process run's steps too.
const gateMargin = 500 * time.Millisecond

// gateWait bounds the parent's wait for its workers to be ready: past it,
// the instant is set anyway, and a worker still preparing joins late (as
// it says in its result).
const gateWait = time.Minute

// AwaitStart is a worker's side of the start gate: it says it is ready
// on out (one progress line) and returns the start instant the parent
// writes on in (one RFC 3339 line). ctx ends the wait, with its error; an
// in that ends first (the parent gone) is an error.
func AwaitStart(ctx context.Context, out io.Writer, in io.Reader) (time.Time, error) {
	line, err := json.Marshal(ProgressSample{Ready: true})
	if err != nil {
		return time.Time{}, err
	}
	if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
		return time.Time{}, fmt.Errorf("start gate: saying ready: %w", err)
	}
	type read struct {
		s   string
		err error
	}
	got := make(chan read, 1)
	go func() {
		s, err := bufio.NewReader(in).ReadString('\n')
		got <- read{s, err}
	}()
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case r := <-got:
		if r.err != nil && !(errors.Is(r.err, io.EOF) && r.s != "") {
			return time.Time{}, errors.New("start gate: the parent closed the gate without a start instant")
		}
		at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.s))
		if err != nil {
			return time.Time{}, fmt.Errorf("start gate: %q is not a start instant", strings.TrimSpace(r.s))
		}
		return at, nil
	}
}

// openGate is the parent's side: it waits until every worker is ready or
// has ended (allDone: all have), ctx ends or gateWait passes, then sets
// the start instant gateMargin ahead (Workers.StartAt, the zero of the
// live figures) and writes it to every worker.
func (r *workersRun) openGate(allDone <-chan struct{}) {
	limit := time.NewTimer(gateWait)
	defer limit.Stop()
wait:
	for !r.allReady() {
		select {
		case <-r.settled:
		case <-allDone:
			break wait
		case <-r.ctx.Done():
			break wait
		case <-limit.C:
			break wait
		}
	}
	at := time.Now().Add(gateMargin)
	r.w.StartAt, r.liveStart = at, at
	if r.live != nil {
		r.live.SetStart(at)
	}
	line := at.UTC().Format(time.RFC3339Nano) + "\n"
	for _, wk := range r.workers {
		if wk.stdin != nil {
			_, _ = io.WriteString(wk.stdin, line) // a worker gone is reported as such
			_ = wk.stdin.Close()
		}
	}
	noteStartWait(r.w.Warnings, r.w.Mode, at)
}

// allReady reports whether every worker is ready for its start instant or
// has ended (or never started).
func (r *workersRun) allReady() bool {
	for _, wk := range r.workers {
		wk.mu.Lock()
		settled := wk.ready || wk.done
		wk.mu.Unlock()
		if !settled {
			return false
		}
	}
	return true
}

// settle tells openGate that the worker said it is ready, or ended.
func (wk *worker) settle() {
	select {
	case wk.settled <- struct{}{}:
	default: // a signal is pending: openGate re-reads every worker anyway
	}
}
