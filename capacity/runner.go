package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

// EngineRunner runs each step as one engine run of the scenario at a
// constant load for Warmup+Step: the open model's rate (sessions started
// a second) held flat, or the closed model's clients; the scenario's own
// stages are replaced, its flows and thresholds kept. With no target, the
// engine starts a fresh embedded server per run, so no step inherits
// another's rooms; with one, Rooms (when set) is the server's room count,
// taken before the first step as the baseline, and before each later
// step it is polled (every DrainPoll, for up to Drain) until back to it.
type EngineRunner struct {
	Plan   *scenario.Plan // overrides applied
	Base   engine.Config  // everything but the Plan
	Hold   time.Duration  // judged part of a step
	Warmup time.Duration  // before it, left out of the figures
	Judge  Judgement
	// Run is engine.Run (a test may put another engine in).
	Run func(context.Context, engine.Config) (*engine.Result, error)
	// Rooms counts the server's rooms (nil: no drain check).
	Rooms     func(context.Context) (int, error)
	Drain     time.Duration
	DrainPoll time.Duration
	// Sleep waits between drain polls (nil: a timer honouring ctx).
	Sleep func(context.Context, time.Duration)
	// Telemetry, when set, is the owned target process's figures since
	// the step's start (engine.Config.OnStart takes the baseline): what
	// the step cost the server, when the engine did not measure it (it
	// does the embedded server).
	Telemetry func() *reports.TargetProcess

	steps    int
	baseline int
	noBase   string // why there is no baseline
}

// StepPlan is plan held at a constant load for d: an open model's rate
// or a closed model's clients, max_clients scaled with the load when it
// exceeds the scenario's peak. Faults and the load curve are dropped.
func StepPlan(plan *scenario.Plan, load float64, d time.Duration) *scenario.Plan {
	p := *plan
	peak := p.Load.Start
	for _, s := range p.Load.Stages {
		peak = math.Max(peak, s.Target)
	}
	p.Load.Start, p.Load.Stages, p.Load.Duration, p.Load.Curve = load, nil, d, nil
	if p.Load.Model == scenario.Closed {
		p.Load.MaxClients = int(load)
	} else if peak > 0 && load > peak {
		p.Load.MaxClients = int(math.Ceil(float64(p.Load.MaxClients) * load / peak))
	}
	p.Faults = nil
	return &p
}

// Step implements Runner.
func (r *EngineRunner) Step(ctx context.Context, load float64) (reports.CapacityStep, error) {
	drain := r.drain(ctx)
	r.steps++
	cfg := r.Base
	cfg.Plan = StepPlan(r.Plan, load, r.Warmup+r.Hold)
	run := r.Run
	if run == nil {
		run = engine.Run
	}
	res, err := run(ctx, cfg)
	if err != nil {
		var unreach *engine.UnreachableError
		if r.steps > 1 && errors.As(err, &unreach) {
			// It answered before, at a lower load: it died of the
			// last one, or is still buried under it.
			return reports.CapacityStep{Load: load, Verdict: reports.CapTargetDown, Why: "unreachable before the step: " + err.Error(), Drain: drain}, nil
		}
		return reports.CapacityStep{}, err
	}
	if res.Engine != nil && res.Engine.Interrupted {
		return reports.CapacityStep{}, context.Canceled
	}
	if res.Run.TargetProcess == nil && r.Telemetry != nil {
		res.Run.TargetProcess = r.Telemetry()
	}
	j := r.Judge
	j.Length = r.Warmup + r.Hold
	st := j.Judge(res.Run, load)
	st.Drain = drain
	return st, nil
}

// drain waits for the server's rooms to fall back to the baseline taken
// before the first step, and says when they did not ("" when they did or
// nothing is checked).
func (r *EngineRunner) drain(ctx context.Context) string {
	if r.Rooms == nil {
		return ""
	}
	if r.steps == 0 {
		n, err := r.Rooms(ctx)
		if err != nil {
			r.noBase = "no room baseline (" + err.Error() + ")"
			return r.noBase
		}
		r.baseline = n
		return ""
	}
	if r.noBase != "" {
		return r.noBase
	}
	sleep := r.Sleep
	if sleep == nil {
		sleep = func(ctx context.Context, d time.Duration) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
	}
	poll := r.DrainPoll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	tries := max(1, int(r.Drain/poll)+1)
	last, lastErr := -1, error(nil)
	for i := 0; i < tries && ctx.Err() == nil; i++ {
		n, err := r.Rooms(ctx)
		if err == nil && n <= r.baseline {
			return ""
		}
		last, lastErr = n, err
		if i < tries-1 {
			sleep(ctx, poll)
		}
	}
	if lastErr != nil {
		return fmt.Sprintf("not drained: rooms not listed within --drain %v (%v)", r.Drain, lastErr)
	}
	return fmt.Sprintf("not drained: %d rooms listed after --drain %v, baseline %d", last, r.Drain, r.baseline)
}
