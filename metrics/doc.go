// Package metrics records what a load run measures, cheaply enough for the
// engine's hot path (about 100k requests/s on 2 cores), and turns it into a
// reports.Run.
//
// # Shape
//
// A Collector belongs to one run. Before the run the engine registers its
// steps and message types, getting small integer Keys:
//
//	c := metrics.NewCollector(start)
//	join := c.Step("join")
//	hello := c.Message("Hello")
//
// Each worker goroutine then takes its own Recorder and records through it:
//
//	r := c.NewRecorder()
//	r.Record(join, intended, sent, done)          // success
//	r.Fail(join, reports.ReasonJoinDeny, done)    // failure by named reason
//	r.Retry(join)                                 // retransmission, apart from first sends
//	r.Dropped(join)                               // schedule could not be kept
//	r.Violation("U-CRC", now, pkt, req, "crc 0x12 != 0x34")
//	r.SessionStarted(); r.SessionFinished()
//
// Run-wide findings computed by the engine go to the Collector directly:
// AddRateLimit and AddMalformed. Progress bars read Collector.Live (sums of
// per-recorder atomics; never blocks recording). At the end (or at any
// time) Collector.Snapshot merges every recorder into a *reports.Run; the
// caller fills Scenario, Target and Thresholds.
//
// # Latency
//
// Record takes three instants: intended (when the schedule wanted the
// request sent), sent (when it left) and done (when the reply arrived). The
// step's Latency histogram gets done-intended, corrected for coordinated
// omission as wrk2 does; Uncorrected gets done-sent. Both are HDR histograms
// in microseconds, 1 µs to 300 s (reports.HighestUS) at 3 significant
// digits; larger values are clamped to 300 s, negative ones to 0. Failed
// requests enter no histogram. Key space: steps and messages are separate
// name spaces. A client records each request twice, once under its step
// and once under its message type, so the run totals (reports.Totals), the
// live counters (Collector.Live) and the time series count the steps only;
// message types keep their own Series and histograms.
//
// # Time series
//
// Each Recorder accumulates the current second (by completion time since
// start: requests, errors and a 2-significant-digit histogram of corrected
// latency, from step keys only) and hands it to the Collector when a sample falls in another
// second, so the Collector's lock is taken about once per second per
// recorder, not per sample. A sample completing in an earlier second than
// the previous one still lands in its own second (at the cost of an extra
// hand-over), so the series is exact whatever the order.
//
// # Concurrency and cost
//
// A Recorder has its own mutex (uncontended when one goroutine owns it) so
// Snapshot can read it mid-run; there is no lock shared by all recorders on
// the hot path. Record does not allocate once a key has been seen by the
// recorder. Each Recorder holds two ~160 KiB histograms per key it has seen:
// make one per worker or per shard of clients (e.g. clientID % workers), not
// one per simulated client. Violation samples are bounded: the first
// reports.MaxViolationSamples per rule per recorder are kept, and Snapshot
// keeps the first of those in recorder-creation order.
//
// BenchmarkRecord and BenchmarkRecordParallel measure the hot path.
//
// # Limitations
//
//   - Latencies are whole microseconds: sub-microsecond replies read as 0.
//   - Values above 300 s are clamped to 300 s, not dropped or flagged.
//   - Failed requests have no latency; a threshold on "latency of
//     timeouts" cannot be expressed.
//   - Violation samples are the first per recorder, not the first in time
//     across the run.
//   - Memory grows with recorders x keys (two 3-digit histograms of about
//     160 KiB each). The Collector keeps the last 10 seconds as open
//     2-digit histograms (23 KiB each) and older seconds encoded (a few
//     hundred bytes each), so a long soak grows slowly but does grow.
package metrics
