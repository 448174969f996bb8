package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// momentLog is an Observer that writes down the moments it is told, each
// as "name moment", into a log it shares with others; onWatchdog, when
// set, is what it does with the watchdog.
type momentLog struct {
	name       string
	log        *[]string
	start      time.Time
	live       *Live
	onWatchdog func(*liveness.Watchdog)
}

func (r *momentLog) WatchdogReady(w *liveness.Watchdog) {
	*r.log = append(*r.log, r.name+" watchdog")
	if r.onWatchdog != nil {
		r.onWatchdog(w)
	}
}

func (r *momentLog) LoadStart(start time.Time) {
	*r.log = append(*r.log, r.name+" start")
	r.start = start
}

func (r *momentLog) LiveReady(l *Live) {
	*r.log = append(*r.log, r.name+" live")
	r.live = l
}

// owner is a TargetObserver whose figures are tp.
type owner struct {
	Observes
	tp *result.TargetProcess
}

func (o owner) TargetTelemetry() *result.TargetProcess { return o.tp }

// TestObserversMoments: every observer is told every moment of a run
// with no watchdog, in the order of Config.Observers: the start, then the
// live view.
func TestObserversMoments(t *testing.T) {
	var log []string
	a, b := &momentLog{name: "a", log: &log}, &momentLog{name: "b", log: &log}
	res, err := Run(context.Background(), Config{Plan: mustPlan(t, fakeYAML), Factory: fakeFactory(time.Millisecond), Watchdog: -1,
		Observers: []Observer{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a start", "b start", "a live", "b live"}; !slices.Equal(log, want) {
		t.Errorf("moments %q, want %q", log, want)
	}
	for _, r := range []*momentLog{a, b} {
		if !r.start.Equal(res.Run.StartedAt) {
			t.Errorf("%s: start %v, the run started at %v", r.name, r.start, res.Run.StartedAt)
		}
		if r.live == nil {
			t.Errorf("%s: no live view", r.name)
		}
	}
}

// TestConfigTargetTelemetry: the live metrics' target figures are the
// first TargetObserver's, none without one.
func TestConfigTargetTelemetry(t *testing.T) {
	first, second := &result.TargetProcess{Command: "first"}, &result.TargetProcess{Command: "second"}
	var log []string
	tests := []struct {
		name      string
		observers []Observer
		want      *result.TargetProcess
	}{
		{"none", nil, nil},
		{"no owner", []Observer{&momentLog{log: &log}}, nil},
		{"the first owner", []Observer{&momentLog{log: &log}, owner{tp: first}, owner{tp: second}}, first},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Config{Observers: tc.observers}.targetTelemetry()
			if (f == nil) != (tc.want == nil) {
				t.Fatalf("telemetry %v, want one: %v", f != nil, tc.want != nil)
			}
			if f != nil && f() != tc.want {
				t.Errorf("telemetry of %q, want %q", f().Command, tc.want.Command)
			}
		})
	}
}
