package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestLiveRun: the live view judges the run so far as the final result
// is judged: the scenario's thresholds evaluated on it, and the headline
// led by TARGET DOWN (the watchdog's outages), then INTERRUPTED (the run
// told to stop), then INCOMPLETE (a dead worker), then FAIL.
func TestLiveRun(t *testing.T) {
	plan, err := scenario.Parse("live.yaml", []byte("name: live\nprotocol: udp-lobby\nload: {rate: 10/s, duration: 10s}\nflows: [{steps: [list_rooms]}]\nthresholds:\n  - errors.rate < 1%\n"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		fail, stop bool
		dead, down bool
		want       string
		cpu        float64 // the process's CPU source; 0: none (--workers)
	}{
		{"passing so far", false, false, false, false, "PASS · ", 1.25},
		{"a breach", true, false, false, false, "FAIL · 1 of 1 threshold breached", 0},
		{"a dead worker", true, false, true, false, "INCOMPLETE · ", 0},
		{"stopped", true, true, true, false, "INTERRUPTED · ", 0},
		{"target down", true, true, true, true, "TARGET DOWN · ", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := metrics.NewCollector(t0)
			r := col.NewRecorder()
			k := col.Step("list_rooms")
			for i := range 20 {
				at := t0.Add(time.Duration(i) * 50 * time.Millisecond)
				if tc.fail && i%2 == 0 {
					r.Fail(k, result.ReasonTimeout, at)
					continue
				}
				r.Record(k, at, at, at.Add(300*time.Microsecond))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.stop {
				cancel()
			}
			l := &Live{start: t0, plan: plan, target: "127.0.0.1:9", ctx: ctx, set: col.LiveSet, shards: []string{"0/2", "1/2"},
				now: func() time.Time { return t0.Add(3 * time.Second) }}
			if tc.cpu > 0 {
				l.cpu = func() float64 { return tc.cpu }
			}
			if tc.dead {
				l.incomplete = func() []string { return []string{"worker 1/2 died: the result is incomplete"} }
			}
			if tc.down {
				w := &liveness.Watchdog{}
				w.MarkDown(2*time.Second, result.DownRefused, "connection refused", "", nil)
				// What the load had answered when it went down: the live
				// view says it, as the final result will, not "nothing
				// recorded of the load".
				l.watchdog.Store(&watch{w: w, col: col, answered: map[time.Duration]int64{2 * time.Second: 7}})
			}
			run, err := l.Run()
			if err != nil {
				t.Fatal(err)
			}
			hl := run.Headline()
			if !strings.HasPrefix(hl.Text, tc.want) {
				t.Fatalf("headline %q, want %q…", hl.Text, tc.want)
			}
			if tc.down && !strings.Contains(hl.Text, "7 requests answered before") {
				t.Errorf("headline %q does not say what was answered before the outage", hl.Text)
			}
			if len(run.Thresholds) != 1 || run.Thresholds[0].Pass == tc.fail || run.DurationNS != 3*time.Second || run.Totals.Requests != 20 {
				t.Fatalf("thresholds %+v, duration %v, %d requests", run.Thresholds, run.DurationNS, run.Totals.Requests)
			}
			// The process's CPU so far, in its (first) shard run's
			// harness: the live page shows it; none without a source.
			if len(run.ShardRuns) != 2 || run.ShardRuns[0].Harness.CPUSeconds != tc.cpu || run.ShardRuns[1].Harness.CPUSeconds != 0 {
				t.Errorf("shard runs %+v, want the first with %v CPU seconds", run.ShardRuns, tc.cpu)
			}
		})
	}
}
