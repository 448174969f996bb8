package simclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// FlowRunner runs one step of a flow (RunFlow): Base for a session.
type FlowRunner interface {
	RunStep(ctx context.Context, i int, st *scenario.Step) error
}

// RunFlow is the step loop of a session's Run, the same for every
// protocol: it runs r on each step of flow that group member idx runs
// (Step.Only), in order, checks the run's stop signal (StopContext) before
// each, and ends at the first step error, returning what Stopped makes of
// it. r is an interface, not a closure: the loop and its runner sit under
// every request on a client's goroutine stack, and a closure's context
// would sit there too. It starts at step from (0: the first); a step
// that returns ErrSuspended ends it with ErrSuspended (Base.Pause).
func RunFlow(ctx, stop context.Context, flow *scenario.Flow, idx, from int, r FlowRunner) error {
	for i := from; i < len(flow.Steps); i++ {
		st := &flow.Steps[i]
		if !st.Only.Runs(idx) {
			continue
		}
		if stop.Err() != nil {
			return Stopped(ctx, stop, nil)
		}
		if err := r.RunStep(ctx, i, st); err != nil {
			if err == ErrSuspended {
				return err
			}
			return Stopped(ctx, stop, err)
		}
	}
	return nil
}

// FailStep records step i (st, metric key) as failed for reason at now and
// returns its *StepError (EndRequest: a step cut by the end of the run is
// counted as cut, not as a failure of the server).
func FailStep(rec *metrics.Recorder, key metrics.Key, i int, st *scenario.Step, reason string, err error) error {
	EndRequest(rec, key, reason, time.Time{}, 0, time.Now())
	return &StepError{Index: i, Kind: st.Kind, Label: st.Label, Reason: reason, Err: err}
}

// EndRequest records the end at at of a request (or step) of key k that
// did not succeed: cut (Recorder.Cut) when reason is ReasonCancelled —
// the run ended, the server is not at fault, yet the send is counted — a
// failure for reason otherwise. sent is when the request was sent and
// timeout its policy's (zero, 0: a step's run, whose wait is not known).
func EndRequest(rec *metrics.Recorder, k metrics.Key, reason string, sent time.Time, timeout time.Duration, at time.Time) {
	if reason == ReasonCancelled {
		var waited time.Duration
		if !sent.IsZero() {
			waited = at.Sub(sent)
		}
		rec.Cut(k, waited, timeout)
		return
	}
	rec.Fail(k, reason, at)
}

// SleepUntil pauses until t (think times, series intervals) on *timer,
// which it creates on first use and reuses after, so a session's pauses do
// not allocate. The wait ends in a send, so it wakes early and finishes
// precisely (precise.Until) instead of on Go's millisecond-grained idle
// timer. It returns ctx's error if ctx ends first.
func SleepUntil(ctx context.Context, timer **time.Timer, t time.Time) error {
	return precise.Until(ctx, timer, t)
}

// Barrier runs barrier step i (st, metric key) for a member of g: it waits
// at most st.Policy.Timeout for st.BarrierN members to arrive, records the
// step and returns when it completed. A wait that ctx (the stop signal)
// ends fails with ReasonCancelled, one that times out with
// result.ReasonTimeout (see FailStep).
func Barrier(ctx context.Context, g *Group, rec *metrics.Recorder, key metrics.Key, i int, st *scenario.Step) (time.Time, error) {
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, st.Policy.Timeout)
	defer cancel()
	if err := g.Arrive(tctx, i, st.BarrierN); err != nil {
		if ctx.Err() != nil {
			return time.Time{}, FailStep(rec, key, i, st, ReasonCancelled, err)
		}
		return time.Time{}, FailStep(rec, key, i, st, result.ReasonTimeout,
			fmt.Errorf("barrier: fewer than %d members of the group arrived within %s", st.BarrierN, st.Policy.Timeout))
	}
	now := time.Now()
	rec.Record(key, start, start, now)
	return now, nil
}

// RequestError is a request's failure with its reason (reports.Reason* or
// a Reason* of this package): what a protocol client's request code
// returns, the message already recorded, for the step to fail with
// (StepFailure).
type RequestError struct {
	Reason string
	Err    error
}

// Error returns "reason: err".
func (e *RequestError) Error() string { return e.Reason + ": " + e.Err.Error() }

// StepFailure returns the reason and cause a step that ended with err
// fails with: a *RequestError's own, ReasonCancelled when err is cancelled
// (errors.Is; nil: no such sentinel), ReasonSocket otherwise.
func StepFailure(err, cancelled error) (reason string, cause error) {
	var re *RequestError
	switch {
	case errors.As(err, &re):
		return re.Reason, re.Err
	case cancelled != nil && errors.Is(err, cancelled):
		return ReasonCancelled, err
	}
	return ReasonSocket, err
}
