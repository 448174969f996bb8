package simclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// stepFunc is a FlowRunner made of a function.
type stepFunc func(i int, st *scenario.Step) error

func (f stepFunc) RunStep(_ context.Context, i int, st *scenario.Step) error { return f(i, st) }

// TestRunFlow checks the shared step loop: Only filters the member's
// steps, the stop signal ends the loop before a step, and a step error
// ends it through Stopped.
func TestRunFlow(t *testing.T) {
	flow := &scenario.Flow{Steps: []scenario.Step{
		{Label: "a", Only: scenario.All},
		{Label: "b", Only: scenario.Leader},
		{Label: "c", Only: scenario.Members},
		{Label: "d", Only: scenario.All},
	}}
	failC := &StepError{Index: 2, Reason: "timeout"}
	tests := []struct {
		name    string
		idx     int
		stopAt  string // fire the stop signal when this step runs
		failAt  string // this step fails with failC
		want    []string
		wantErr error
	}{
		{name: "leader", idx: 0, want: []string{"a", "b", "d"}},
		{name: "member", idx: 1, want: []string{"a", "c", "d"}},
		{name: "step error ends the flow", idx: 1, failAt: "c", want: []string{"a", "c"}, wantErr: failC},
		{name: "stop before the next step", idx: 0, stopAt: "b", want: []string{"a", "b"}, wantErr: ErrStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			stop, fire := context.WithCancel(ctx)
			defer fire()
			var ran []string
			err := RunFlow(ctx, stop, flow, tt.idx, 0, stepFunc(func(i int, st *scenario.Step) error {
				if &flow.Steps[i] != st {
					t.Fatalf("step %d is not flow.Steps[%d]", i, i)
				}
				ran = append(ran, st.Label)
				if st.Label == tt.stopAt {
					fire()
				}
				if st.Label == tt.failAt {
					return failC
				}
				return nil
			}))
			if err != tt.wantErr {
				t.Errorf("err %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(ran, tt.want) {
				t.Errorf("ran %v, want %v", ran, tt.want)
			}
		})
	}
}

// stepFigures returns the recorded requests and failures by reason of
// step name.
func stepFigures(t *testing.T, c *metrics.Collector, name string) (int64, map[string]int64) {
	t.Helper()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range run.Steps {
		if s.Name == name {
			return s.Requests, s.FailuresByReason
		}
	}
	return 0, nil
}

func TestFailStep(t *testing.T) {
	c := metrics.NewCollector(time.Now())
	rec, key := c.NewRecorder(), c.Step("s")
	st := &scenario.Step{Kind: scenario.StepKind("ping"), Label: "s"}
	cause := errors.New("cause")
	err := FailStep(rec, key, 3, st, result.ReasonTimeout, cause)
	var se *StepError
	if !errors.As(err, &se) || se.Index != 3 || se.Kind != scenario.StepKind("ping") || se.Label != "s" || se.Reason != result.ReasonTimeout || !errors.Is(err, cause) {
		t.Fatalf("FailStep = %#v", err)
	}
	// A step cut by the run's end is returned and counted as cut, not as
	// a failure.
	if ReasonOf(FailStep(rec, key, 3, st, ReasonCancelled, cause)) != ReasonCancelled {
		t.Fatal("cancelled reason lost")
	}
	if n, by := stepFigures(t, c, "s"); by[result.ReasonTimeout] != 1 || by[ReasonCancelled] != 0 || n != 2 {
		t.Errorf("requests %d, failures by reason %v; want 2 requests (a timeout, a cut) and no cancelled failure", n, by)
	}
}

func TestSleepUntil(t *testing.T) {
	var timer *time.Timer
	ctx := context.Background()
	if err := SleepUntil(ctx, &timer, time.Now().Add(-time.Second)); err != nil || timer != nil {
		t.Fatalf("past time: err %v, timer %v; want no wait and no timer", err, timer)
	}
	start := time.Now()
	if err := SleepUntil(ctx, &timer, start.Add(5*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 5*time.Millisecond {
		t.Error("woke before the time")
	}
	first := timer
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := SleepUntil(cctx, &timer, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
	if timer != first {
		t.Error("the timer was not reused")
	}
}

func TestBarrier(t *testing.T) {
	c := metrics.NewCollector(time.Now())
	rec, key := c.NewRecorder(), c.Step("bar")
	st := &scenario.Step{Kind: scenario.Barrier, Label: "bar", BarrierN: 2, Policy: scenario.RequestPolicy{Timeout: 20 * time.Millisecond}}
	g := newGroup(0, 0, 2)
	ctx := context.Background()

	// Alone at a barrier of 2: times out.
	if _, err := Barrier(ctx, g, rec, key, 1, st); ReasonOf(err) != result.ReasonTimeout {
		t.Fatalf("alone: %v, want a timeout", err)
	}
	// The stop signal ends the wait as cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Barrier(cctx, g, rec, key, 2, st); ReasonOf(err) != ReasonCancelled {
		t.Fatalf("stopped: %v, want cancelled", err)
	}
	// Two members pass and the step is recorded for each.
	st.Policy.Timeout = 10 * time.Second
	errs := make(chan error, 2)
	for _, r := range []*metrics.Recorder{rec, c.NewRecorder()} { // a recorder is one goroutine's
		go func() {
			done, err := Barrier(ctx, g, r, key, 3, st)
			if err == nil && done.IsZero() {
				err = errors.New("zero completion time")
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n, by := stepFigures(t, c, "bar"); by[result.ReasonTimeout] != 1 || len(by) != 1 || n != 4 {
		t.Errorf("requests %d, failures %v; want 4 (two passes, one timeout, one cancelled wait counted as cut, not failed)", n, by)
	}
}

func TestStepFailure(t *testing.T) {
	cancelled := errors.New("cancelled")
	cause := errors.New("no reply")
	other := errors.New("write: broken pipe")
	tests := []struct {
		name       string
		err        error
		sentinel   error
		wantReason string
		wantCause  error
	}{
		{"request error", &RequestError{Reason: result.ReasonTimeout, Err: cause}, cancelled, result.ReasonTimeout, cause},
		{"wrapped request error", fmt.Errorf("step: %w", &RequestError{Reason: ReasonRefused, Err: cause}), cancelled, ReasonRefused, cause},
		{"cancelled", fmt.Errorf("recv: %w", cancelled), cancelled, ReasonCancelled, nil},
		{"no sentinel", cancelled, nil, ReasonSocket, nil},
		{"socket", other, cancelled, ReasonSocket, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, got := StepFailure(tt.err, tt.sentinel)
			want := tt.wantCause
			if want == nil {
				want = tt.err // the error itself
			}
			if reason != tt.wantReason || got != want {
				t.Errorf("StepFailure = %q, %v; want %q, %v", reason, got, tt.wantReason, want)
			}
		})
	}
	if s := (&RequestError{Reason: "timeout", Err: cause}).Error(); s != "timeout: no reply" {
		t.Errorf("Error() = %q", s)
	}
}
