package simclient

import (
	"context"
	"errors"
)

// ErrStopped is what Session.Run returns when the run's stop signal (see
// WithStop) ended the session between steps: the schedule is over, the
// session was cut, not failed.
var ErrStopped = errors.New("simclient: stopped at the end of the run")

type stopKey struct{}

// WithStop returns ctx carrying stop, the run's "finish your current
// request and stop" signal. stop must be done whenever ctx is (derive it
// from ctx). A session checks it between steps and ends its waits (think
// times, ping intervals, barriers, a group's room, waits for the game to
// start, rate probes, malformed series) when it fires, returning
// ErrStopped; a request already sent is given the rest of ctx's life to be
// answered. Cancelling ctx itself still cuts everything at once.
func WithStop(ctx, stop context.Context) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// StopContext returns the stop context ctx carries (WithStop), or ctx itself
// when it carries none.
func StopContext(ctx context.Context) context.Context {
	if s, ok := ctx.Value(stopKey{}).(context.Context); ok && s != nil {
		return s
	}
	return ctx
}

// Stopped returns the error a session's Run returns when a step ended with
// err: ctx's error when the run was cancelled, ErrStopped when the stop
// signal fired and the step was cut by it (reason ReasonCancelled, or no
// step error at all), and err itself otherwise (a real failure stays one).
func Stopped(ctx, stop context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if stop.Err() != nil && (err == nil || ReasonOf(err) == ReasonCancelled) {
		return ErrStopped
	}
	return err
}
