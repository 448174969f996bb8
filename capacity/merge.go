package capacity

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// Merge merges the documents of the shards of one sharded ladder
// (`capacity --shard i/n`; names label them in messages) into the
// ladder's result. Steps are aligned by order: the k-th step of every
// shard is the ladder's k-th load. Each load's runs, one per shard, are
// merged exactly as `report merge` merges runs (result.Merge: histograms
// merged, counters summed; thresholds evaluated again on the merge), the
// merged step is judged again by the judgement `capacity` uses (Judge,
// with each shard's run as a part: one late shard is not averaged away),
// and the ladder is concluded from the merged steps (ConcludeLadder).
//
// Nothing is hidden: a shard of the n given by none of the documents, and
// a step a shard did not play (its ladder ended before it), are said in
// Coverage, and such a step's merged run is incomplete, so it is judged
// harness-bound (its load was not all offered), never PASS. A target a
// shard found unreachable before a step makes that step TARGET DOWN.
// Documents that are not shards of one ladder are an error; warnings are
// what the merge doubts (a scenario that differs).
func Merge(docs []*result.Capacity, names []string) (*result.Capacity, []string, error) {
	if len(docs) == 0 {
		return nil, nil, fmt.Errorf("no capacity document to merge")
	}
	count, byIndex, warnings, err := checkShards(docs, names)
	if err != nil {
		return nil, nil, err
	}
	first := docs[0]
	loads := first.Settings.Loads
	u := first.Unit()
	c := &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Scenario: first.Scenario, Target: first.Target,
		Protocol: first.Protocol, Model: first.Model, Settings: first.Settings, Shards: len(docs), Steps: []result.CapacityStep{}}
	var absent []string
	for k := range count {
		if _, ok := byIndex[k]; !ok {
			absent = append(absent, fmt.Sprintf("%d/%d", k, count))
		}
	}
	if len(absent) > 0 {
		c.Coverage = append(c.Coverage, fmt.Sprintf("%s %s missing (no document given): every step lacks %s share of the load",
			words.Plural(len(absent), "shard"), strings.Join(absent, ", "), words.Agree(len(absent), "its", "their")))
	}
	mergeSpan(c, docs)
	j := DefaultJudgement
	j.Warmup, j.Length = 0, first.Settings.StepNS
	if first.Settings.LagBoundNS > 0 {
		j.LagBound = first.Settings.LagBoundNS
	}
	for k, load := range loads {
		sh := shareOfStep(docs, names, k)
		if len(sh.runs) == 0 && sh.downWhy == "" {
			// No shard played this load: the merged ladder ends here.
			break
		}
		if len(sh.unplayed) > 0 {
			c.Coverage = append(c.Coverage, fmt.Sprintf("step %d (%s): not played by %s", k+1, result.FormatLoad(load, u), strings.Join(sh.unplayed, ", ")))
		}
		st, warn, err := sh.merge(j, load, absent)
		if err != nil {
			return nil, warnings, fmt.Errorf("step %d (%s): %w", k+1, result.FormatLoad(load, u), err)
		}
		if warn != "" {
			warnings = append(warnings, warn)
		}
		c.Steps = append(c.Steps, st)
	}
	if len(c.Steps) < len(loads) {
		// How the ladder ended where no shard went on: the shards'
		// reason (the budget, an interruption, an error); the merged
		// steps' own verdicts come first (ConcludeLadder).
		for _, d := range docs {
			if len(d.Steps) == len(c.Steps) && d.Stop != result.StopLadder && (c.Stop == "" || d.Stop == result.StopInterrupted) {
				c.Stop, c.StopText = d.Stop, "shard "+d.Shard+": "+d.StopText
			}
		}
	}
	ConcludeLadder(c)
	return c, warnings, nil
}

// checkShards checks that docs are shards of one ladder, each once: it
// returns the shard count, the name of the document of each shard index,
// and the warnings (a scenario that differs).
func checkShards(docs []*result.Capacity, names []string) (count int, byIndex map[int]string, warnings []string, err error) {
	byIndex = map[int]string{}
	first := docs[0]
	for i, d := range docs {
		if d.Shard == "" || len(d.Settings.Loads) == 0 {
			return 0, nil, nil, fmt.Errorf("%s is not the document of a shard of a capacity ladder ('capacity --shard i/n' writes those): only they merge", names[i])
		}
		sh, err := engine.ParseShard(d.Shard)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%s: shard %v", names[i], err)
		}
		switch {
		case count == 0:
			count = sh.Count
		case sh.Count != count:
			return 0, nil, nil, fmt.Errorf("%s is shard %s, %s shard %s: not shards of one run", names[0], first.Shard, names[i], d.Shard)
		}
		if prev, ok := byIndex[sh.Index]; ok {
			return 0, nil, nil, fmt.Errorf("shard %s is in both %s and %s: its load would be counted twice", d.Shard, prev, names[i])
		}
		byIndex[sh.Index] = names[i]
		if err := sameLadder(first, d, names[0], names[i]); err != nil {
			return 0, nil, nil, err
		}
		if d.Scenario != first.Scenario {
			warnings = append(warnings, fmt.Sprintf("%s is of scenario %q, %s of %q", names[i], d.Scenario, names[0], first.Scenario))
		}
	}
	return count, byIndex, warnings, nil
}

