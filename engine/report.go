package engine

import (
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// fillRun copies the engine's figures that belong to the versioned result
// model into run: the session counts (so result.Merge sums them and a
// merged run evaluates the same thresholds) and this run's ShardRun.
func fillRun(run *result.Run, in *Info) {
	s := in.Sessions.report()
	run.Sessions = &s
	run.ShardRuns = []result.ShardRun{{
		Shard: in.Shard, Protocol: in.Protocol, Model: in.Model, Seed: in.Seed,
		Embedded: in.Embedded, Interrupted: in.Interrupted, Sources: in.Sources, Sessions: s,
		Harness: in.Harness, StartAt: in.StartAt, StartWaitNS: in.StartWaitNS, LateStartNS: in.LateStartNS,
		PlayedPerSecond: in.PlayedPerSecond,
	}}
}

// report converts the engine's session counters to the result model's.
func (s SessionInfo) report() result.Sessions {
	return result.Sessions{Started: s.Started, Completed: s.Completed, Failed: s.Failed, FailedStarts: s.FailedStarts, Cut: s.Aborted,
		DroppedNoSlot: s.DroppedNoSlot, DroppedLate: s.DroppedLate, DroppedLateStart: s.DroppedLateStart, MaxActive: s.MaxActive,
		ClientsAsked: s.ClientsAsked, ClientsPeak: s.ClientsPeak}
}

// markWaits sets Series.Wait on the steps of run whose label belongs only
// to steps that send nothing (think, barrier) in every flow of plan: the
// end of the run cutting such a step is not a request left unanswered.
func markWaits(run *result.Run, plan *scenario.Plan) {
	wait := map[string]bool{}
	for _, f := range plan.Flows {
		for _, st := range f.Steps {
			w := st.Kind == scenario.Think || st.Kind == scenario.Barrier
			if prev, seen := wait[st.Label]; seen {
				w = w && prev
			}
			wait[st.Label] = w
		}
	}
	for i := range run.Steps {
		run.Steps[i].Wait = wait[run.Steps[i].Name]
	}
}
