package engine

import (
	"fmt"

	"github.com/lobbybench/lobbybench/result"
)

// MergeShards merges the results of the shards of one run exactly
// (result.Merge: histograms merged, counters summed) and evaluates the
// thresholds the shards carry again on the merged data (result.Reevaluate
// with the run's metrics, result.RunMetrics), so a merge judges exactly as
// each shard was judged (for shards written without session counts,
// sessions.completed is the merged sessions_finished count). names label
// the runs in warnings: a scenario that differs, a shard of an i/n run
// given twice or missing, shards carrying different thresholds. `report
// merge` and `run --workers` both merge through it. thresholdsOK is false
// when a threshold failed on the merge.
func MergeShards(runs []*result.Run, names []string) (merged *result.Run, warnings []string, thresholdsOK bool, err error) {
	for i, r := range runs[1:] {
		if r.Scenario != runs[0].Scenario {
			warnings = append(warnings, fmt.Sprintf("%s is of scenario %q, %s of %q", names[i+1], r.Scenario, names[0], runs[0].Scenario))
		}
	}
	warnings = append(warnings, result.ShardCoverage(runs, names)...)
	merged, err = result.Merge(runs...)
	if err != nil {
		return nil, warnings, false, err
	}
	merged.MissingShards = result.MissingShards(runs)
	var warn string
	merged.Thresholds, thresholdsOK, warn, err = result.Reevaluate(runs, names, result.RunMetrics(merged))
	if err != nil {
		return nil, warnings, false, err
	}
	if warn != "" {
		warnings = append(warnings, warn)
	}
	return merged, warnings, thresholdsOK, nil
}
