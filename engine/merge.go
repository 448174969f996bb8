package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

// MergeShards merges the results of the shards of one run exactly
// (reports.Merge: histograms merged, counters summed) and evaluates the
// thresholds the shards carry again on the merged data, with the engine's
// metric lookup, so a merge judges exactly as each shard was judged (for
// shards written without session counts, sessions.completed is the merged
// sessions_finished count). names label the runs in warnings: a scenario
// that differs, a shard of an i/n run given twice or missing, shards
// carrying different thresholds. `report merge` and `run --workers` both
// merge through it. thresholdsOK is false when a threshold failed on the
// merge.
func MergeShards(runs []*reports.Run, names []string) (merged *reports.Run, warnings []string, thresholdsOK bool, err error) {
	for i, r := range runs[1:] {
		if r.Scenario != runs[0].Scenario {
			warnings = append(warnings, fmt.Sprintf("%s is of scenario %q, %s of %q", names[i+1], r.Scenario, names[0], runs[0].Scenario))
		}
	}
	warnings = append(warnings, shardCoverage(runs, names)...)
	merged, err = reports.Merge(runs...)
	if err != nil {
		return nil, warnings, false, err
	}
	ths, srcThresholds, warn, err := shardThresholds(runs, names)
	if err != nil {
		return nil, warnings, false, err
	}
	if warn != "" {
		warnings = append(warnings, warn)
	}
	results, thOK := scenario.Evaluate(ths, MetricLookup(merged, nil))
	merged.Thresholds = make([]reports.ThresholdResult, 0, len(results))
	for i, r := range results {
		tr := srcThresholds[i] // keeps the shards' metric/step naming
		r.SetVerdict(&tr)
		merged.Thresholds = append(merged.Thresholds, tr)
	}
	return merged, warnings, thOK, nil
}

// shardCoverage checks the shard ids ("i/n") of the runs to merge: a shard
// of a sharded run given twice would count its load twice, and a missing
// one leaves the merge covering part of the run. Unsharded runs ("0/1")
// are not checked. It returns one warning per problem.
func shardCoverage(runs []*reports.Run, names []string) []string {
	var warns []string
	seen := map[string]string{}
	count := 0 // the n shared by every sharded run; -1 when they differ
	for i, r := range runs {
		for _, s := range r.ShardRuns {
			var k, n int
			if _, err := fmt.Sscanf(s.Shard, "%d/%d", &k, &n); err != nil || n <= 1 {
				continue
			}
			switch {
			case count == 0:
				count = n
			case count != n:
				count = -1
			}
			if prev, ok := seen[s.Shard]; ok {
				warns = append(warns, fmt.Sprintf("shard %s is in both %s and %s: its load is counted twice", s.Shard, prev, names[i]))
				continue
			}
			seen[s.Shard] = names[i]
		}
	}
	if count > 1 {
		var missing []string
		for k := range count {
			if id := fmt.Sprintf("%d/%d", k, count); seen[id] == "" {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			warns = append(warns, fmt.Sprintf("shard(s) %s missing: the merge covers part of the run", strings.Join(missing, ", ")))
		}
	}
	return warns
}

// shardThresholds rebuilds the scenario thresholds the shards were judged
// by from their results (every field Evaluate needs is in
// reports.ThresholdResult, in canonical units), taking the first shard that
// has any, and returns those results too; warn is set when shards disagree.
func shardThresholds(runs []*reports.Run, names []string) (ts []scenario.Threshold, src []reports.ThresholdResult, warn string, err error) {
	first := -1
	for i, r := range runs {
		if len(r.Thresholds) > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, nil, "", nil
	}
	key := func(r *reports.Run) []string {
		var k []string
		for _, t := range r.Thresholds {
			k = append(k, t.Name)
		}
		return k
	}
	for i, r := range runs {
		if len(r.Thresholds) > 0 && !slices.Equal(key(r), key(runs[first])) {
			warn = fmt.Sprintf("%s and %s carry different thresholds; evaluating those of %s", names[first], names[i], names[first])
			break
		}
	}
	src = runs[first].Thresholds
	for _, t := range src {
		switch t.Op {
		case "<", "<=", ">", ">=", "==", "!=":
		default:
			return nil, nil, "", fmt.Errorf("%s: threshold %q has unknown comparison %q", names[first], t.Name, t.Op)
		}
		metric := t.Metric
		if t.Step != "" {
			metric = t.Step + "." + t.Metric
		}
		ts = append(ts, scenario.Threshold{Source: t.Name, Metric: metric, Op: scenario.Op(t.Op), Value: t.Limit})
	}
	return ts, src, warn, nil
}
