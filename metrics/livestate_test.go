package metrics

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// TestMergedLiveEqualsOneProcess: the same records split over n
// processes, each sending its LiveState as JSON (a --workers worker's
// progress line), merge (Merged) into exactly the figures of one process
// that recorded them all: counters, reasons, violations, and histograms
// equal value for value, with a process that sent nothing yet.
func TestMergedLiveEqualsOneProcess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		procs int
	}{{"one process", 1}, {"two workers", 2}, {"three workers, one silent", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			whole := NewCollector(t0)
			parts := make([]*Collector, tc.procs)
			for i := range parts {
				parts[i] = NewCollector(t0)
			}
			record := func(c *Collector, i int) {
				r := c.NewRecorder()
				list, join, msg := c.Step("list_rooms"), c.Step("join"), c.Message("JoinReply")
				d := time.Duration(100+i*37) * time.Microsecond
				r.Record(list, t0, t0.Add(d/3), at(d))
				r.Record(msg, t0, t0, at(2*d))
				if i%5 == 0 {
					r.Fail(join, result.ReasonTimeout, at(time.Second))
					r.Retry(join)
					r.Violation("U-CRC", at(time.Second), []byte{1}, nil, "")
				}
				r.SessionStarted()
			}
			for i := range 300 {
				record(whole, i)
				// The last process records nothing when there are three.
				record(parts[i%max(tc.procs-tc.procs/3, 1)], i)
			}
			m := NewMerged(t0, tc.procs)
			for i, c := range parts {
				if c.Live().SessionsStarted == 0 {
					continue
				}
				st, err := c.LiveState()
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				var back LiveState
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				set, err := back.Decode()
				if err != nil {
					t.Fatal(err)
				}
				m.Set(i, set)
			}
			if got, want := m.Live(), whole.Live(); got != want {
				t.Errorf("Live %+v, want %+v", got, want)
			}
			if got, want := m.LiveViolations(), whole.LiveViolations(); !reflect.DeepEqual(got, want) {
				t.Errorf("violations %v, want %v", got, want)
			}
			got, want := m.LiveKeys(), whole.LiveKeys()
			if len(got) != len(want) {
				t.Fatalf("%d keys, want %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Name != w.Name || g.Kind != w.Kind || g.Successes != w.Successes || g.Failures != w.Failures ||
					g.Retries != w.Retries || !reflect.DeepEqual(g.FailuresByReason, w.FailuresByReason) {
					t.Errorf("key %d: %+v, want %+v", i, g, w)
				}
				if !reflect.DeepEqual(g.Corrected.Export(), w.Corrected.Export()) || !reflect.DeepEqual(g.Uncorrected.Export(), w.Uncorrected.Export()) ||
					!reflect.DeepEqual(g.SendLag.Export(), w.SendLag.Export()) {
					t.Errorf("key %s: merged histograms differ from one process's", w.Name)
				}
			}
		})
	}
}

// TestLiveStateBadHistogram: a state whose histogram does not decode is
// an error naming the key, not a panic or a silent zero.
func TestLiveStateBadHistogram(t *testing.T) {
	s := LiveState{Keys: []LiveKeyState{{Name: "join", Corrected: "not a histogram"}}}
	if _, err := s.Decode(); err == nil || !strings.Contains(err.Error(), "join") {
		t.Errorf("Decode: %v, want an error naming join", err)
	}
}
