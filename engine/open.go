package engine

import (
	"context"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// runOpen is the open-model executor (k6's ramping-arrival-rate): arrival
// k is due when the integral of the profile's rate reaches k (the
// scenario's Pacer), whatever the server's speed. An arrival that finds
// max_clients sessions live, or that the generator reaches more than
// MaxLateness after its due time, is counted as a dropped start and not
// started: a saturated generator never passes silently, and the schedule
// stays honest instead of bursting to catch up.
//
// Every shard walks the same global schedule and draws the same flow picks
// (stream 0 of the seed), starting only the arrivals it owns (see Shard).
func (x *Execution) runOpen(ctx context.Context) {
	plan := x.o.Plan
	prof := plan.Load.Profile()
	total := prof.Total()
	pick := scenario.NewRand(plan.Seed, 0)
	seq := make([]int, len(plan.Flows))
	maxActive := int64(x.o.Shard.Part(plan.Load.MaxClients))
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for k := 0; ctx.Err() == nil; k++ {
		if float64(k) >= total+1 {
			return
		}
		f := plan.PickFlow(pick.Float64())
		s := seq[f]
		seq[f]++
		if !x.o.Shard.Owns(s / max(plan.Flows[f].GroupSize, 1)) {
			continue
		}
		due, stop := prof.Pace(0, uint64(k))
		if stop {
			return
		}
		intended := x.start.Add(due)
		if !sleepUntil(ctx, timer, time.Until(intended)) {
			return
		}
		st := Start{ID: k, Slot: k, Flow: f, Seq: s, Source: x.source(k), Intended: intended}
		switch {
		case time.Since(intended) > x.o.MaxLateness:
			x.Stats.DroppedLate.Add(1)
			if x.o.OnDropped != nil {
				x.o.OnDropped(st, DropLate)
			}
		case x.Stats.Active.Load() >= maxActive:
			x.Stats.DroppedNoSlot.Add(1)
			if x.o.OnDropped != nil {
				x.o.OnDropped(st, DropNoSlot)
			}
		default:
			x.addActive()
			sess := x.newSession(st)
			if sess == nil {
				x.Stats.Active.Add(-1)
				continue
			}
			x.wg.Add(1)
			go func() {
				defer x.wg.Done()
				defer x.Stats.Active.Add(-1)
				x.runSession(st, sess, false)
			}()
		}
	}
}
