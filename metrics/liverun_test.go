package metrics

import (
	"reflect"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// TestLiveSetRunAgreesWithSnapshot: the run a live page builds from a
// process's live figures (LiveSet.Run) holds what the final snapshot holds
// of the same records: steps and messages in order with their counters
// and latencies, the totals, the violations per rule; and the merge of
// workers' sets (Merged.LiveSet) gives the same run.
func TestLiveSetRunAgreesWithSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
		fails   bool
	}{{"nothing yet", 0, false}, {"successes only", 40, false}, {"with failures and a violation", 200, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector(t0)
			halves := []*Collector{NewCollector(t0), NewCollector(t0)}
			for i := range tc.records {
				for _, col := range []*Collector{c, halves[i%2]} {
					r := col.NewRecorder()
					list, join, msg := col.Step("list_rooms"), col.Step("join"), col.Message("JoinReply")
					d := time.Duration(100+i*13) * time.Microsecond
					r.Record(list, t0, t0.Add(d/4), at(d))
					r.Record(msg, t0, t0, at(2*d))
					if tc.fails && i%7 == 0 {
						r.Fail(join, result.ReasonTimeout, at(time.Second))
						r.Violation("U-CRC", at(time.Second), []byte{1}, nil, "")
					} else {
						r.Record(join, t0, t0, at(3*d))
					}
					r.SessionStarted()
				}
			}
			snap, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			live, err := c.LiveSet().Run(t0, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			m := NewMerged(t0, 2)
			for i, h := range halves {
				st, err := h.LiveState()
				if err != nil {
					t.Fatal(err)
				}
				set, err := st.Decode()
				if err != nil {
					t.Fatal(err)
				}
				m.Set(i, set)
			}
			merged, err := m.LiveSet().Run(t0, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []*result.Run{live, merged} {
				if got.Totals.Requests != snap.Totals.Requests || got.Totals.Failures != snap.Totals.Failures ||
					got.Totals.Violations != snap.Totals.Violations || got.Totals.SessionsStarted != snap.Totals.SessionsStarted ||
					!reflect.DeepEqual(got.Totals.FailuresByReason, snap.Totals.FailuresByReason) {
					t.Errorf("totals %+v, the snapshot's %+v", got.Totals, snap.Totals)
				}
				if len(got.Steps) != len(snap.Steps) || len(got.Messages) != len(snap.Messages) || len(got.Violations) != len(snap.Violations) {
					t.Fatalf("%d steps, %d messages, %d violations; the snapshot has %d, %d, %d",
						len(got.Steps), len(got.Messages), len(got.Violations), len(snap.Steps), len(snap.Messages), len(snap.Violations))
				}
				for i, s := range got.Steps {
					w := snap.Steps[i]
					if s.Name != w.Name || s.Requests != w.Requests || s.Latency != w.Latency || s.Uncorrected != w.Uncorrected || s.SendLag != w.SendLag {
						t.Errorf("step %d: %s %d requests p99 %d; the snapshot's %s %d p99 %d", i, s.Name, s.Requests, s.Latency.P99US, w.Name, w.Requests, w.Latency.P99US)
					}
				}
				for i, v := range got.Violations {
					if v.Rule != snap.Violations[i].Rule || v.Count != snap.Violations[i].Count {
						t.Errorf("violation %d: %s %d; the snapshot's %s %d", i, v.Rule, v.Count, snap.Violations[i].Rule, snap.Violations[i].Count)
					}
				}
				if got.DurationNS != 3*time.Second || !got.StartedAt.Equal(t0) {
					t.Errorf("start %v, duration %v", got.StartedAt, got.DurationNS)
				}
			}
		})
	}
}

// TestMergeLiveOutages: the workers' outages merge as a merged result's
// do: overlapping intervals become one, open if any is; their session
// counts add up, and reach the run.
func TestMergeLiveOutages(t *testing.T) {
	a := LiveSet{Outages: []result.Outage{{StartNS: time.Second, EndNS: 3 * time.Second, Back: true, Kind: result.DownRefused}},
		Sessions: &result.Sessions{Started: 5, Completed: 3, FailedStarts: 1}}
	b := LiveSet{Outages: []result.Outage{{StartNS: 2 * time.Second, Kind: result.DownRefused}}}
	c := LiveSet{Sessions: &result.Sessions{Started: 2, Completed: 2}}
	if s := MergeLive([]LiveSet{b}).Sessions; s != nil {
		t.Fatalf("no set has sessions, the merge has %+v", s)
	}
	m := MergeLive([]LiveSet{a, b, c})
	run, err := m.Run(t0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if run.Sessions == nil || *run.Sessions != (result.Sessions{Started: 7, Completed: 5, FailedStarts: 1}) || len(run.MissingLoad()) != 1 {
		t.Fatalf("sessions %+v, missing load %q", run.Sessions, run.MissingLoad())
	}
	got := m.Outages
	if len(got) != 1 || got[0].Back || got[0].StartNS != time.Second {
		t.Fatalf("merged outages %+v, want one from 1s, not back", got)
	}
	if len(a.Outages) != 1 || !a.Outages[0].Back {
		t.Fatalf("the set was changed: %+v", a.Outages)
	}
}
