package result

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShardCoverageStart: a shard that joined late is named with how late
// it was and what it missed, the merge is INCOMPLETE (nothing reads
// greener than the run was), and shards that did not share one start
// instant are said not to line up in time.
func TestShardCoverageStart(t *testing.T) {
	at := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	shard := func(id string, start time.Time, late time.Duration, missed int64) *Run {
		r := NewRun()
		r.StartedAt = start
		r.Totals.Requests, r.Totals.Successes = 100, 100
		r.Sessions = &Sessions{Started: 100, Completed: 100, DroppedLateStart: missed}
		r.ShardRuns = []ShardRun{{Shard: id, StartAt: start, LateStartNS: late, Sessions: *r.Sessions}}
		return r
	}
	tests := []struct {
		name     string
		runs     []*Run
		warns    []string
		headline string // "" when the merge is not INCOMPLETE
	}{
		{"together", []*Run{shard("0/2", at, 0, 0), shard("1/2", at, 0, 0)}, nil, ""},
		{"one late", []*Run{shard("0/2", at, 0, 0), shard("1/2", at, 4200*time.Millisecond, 84)},
			[]string{"shard 1/2 (b) started 4.2 s after the start instant 2026-11-26T20:00:00Z and joined late: the 84 arrivals due before it joined are counted as dropped starts (late_start), not run"},
			"INCOMPLETE · the load was not all generated (84 arrivals missed by a late start (shard 1/2 started 4.2 s late, missed 84 arrivals))"},
		{"different instants", []*Run{shard("0/2", at, 0, 0), shard("1/2", at.Add(time.Second), 0, 0)},
			[]string{"the shards did not share one start instant (2026-11-26T20:00:00Z, 2026-11-26T20:00:01Z)"}, ""},
		{"one without", []*Run{shard("0/2", at, 0, 0), shard("1/2", time.Time{}, 0, 0)},
			[]string{"(2026-11-26T20:00:00Z, none (each at its own start)): their schedules did not start together"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			warns := ShardCoverage(tc.runs, []string{"a", "b"})
			if len(warns) != len(tc.warns) {
				t.Fatalf("warnings %q, want %d", warns, len(tc.warns))
			}
			for i, w := range tc.warns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %q lacks %q", warns[i], w)
				}
			}
			m, err := Merge(tc.runs...)
			if err != nil {
				t.Fatal(err)
			}
			hl := m.Headline()
			if tc.headline == "" && hl.Status == StatusIncomplete || tc.headline != "" && !strings.HasPrefix(hl.Text, tc.headline) {
				t.Errorf("headline %q, want %q", hl.Text, tc.headline)
			}
			var missed int64
			for _, r := range tc.runs {
				missed += r.Sessions.DroppedLateStart
			}
			if m.Sessions.DroppedLateStart != missed || !slices.Equal(m.LateShards(), lateOf(tc.runs)) {
				t.Errorf("merged late_start %d (want %d), late shards %q", m.Sessions.DroppedLateStart, missed, m.LateShards())
			}
		})
	}
}

func lateOf(runs []*Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.LateShards()...)
	}
	return out
}

func TestSessionsStringLateStart(t *testing.T) {
	s := Sessions{Started: 20, Completed: 20, DroppedLate: 1, DroppedLateStart: 40, MaxActive: 3}
	want := "20 started, 20 completed, 0 failed (0 failed starts), 0 cut at the end, 41 dropped (0 no free client, 1 late, 40 late start), peak 3 live"
	if got := s.String(); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	s.DroppedLateStart = 0
	if got := s.String(); strings.Contains(got, "late start") {
		t.Errorf("%q names a late start there was not", got)
	}
}
