package metrics_test

import (
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
)

// Example shows the engine's side: register keys, record from a worker's
// own Recorder, snapshot into the report model.
func Example() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := metrics.NewCollector(start)
	join := c.Step("join")
	r := c.NewRecorder() // one per worker goroutine

	for i := 0; i < 100; i++ {
		intended := start.Add(time.Duration(i) * 10 * time.Millisecond)
		sent := intended.Add(200 * time.Microsecond) // the generator ran late
		r.Record(join, intended, sent, sent.Add(time.Millisecond))
	}
	r.Fail(join, result.ReasonJoinDeny, start.Add(time.Second))
	r.Retry(join)

	fmt.Printf("live: %+v\n", c.Live())
	run, err := c.Snapshot()
	if err != nil {
		panic(err)
	}
	s := run.Steps[0]
	fmt.Printf("%s: %d ok, %d failed %v, p50 %dµs (uncorrected %dµs), %d time-series points\n",
		s.Name, s.Successes, s.Failures, s.FailuresByReason, s.Latency.P50US, s.Uncorrected.P50US, len(run.TimeSeries))
	// Output:
	// live: {Requests:101 Successes:100 Failures:1 Retries:1 Dropped:0 Violations:0 SessionsStarted:0 SessionsFinished:0 DataSent:0 DataReceived:0 InRoom:0 InGame:0}
	// join: 100 ok, 1 failed map[join_deny:1], p50 1200µs (uncorrected 1000µs), 2 time-series points
}
