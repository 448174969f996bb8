package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// TestDrillResult judges recorded faults without a process: which
// outages each fault tags, recovery, sessions lost, and the faults that
// never went down, failed or were never applied.
func TestDrillResult(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	kill := owned.Fault{At: 2 * s, Kill: "SIGKILL"}
	stop := owned.Fault{At: 5 * s, Stop: 500 * ms}
	steady := []result.Point{{Second: 0, Requests: 100}, {Second: 1, Requests: 100}, {Second: 2, Requests: 100, Errors: 50},
		{Second: 3, Requests: 100}, {Second: 4, Requests: 100}, {Second: 5, Requests: 100}, {Second: 6, Requests: 100}, {Second: 7, Requests: 100}}
	// An outage no fault caused: TARGET DOWN whatever the drill.
	other := result.Outage{StartNS: 500 * ms, EndNS: 700 * ms, Back: true, Kind: result.DownSilent}
	tests := []struct {
		name      string
		faults    []owned.Fault
		applied   []applied
		outages   []result.Outage
		wantTags  []string // each outage's Fault after
		recovered []bool
		after     []time.Duration
		lost      []int64
		note      string // in some fault's line
		down      bool   // TARGET DOWN
	}{
		{"kill and a stop never seen",
			[]owned.Fault{kill, stop},
			[]applied{{started: true, at: 2 * s, done: 2*s + 300*ms}, {started: true, at: 5 * s, done: 5*s + 500*ms}},
			[]result.Outage{other, {StartNS: 2 * s, EndNS: 2*s + 400*ms, Back: true, Kind: result.DownExited}},
			[]string{"", kill.String()}, []bool{true, true}, []time.Duration{400 * ms, 0}, []int64{2, 0}, "never seen down", true},
		// A load hiccup the watchdog saw just before the kill (inside the
		// window's slack, over before the signal) is not the fault's: it
		// stays TARGET DOWN, and the fault's recovery is its own outage's.
		{"an outage over before the signal",
			[]owned.Fault{kill},
			[]applied{{started: true, at: 2 * s, done: 2*s + 300*ms}},
			[]result.Outage{{StartNS: 2*s - 300*ms, EndNS: 2*s - 100*ms, Back: true, Kind: result.DownSilent},
				{StartNS: 2 * s, EndNS: 2*s + 400*ms, Back: true, Kind: result.DownExited}},
			[]string{"", kill.String()}, []bool{true}, []time.Duration{400 * ms}, []int64{2}, "answers again after 400 ms", true},
		{"restart failed",
			[]owned.Fault{kill},
			[]applied{{started: true, at: 2 * s, done: 3 * s, err: errors.New("restart: exited with status 3")}},
			[]result.Outage{{StartNS: 2 * s, Kind: result.DownExited}},
			[]string{kill.String()}, []bool{false}, []time.Duration{0}, []int64{3}, "status 3", true},
		{"not applied",
			[]owned.Fault{kill, stop},
			[]applied{{started: true, at: 2 * s, done: 2*s + 100*ms}, {}},
			[]result.Outage{{StartNS: 2 * s, EndNS: 2*s + 200*ms, Back: true, Kind: result.DownExited}},
			[]string{kill.String()}, []bool{true, false}, []time.Duration{200 * ms, 0}, []int64{2, 0}, "not applied", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &drill{faults: tt.faults, applied: tt.applied, wd: &liveness.Watchdog{Interval: 100 * ms, Timeout: 250 * ms},
				// Failed sessions: one before any fault, two across the
				// kill, one during the rest of the run.
				failed: []span{{0, 1 * s}, {1 * s, 2*s + 100*ms}, {2*s + 100*ms, 2*s + 150*ms}, {6 * s, 7 * s}}}
			run := &result.Run{TimeSeries: steady, Outages: append([]result.Outage(nil), tt.outages...)}
			dr := d.result(run, 8*s)
			if len(dr.Faults) != len(tt.faults) {
				t.Fatalf("%d results, want %d", len(dr.Faults), len(tt.faults))
			}
			for i, o := range run.Outages {
				if o.Fault != tt.wantTags[i] {
					t.Errorf("outage %d tagged %q, want %q", i, o.Fault, tt.wantTags[i])
				}
			}
			noted := false
			for i, f := range dr.Faults {
				if f.Recovered != tt.recovered[i] || f.RecoveredAfterNS != tt.after[i] || f.SessionsLost != tt.lost[i] {
					t.Errorf("fault %d: recovered %v after %s, %d lost; want %v after %s, %d lost (%s)", i,
						f.Recovered, f.RecoveredAfterNS, f.SessionsLost, tt.recovered[i], tt.after[i], tt.lost[i], f.Line())
				}
				if strings.Contains(f.Line(), tt.note) {
					noted = true
				}
			}
			if !noted {
				t.Errorf("no fault says %q: %v", tt.note, dr.Lines())
			}
			run.Drill = dr
			run.NoteTargetDown()
			if down := run.TargetDown != ""; down != tt.down {
				t.Errorf("TARGET DOWN %q, want down %v", run.TargetDown, tt.down)
			}
		})
	}
}
