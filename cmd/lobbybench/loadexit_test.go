package main

import (
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestRunExitVerdicts: the exit code of a result whose load fell short or
// never came: the closed model's live clients far below the ask, and no
// load at all, are incomplete (6), ahead of a threshold's breach.
func TestRunExitVerdicts(t *testing.T) {
	run := func(requests int64, s result.Sessions, pass bool) *result.Run {
		r := result.NewRun()
		r.Totals.Requests, r.Totals.Successes = requests, requests
		r.Sessions = &s
		r.ShardRuns = []result.ShardRun{{Shard: "0/1", Model: "closed", Sessions: s}}
		r.Thresholds = []result.ThresholdResult{{Name: "t", Pass: pass}}
		return r
	}
	tests := []struct {
		name string
		run  *result.Run
		ok   bool
		code int
	}{
		{"clients up", run(100, result.Sessions{Started: 10, ClientsAsked: 10, ClientsPeak: 10}, true), true, exitOK},
		{"clients short", run(9068, result.Sessions{Started: 9068, ClientsAsked: 1000000, ClientsPeak: 5118}, true), true, exitIncomplete},
		{"clients short and a breach", run(9068, result.Sessions{Started: 9068, ClientsAsked: 1000000, ClientsPeak: 5118}, false), false, exitIncomplete},
		{"no load", run(0, result.Sessions{}, false), false, exitIncomplete},
		{"a breach", run(100, result.Sessions{Started: 10, ClientsAsked: 10, ClientsPeak: 10}, false), false, exitThreshold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runExit(tt.run, false, tt.ok); got != tt.code {
				t.Errorf("exit %d, want %d (headline %q)", got, tt.code, tt.run.Headline().Text)
			}
		})
	}
}
