// Package engine schedules the simulated clients of a `lobbybench run`
// over time and assembles what they measured into one result. It is a
// library (vegeta, k6 style): cmd/lobbybench only parses flags and calls
// Run.
//
// # Pieces
//
//   - Execute runs a plan's load model with any NewSession (fakes in
//     tests): the open-model executor (open.go) starts sessions at the
//     scenario Profile's arrival rate, each arrival due when the integral
//     of the rate reaches it; the closed-model executor (closed.go) keeps
//     Profile.Clients(elapsed) clients alive, each looping sessions.
//     Execution.Stats counts started, completed, failed, aborted and
//     dropped sessions and the live/peak clients.
//   - Shard (shard.go) splits a run over n machines with no coordinator.
//   - Run (run.go) is the whole run: embedded reference server when the
//     plan names no target, a reachability Probe (probe.go), the simclient
//     sessions, live progress (progress.go), harness memory sampling
//     (harness.go), the metrics snapshot and the thresholds (lookup.go).
//
// # Scheduling decisions
//
// Open model: an arrival that finds Load.MaxClients sessions live, or that
// the scheduler reaches more than Options.MaxLateness (1 s) after its due
// time, is not started but counted as a dropped start (reported per flow
// under its first step's Dropped, in Totals.Dropped, and split by cause in
// Info.Sessions), so a saturated generator never passes silently and never
// catches up in a burst. Sessions are made (their socket bound) on the
// scheduling goroutine in arrival order, because group places are handed
// out in call order, PrepareLead (3 ms) before their due time and at most
// MaxPrepared ahead (they count as live), so the setup is never between
// the intended time and the send; at its due time, woken precisely
// (internal/precise), each runs on its own goroutine with its due time as
// the intended start of its first request (coordinated omission). What
// lateness is left is recorded per step as send lag.
// Client ids are the global arrival index; the flow of arrival k is drawn
// from stream 0 of the seed, so a run is reproducible and equal on every
// shard.
//
// Closed model: slot j (0 ≤ j < max_clients) runs while j < the target;
// when the target falls, the highest slots stop at the end of their
// current session. Slot j picks its flows from its own stream
// (scenario.NewRand(seed, 1<<62+j)); its i-th session has client id
// j + i·max_clients. A session that fails within a millisecond of its
// start (no socket, connection refused) makes its slot pause 50 ms so a
// dead server does not turn the run into a busy loop.
//
// Source addresses: the plan's source_addrs round-robin by client id (open)
// or slot (closed); for a loopback IPv4 target without them,
// netrange.DefaultSources: 127.0.0.1, .2, … one per 100 clients (at most 254).
//
// # Ending
//
// When the schedule ends, or ctx is cancelled (Ctrl-C), scheduling stops.
// In the closed model, and on Ctrl-C in both, the sessions' stop signal
// fires (simclient.WithStop): each session ends before its next step and
// cuts its waits (think times, ping intervals, barriers, waits for the
// game), so the run ends at its duration and only a request already sent
// runs on. In the open model an arrival is a unit of work: sessions in
// flight at the end of the schedule may finish their flow. Either way
// sessions get Options.Grace (3 s), then their context is cancelled and
// they get Grace again to return. Sessions cut this way (Run returns
// simclient.ErrStopped or the cancellation) count as aborted, not failed. The result is assembled either way, with
// Info.Interrupted set when ctx ended the run.
//
// # Shards
//
// `--shard i/n` (0-based): in the open model every shard walks the same
// global arrival schedule and flow picks and starts only the arrivals whose
// group (session s of a flow of group size G is in group s/G) satisfies
// group mod n == i, so groups never straddle machines and the n shards
// start exactly the arrivals of one unsharded run, under the same client
// ids and intended times. In the closed model slot j belongs to shard
// j mod n; at every instant the shards' clients add up to the target.
// Max clients is split the same way. The shard is recorded as Info.Shard.
//
// # Result
//
// Result is a reports.Run (read by every report, merge and compare) with
// Info beside it under "engine" in the JSON: shard, session counters,
// harness peak RSS/heap/goroutines/CPU (RSS includes an embedded server),
// and the embedded server's counters. The session counters, shard and
// harness figures are also copied into the Run (reports.Run.Sessions and
// ShardRuns), which reports.Merge sums and concatenates: MetricLookup reads
// the session metrics from there, so a merged run evaluates the same
// thresholds. The embedded server's counters stay in Info only, and a
// merge drops them.
package engine