// sameLadder checks that d (named name) plays the ladder and model of
// first (named firstName), each step at the ladder's load.
func sameLadder(first, d *result.Capacity, firstName, name string) error {
	if !slices.Equal(d.Settings.Loads, first.Settings.Loads) {
		return fmt.Errorf("%s plays the ladder %s, %s the ladder %s: not shards of one ladder", firstName, loadList(first.Settings.Loads), name, loadList(d.Settings.Loads))
	}
	if d.Model != first.Model {
		return fmt.Errorf("%s is of the %s model, %s of the %s model", firstName, first.Model, name, d.Model)
	}
	for k, st := range d.Steps {
		if k >= len(d.Settings.Loads) || st.Load != d.Settings.Loads[k] {
			return fmt.Errorf("%s: step %d is at %s, not at the ladder's load %d", name, k+1, result.FormatLoad(st.Load, ""), k+1)
		}
	}
	return nil
}

// mergeSpan sets c's start to the earliest shard's and its duration to
// reach the latest shard's end.
func mergeSpan(c *result.Capacity, docs []*result.Capacity) {
	var end time.Time
	for _, d := range docs {
		if c.StartedAt.IsZero() || d.StartedAt.Before(c.StartedAt) {
			c.StartedAt = d.StartedAt
		}
		if e := d.StartedAt.Add(d.DurationNS); e.After(end) {
			end = e
		}
	}
	c.DurationNS = end.Sub(c.StartedAt)
}

// stepShares is what the shards played of one step of the ladder.
type stepShares struct {
	runs     []*result.Run
	runNames []string // "<document> step <k>", for Reevaluate
	unplayed []string // "shard i/n (why)"
	drains   []string
	downWhy  string // a shard found the target down before the step
	warm     bool   // a shard found it down during the step's warm-up
}

// shareOfStep gathers step k of every document.
func shareOfStep(docs []*result.Capacity, names []string, k int) stepShares {
	var sh stepShares
	for i, d := range docs {
		if k >= len(d.Steps) {
			sh.unplayed = append(sh.unplayed, fmt.Sprintf("shard %s (its ladder ended: %s)", d.Shard, d.StopText))
			continue
		}
		st := d.Steps[k]
		if st.Drain != "" {
			sh.drains = append(sh.drains, "shard "+d.Shard+": "+st.Drain)
		}
		if st.Run == nil {
			if st.Verdict == result.CapTargetDown {
				sh.downWhy = "shard " + d.Shard + ": " + st.Why
			} else {
				sh.unplayed = append(sh.unplayed, fmt.Sprintf("shard %s (its step has no run)", d.Shard))
			}
			continue
		}
		if st.Verdict == result.CapTargetDown && strings.HasPrefix(st.Why, "during the warm-up") {
			sh.warm = true
		}
		sh.runs = append(sh.runs, st.Run)
		sh.runNames = append(sh.runNames, fmt.Sprintf("%s step %d", names[i], k+1))
	}
	return sh
}

// merge merges the shards' runs of the step at load and judges the merge
// by j; the runs of absent shards and of shards that did not play it are
// said missing in the merged run. warn is Reevaluate's warning.
func (sh *stepShares) merge(j Judgement, load float64, absent []string) (st result.CapacityStep, warn string, err error) {
	if len(sh.runs) > 0 {
		merged, err := result.Merge(sh.runs...)
		if err != nil {
			return st, "", err
		}
		merged.Thresholds, _, warn, err = result.Reevaluate(sh.runs, sh.runNames, result.RunMetrics(merged))
		if err != nil {
			return st, "", err
		}
		for _, a := range absent {
			merged.Incomplete = append(merged.Incomplete, "shard "+a+" has no run of this step (no document)")
		}
		for _, un := range sh.unplayed {
			shard, _, _ := strings.Cut(un, " (")
			merged.Incomplete = append(merged.Incomplete, shard+" has no run of this step")
		}
		st = j.Judge(merged, load, sh.runs...)
		if sh.warm && st.Verdict == result.CapTargetDown {
			st.Why = "during the warm-up: " + st.Why
		}
	}
	if sh.downWhy != "" && st.Verdict != result.CapTargetDown {
		st.Verdict, st.Broke, st.Why = result.CapTargetDown, nil, sh.downWhy
	}
	st.Load, st.Drain = load, strings.Join(sh.drains, "; ")
	return st, warn, nil
}

// loadList is a ladder as a flag would give it: "50,100,200".
func loadList(loads []float64) string {
	parts := make([]string, len(loads))
	for i, l := range loads {
		parts[i] = result.FormatLoad(l, "")
	}
	return strings.Join(parts, ",")
}
