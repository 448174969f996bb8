// Package engine runs the load of `lobbybench run`: it schedules the
// simulated clients over time and assembles what they measured into one
// result. It is a library (as vegeta's and k6's cores are): cmd/lobbybench
// only parses flags and calls Run.
//
// Execute is the scheduler alone, driving any NewSession (fakes in tests):
// the open model (open.go) starts sessions at the scenario's arrival rate,
// the closed model (closed.go) keeps a number of clients looping flows, and
// a Shard splits either over machines with no coordinator. Run is the whole
// run around it: the embedded reference server when the plan names no
// target, the reachability check, the simclient sessions, live progress,
// the harness's own resource use, the metrics snapshot and the thresholds.
// What docs/run.md says of `run` (load models, dropped starts, ending,
// source addresses, exit codes) is what this package implements; the
// mechanisms are described on the types and functions that carry them.
//
// A Result is a result.Run with the engine's Info beside it. The figures a
// merge of shards needs (session counters, shard, harness use) are also
// copied into the Run, where result.Merge sums and concatenates them; the
// embedded server's counters stay in Info only, so a merge drops them.
package engine
