package engine

import (
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// Observer watches a run at its named moments (Config.Observers): the
// owner of a target process lobbybench started (--target-cmd), the live
// page (--dashboard-addr), a capacity step's sampling of its embedded
// server. A run calls its observers in the order of Config.Observers, at
// each moment it reaches; an observer returns at once. Embed Observes for
// the moments an observer does not watch.
type Observer interface {
	// WatchdogReady is handed the run's watchdog before it starts (not
	// called when the run has none): the hook through which an owned
	// target process's death is reported (Watchdog.MarkDown with
	// result.DownExited, its exit and last output), so it opens or
	// completes the outage the probes see.
	WatchdogReady(*liveness.Watchdog)
	// LoadStart is called with the run's start (the origin of its
	// offsets, Run.StartedAt) as the load begins: an owner of the target
	// process takes its baseline then.
	LoadStart(start time.Time)
	// LiveReady is handed the run's live view as its load starts (Live:
	// the one process's figures, or with RunWorkers the exact merge of
	// its workers' states, the one MetricsAddr serves): what `run
	// --dashboard-addr` shows. RunWorkers's workers must send their states
	// (WorkerMetrics) for it to hold more than their deaths.
	LiveReady(*Live)
}

// TargetObserver is an Observer that owns the target process: its
// figures so far (owned.Process.Snapshot) are the target's in the live
// metrics, in place of an embedded server's, which the run samples
// itself. An owner's figures go to Result.Run.TargetProcess after Run
// returns: that is the owner's to do.
type TargetObserver interface {
	Observer
	TargetTelemetry() *result.TargetProcess
}

// Observes observes nothing: embedded in an Observer, it stands for the
// moments that observer does not watch.
type Observes struct{}

func (Observes) WatchdogReady(*liveness.Watchdog) {}
func (Observes) LoadStart(time.Time)              {}
func (Observes) LiveReady(*Live)                  {}

// watchdogReady hands w to every observer.
func (c Config) watchdogReady(w *liveness.Watchdog) {
	for _, o := range c.Observers {
		o.WatchdogReady(w)
	}
}

// loadStart tells every observer the run's start.
func (c Config) loadStart(start time.Time) {
	for _, o := range c.Observers {
		o.LoadStart(start)
	}
}

// wantsLive reports whether the run has observers to hand a live view.
func (c Config) wantsLive() bool { return len(c.Observers) > 0 }

// liveReady hands l to every observer.
func (c Config) liveReady(l *Live) {
	for _, o := range c.Observers {
		o.LiveReady(l)
	}
}

// targetTelemetry is the first TargetObserver's figures, nil when no
// observer owns the target.
func (c Config) targetTelemetry() func() *result.TargetProcess {
	for _, o := range c.Observers {
		if t, ok := o.(TargetObserver); ok {
			return t.TargetTelemetry
		}
	}
	return nil
}
