// Package metrics records what a load run measures, cheaply enough for the
// engine's hot path (about 100k requests/s on 2 cores; BenchmarkRecord and
// BenchmarkRecordParallel measure it), and turns it into a result.Run.
//
// A Collector belongs to one run: the engine registers its steps and
// message types as Keys, each worker goroutine records through its own
// Recorder, run-wide findings go to the Collector, and Snapshot merges
// everything into the result (see Example). A client records each request
// twice, under its step and under its message type; only the step keys
// count in the run totals, the live counters and the time series.
//
// Limitations: latencies are whole microseconds (a sub-microsecond reply
// reads as 0) and values above result.HighestUS are clamped, not flagged;
// failed requests enter no histogram, so no threshold can bound the
// latency of timeouts; memory grows with recorders × keys, and a long soak
// grows slowly by the encoded seconds of its time series.
package metrics
