// Package reports holds lobbybench's result model, the versioned JSON
// documents written by `lobbybench run` and `lobbybench conform`, and
// everything that reads them: exact merging of sharded runs, regression
// comparison, and renderers. The schema is documented in SCHEMA.md.
//
// # Model
//
// Run is one load run (kind "run"): totals, one Series per step and per
// message type (each with a corrected and an uncorrected Latency), protocol
// Violations with bounded hex samples, a per-second TimeSeries, RateLimits,
// Malformed findings, Thresholds, and the engine's figures: Sessions (how
// sessions ended, the peak live), ShardRuns (shard, harness use) and
// Incomplete (why a merge lacks a shard). Headline is the verdict every
// format leads with: INTERRUPTED, INCOMPLETE (MissingLoad), FAIL or PASS. Conform is one conformance run (kind
// "conform"): run-level Notes and Cases with id, section, rule id, quoted
// requirement, level, verdict, expected/actual, notes and a wire log whose
// entries carry addresses and notes. Both carry schema_version
// (SchemaVersion); Read, ReadRun and ReadConform reject unknown kinds and
// newer versions. WriteJSON writes either.
//
// Every Latency and Point keeps its HDR histogram in hdrhistogram-go's V2
// compressed base64 encoding (Histogram.Encode) beside precomputed
// percentiles, so readers use the numbers and mergers use the histogram.
// NewLatency and NewPoint build them; Latency.Histogram and
// Point.Histogram decode them. Geometry: microseconds, 1 µs to 300 s,
// 3 significant digits (time-series points: 2).
//
// # Operations
//
//   - Merge(runs...) merges shards exactly: histograms with hdrhistogram's
//     Merge (percentiles equal those of one histogram fed every sample),
//     counters summed, time series aligned by second offset, Sessions summed
//     and ShardRuns concatenated. Thresholds are dropped, to be evaluated
//     again on the merged run.
//   - Compare(base, new, gates) gives per-step p50/p99 changes (percent)
//     and error-rate changes (percentage points), new violated rules, and
//     the Breaches of gates such as DefaultGates (p99 +10%, error rate
//     +0.5pp, no new violated rule). CompareConform lists newly failing and
//     fixed conformance cases.
//
// # Renderers
//
// Each is a func(io.Writer, ...) error:
//
//   - WriteRunTable, WriteCompareTable, WriteConformCompareTable:
//     terminal tables (tablewriter).
//   - WriteConformText: conform's terminal report, one line per case by
//     section, the wire log in hex under failures.
//   - WriteRunJUnit: one testcase per threshold and per violated rule,
//     led by an <error> testcase when the run is partial.
//   - WriteConformJUnit: one testcase per case; fail is <failure>, skip is
//     <skipped>, warn and info pass with their text in <system-out>.
//   - WriteRunMarkdown, WriteConformMarkdown: a summary for pull
//     requests and CI pages, led by the headline.
//   - WriteHTML: one self-contained HTML page (inline CSS and
//     SVG, no script, nothing fetched) for any number of *Run and
//     *Conform documents. A run shows HDR percentile curves per step on a
//     log "nines" axis, the per-second series, the step, message,
//     violation (hex dumps), rate-limit, malformed and threshold tables; a
//     conform result its cases grouped by section with expandable wire
//     logs. Several runs or several conform results open with a
//     side-by-side matrix (Autobahn's implementation matrix). It is what
//     `--html FILE` and `lobbybench report html` write.
//
// Golden files for every format live in testdata/; refresh them with
// `go test ./reports -update` and review the diff.
package reports
