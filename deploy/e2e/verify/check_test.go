package main

import (
	"slices"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestCheck checks what check finds wrong in a merge of two shards: a
// shard out of place, totals that are not the shards' sums, thresholds
// judged on the merge that disagree with their figures.
func TestCheck(t *testing.T) {
	shard := func(s string, sessions, requests, failures int64) *result.Run {
		return &result.Run{
			ShardRuns:  []result.ShardRun{{Shard: s}},
			Totals:     result.Totals{SessionsStarted: sessions, Requests: requests, Failures: failures},
			Thresholds: []result.ThresholdResult{{Name: "errors", Metric: "errors.rate", Op: "<", Limit: 0.5, Pass: true}},
		}
	}
	tests := []struct {
		name   string
		shards []*result.Run
		merged *result.Run
		want   []string
	}{
		{"a good merge",
			[]*result.Run{shard("0/2", 2, 10, 1), shard("1/2", 3, 10, 1)},
			&result.Run{Shards: 2, Totals: result.Totals{SessionsStarted: 5, Requests: 20, Failures: 2},
				Thresholds: []result.ThresholdResult{{Name: "errors", Metric: "errors.rate", Op: "<", Limit: 0.5, Observed: 0.1, Pass: true}}},
			nil},
		{"a bad merge",
			[]*result.Run{shard("0/2", 2, 10, 1), shard("0/2", 0, 10, 1)},
			&result.Run{Shards: 3, Totals: result.Totals{SessionsStarted: 5, Requests: 20, Failures: 2},
				Thresholds: []result.ThresholdResult{{Name: "errors", Metric: "errors.rate", Op: "<", Limit: 0.05, Observed: 0.2, Pass: true}}},
			[]string{
				"shard-1.json is shard 0/2, want 1/2",
				"shard 1 started no session",
				"merged.json merges 3 shards, want 2",
				"merged sessions/requests/failures 5/20/2, the shards' sums 2/20/2",
				`threshold "errors": observed 0.2 < 0.05 is false, recorded true`,
				`threshold "errors": merged observed 0.2, recomputed from the shards' samples 0.1`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(tc.shards, tc.merged); !slices.Equal(got, tc.want) {
				t.Errorf("check:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestCheckFlows: every shard, in its own result and in the merge's, must
// have run the flows mode asked for.
func TestCheckFlows(t *testing.T) {
	run := func(flows ...string) *result.Run {
		r := &result.Run{}
		for i, f := range flows {
			r.ShardRuns = append(r.ShardRuns, result.ShardRun{Shard: string(rune('0'+i)) + "/2", Harness: result.Harness{Flows: f}})
		}
		return r
	}
	tests := []struct {
		name   string
		shards []*result.Run
		merged *result.Run
		want   []string
	}{
		{"all virtual", []*result.Run{run("virtual"), run("virtual")}, run("virtual", "virtual"), nil},
		{"one fell back to sockets", []*result.Run{run("virtual"), run("sockets")}, run("virtual", "sockets"), []string{
			`shard-1.json ran "sockets" flows, want "virtual"`,
			`merged.json: shard 1/2 ran "sockets" flows, want "virtual"`,
		}},
		{"a result from before flows modes", []*result.Run{run(""), run("virtual")}, run("", "virtual"), []string{
			`shard-0.json ran "" flows, want "virtual"`,
			`merged.json: shard 0/2 ran "" flows, want "virtual"`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkFlows(tc.shards, tc.merged, "virtual"); !slices.Equal(got, tc.want) {
				t.Errorf("checkFlows:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
