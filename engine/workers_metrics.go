package engine

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/metrics/prom"
	"github.com/lobbybench/lobbybench/result"
)

// A --workers parent with MetricsAddr serves the live metrics merged over
// its workers. Each worker sends its cumulative metrics.LiveState (the
// counters and the HDR histograms, encoded) on its progress lines at most
// once a second and on its final line (Config.WorkerMetrics); the parent
// keeps every worker's latest, decoded, and a scrape merges them
// (metrics.Merged) exactly as one process merges its recorders. So the
// same names and labels as a single process, counters summed, histograms
// and the HDR summaries merged exactly, no port per worker, and a worker
// that died keeps counting with its last state.

// newWorkers returns the workers of w, not started, each feeding its
// slot of live when live is set, and signalling settled when it is ready
// for its start instant or ends (openGate).
func newWorkers(w Workers, live *metrics.Merged, settled chan<- struct{}) []*worker {
	workers := make([]*worker, w.N)
	for i := range workers {
		s := Shard{Index: i, Count: w.N}
		workers[i] = &worker{shard: s, path: w.ShardPath(s), index: i, live: live, settled: settled}
	}
	return workers
}

// serveWorkersMetrics serves live at w.MetricsAddr with the workers'
// states until the run returns (or w.MetricsUntil is done); the address
// goes to info.MetricsAddr. A nil live serves nothing.
func serveWorkersMetrics(ctx context.Context, w Workers, live *metrics.Merged, workers []*worker, target func() *result.TargetProcess, info *Info) (stop func(), err error) {
	if live == nil || w.MetricsAddr == "" {
		return func() {}, nil
	}
	mctx, cancel := metricsContext(ctx, w.MetricsUntil)
	states := func() []prom.WorkerState {
		out := make([]prom.WorkerState, len(workers))
		for i, wk := range workers {
			out[i] = wk.state()
		}
		return out
	}
	a, err := prom.ServeWith(mctx, w.MetricsAddr, live, prom.Options{Workers: states, Target: target, Conns: w.ConnBudget})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	info.MetricsAddr = a.String()
	if w.Mode != ProgressNone && w.Progress != nil {
		fmt.Fprintf(w.Progress, "lobbybench: live metrics of the %d workers at http://%s/metrics\n", w.N, a)
	}
	return cancel, nil
}

// state is the worker's state for lobbybench_worker_state.
func (wk *worker) state() prom.WorkerState {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	st := prom.WorkerRunning
	if wk.done {
		st = prom.WorkerExited
		var ee *exec.ExitError
		if wk.err != nil && (!errors.As(wk.err, &ee) || !ee.Exited()) {
			st = prom.WorkerDied
		}
	}
	return prom.WorkerState{Shard: wk.shard.String(), State: st}
}

// takeMetrics files a progress line's state in the worker's slot; a
// state that does not decode leaves the last one.
func (wk *worker) takeMetrics(s *metrics.LiveState) {
	if s == nil || wk.live == nil {
		return
	}
	if set, err := s.Decode(); err == nil {
		wk.live.Set(wk.index, set)
	}
}

// workersLive is the live view of a --workers run: the merge of the
// workers' latest states (live, as the metrics serve it), one shard run a
// worker, and the workers that died so far as the run's Incomplete.
func workersLive(ctx context.Context, w Workers, target string, start time.Time, live *metrics.Merged, workers []*worker, telemetry func() *result.TargetProcess) *Live {
	l := &Live{start: start, plan: w.Plan, target: target, ctx: ctx, set: live.LiveSet, telemetry: telemetry}
	for _, wk := range workers {
		l.shards = append(l.shards, wk.shard.String())
	}
	l.incomplete = func() []string {
		var out []string
		for _, wk := range workers {
			if wk.state().State == prom.WorkerDied {
				out = append(out, fmt.Sprintf("worker %s died: the result is incomplete", wk.shard))
			}
		}
		return out
	}
	return l
}
