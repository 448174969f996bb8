package engine

import "github.com/lobbybench/lobbybench/reports"

// fillRun copies the engine's figures that belong to the versioned result
// model into run: the session counts (so reports.Merge sums them and a
// merged run evaluates the same thresholds) and this run's ShardRun.
func fillRun(run *reports.Run, in *Info) {
	s := in.Sessions.report()
	run.Sessions = &s
	run.ShardRuns = []reports.ShardRun{{
		Shard: in.Shard, Protocol: in.Protocol, Model: in.Model, Seed: in.Seed,
		Embedded: in.Embedded, Interrupted: in.Interrupted, Sources: in.Sources, Sessions: s,
		Harness: in.Harness,
	}}
}

// report converts the engine's session counters to the result model's.
func (s SessionInfo) report() reports.Sessions {
	return reports.Sessions{Started: s.Started, Completed: s.Completed, Failed: s.Failed, FailedStarts: s.FailedStarts, Cut: s.Aborted,
		DroppedNoSlot: s.DroppedNoSlot, DroppedLate: s.DroppedLate, MaxActive: s.MaxActive}
}
