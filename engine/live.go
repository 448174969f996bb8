package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// Live is a running run's view so far, as a live page shows it
// (Observer.LiveReady; `run --dashboard-addr`): the figures of the one process
// (Run), or the exact merge of its workers' latest states (RunWorkers:
// metrics.Merged, the merge the live metrics serve), as a result.Run whose
// thresholds and headline are judged as the final result's are. Safe for
// concurrent use.
type Live struct {
	start      time.Time
	plan       *scenario.Plan
	target     string
	ctx        context.Context
	set        func() metrics.LiveSet
	shards     []string
	incomplete func() []string
	telemetry  func() *result.TargetProcess
	// cpu is the process's CPU seconds since the run started (its one
	// shard run's Harness.CPUSeconds); nil with --workers, whose
	// workers' CPU the parent does not have live.
	cpu func() float64
	// watchdog is the one process's watchdog once it runs (nil with
	// --workers: the workers' outages come with their states).
	watchdog atomic.Pointer[watch]
	now      func() time.Time
}

// Start is the run's start (the zero of its offsets).
func (l *Live) Start() time.Time { return l.start }

// Run returns the run so far: its steps, messages, totals, violations and
// outages (metrics.LiveSet.Run), the scenario and target, one shard run a
// process (interrupted once the run was told to stop), the workers that
// died (Incomplete), the server's process figures when lobbybench owns or
// embeds it, and the scenario's thresholds evaluated on it
// (result.EvaluateThresholds), TargetDown noted, and the process's CPU so
// far in its shard run's harness (its other harness figures are the
// final result's only). Its Headline is then the
// one the final result would have, were the run to end now. No time
// series: a live page samples its own.
func (l *Live) Run() (*result.Run, error) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	set := l.set()
	if w := l.watchdog.Load(); w != nil {
		set.Outages = w.outages()
	}
	r, err := set.Run(l.start, now().Sub(l.start))
	if err != nil {
		return nil, err
	}
	r.Scenario, r.Target = l.plan.Name, l.target
	stopped := l.ctx.Err() != nil
	for i, s := range l.shards {
		r.ShardRuns = append(r.ShardRuns, result.ShardRun{Shard: s, Protocol: string(l.plan.Protocol), Model: string(l.plan.Load.Model), Seed: l.plan.Seed, Interrupted: stopped})
		if i == 0 && l.cpu != nil {
			r.ShardRuns[0].Harness.CPUSeconds = l.cpu()
		}
	}
	if l.incomplete != nil {
		r.Incomplete = l.incomplete()
	}
	if l.telemetry != nil {
		r.TargetProcess = l.telemetry()
	}
	markWaits(r, l.plan)
	result.EvaluateThresholds(r, l.plan.Conditions())
	r.NoteTargetDown()
	return r, nil
}
