package engine

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// A recovery drill: with an owned target (Config.Owned) and a schedule
// of faults (Config.Faults), each fault is applied (owned.Apply) at its
// offset from the run's start, in its own goroutine, bounded by the
// run. The outages the watchdog records within a fault's window are
// tagged with it (result.Outage.Fault), and the run's Drill says how
// the target and the load came back (result.FaultResult).

// drill runs a run's faults and keeps what judging them needs.
type drill struct {
	p      *owned.Process
	faults []owned.Fault
	start  time.Time
	wd     *liveness.Watchdog // nil without a watchdog

	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	applied []applied
	failed  []span // the sessions that failed, start to end
}

// applied is what became of one fault.
type applied struct {
	started bool
	at      time.Duration // when the signal was sent
	done    time.Duration // when Apply returned (the restart answered, or SIGCONT sent)
	err     error
}

// span is a failed session's life, as offsets from the run's start: from
// its intended start to its end.
type span struct{ from, to time.Duration }

// maxFailedSpans bounds the failed sessions a drill keeps; past it the
// count of sessions lost is a floor (said in the notes).
const maxFailedSpans = 1 << 20

// newDrill is the drill of cfg.Faults on cfg.Owned for a run that
// started at start, or nil when there is none.
func newDrill(cfg Config, start time.Time) *drill {
	if cfg.Owned == nil || len(cfg.Faults) == 0 {
		return nil
	}
	return &drill{p: cfg.Owned, faults: cfg.Faults, start: start, cancel: func() {}, applied: make([]applied, len(cfg.Faults))}
}

// run schedules the faults, bounded by ctx; wd is the run's watchdog
// (nil without one).
func (d *drill) run(ctx context.Context, wd *liveness.Watchdog) {
	dctx, cancel := context.WithCancel(ctx)
	d.wd, d.cancel = wd, cancel
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		// One after the other: owned.CheckFaults keeps them from
		// overlapping, and a fault waits for the previous one's restart.
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for i, f := range d.faults {
			if !sleepUntil(dctx, timer, time.Until(d.start.Add(f.At))) {
				return
			}
			d.apply(dctx, i, f)
		}
	}()
}

// apply carries out fault i now. A kill is told to the watchdog as soon
// as the process has ended (MarkDown, result.DownExited), so the outage
// starts at the fault, not a probe later.
func (d *drill) apply(ctx context.Context, i int, f owned.Fault) {
	at := time.Since(d.start)
	d.mu.Lock()
	d.applied[i] = applied{started: true, at: at}
	d.mu.Unlock()
	markDone := make(chan struct{})
	if f.Kill != "" && d.wd != nil {
		life := d.p.Current() // its own exit, even once restarted
		go func() {
			defer close(markDone)
			select {
			case <-life.Exited():
			case <-ctx.Done():
				return
			}
			exit, tail, _ := life.Ended()
			d.wd.MarkDown(at, result.DownExited, "drill: "+f.String(), exit, tail)
		}()
	} else {
		close(markDone)
	}
	err := owned.Apply(ctx, d.p, f)
	done := time.Since(d.start)
	<-markDone
	d.mu.Lock()
	d.applied[i].done, d.applied[i].err = done, err
	d.mu.Unlock()
}

// sessionEnded notes a session that ended: a failed one is kept for
// sessions lost.
func (d *drill) sessionEnded(s Start, err error) {
	if err == nil {
		return
	}
	from := s.Intended.Sub(d.start)
	to := time.Since(d.start)
	d.mu.Lock()
	if len(d.failed) < maxFailedSpans {
		d.failed = append(d.failed, span{from, to})
	}
	d.mu.Unlock()
}

// stop ends the faults still under way (a stop fault still sends its
// SIGCONT) and waits for them.
func (d *drill) stop() {
	d.cancel()
	d.wg.Wait()
}

// slack is how long after a fault's end the watchdog may take to see
// its effect and the target answer again: a probe's timeout and two
// intervals.
func (d *drill) slack() time.Duration {
	iv, to := liveness.DefaultInterval, liveness.DefaultTimeout
	if d.wd != nil {
		if d.wd.Interval > 0 {
			iv = d.wd.Interval
		}
		if d.wd.Timeout > 0 {
			to = d.wd.Timeout
		}
	}
	return to + 2*iv
}

// result tags run.Outages with the faults that caused them and returns
// the drill's findings; end is the run's length. Call after stop and
// after the watchdog's outages are in run.
func (d *drill) result(run *result.Run, end time.Duration) *result.Drill {
	d.mu.Lock()
	defer d.mu.Unlock()
	slack := d.slack()
	out := &result.Drill{}
	var since time.Duration // the previous fault's success back, or its end
	for i, f := range d.faults {
		a := d.applied[i]
		if !a.started {
			fr := result.FaultResult{Fault: f.String(), AtNS: f.At, NotApplied: true}
			fr.BaselineSuccess, fr.BaselineSeconds, _, _ = result.SuccessBack(run.TimeSeries, f.At, f.At, since)
			out.Faults = append(out.Faults, fr)
			continue
		}
		out.Faults = append(out.Faults, d.faultResult(run, f, a, end, slack, &since))
	}
	return out
}

// faultResult is what became of fault f, applied as a: the outages it
// caused (tagged in run), whether and when the target and the load's
// success came back after it (since: the previous fault's success back,
// updated for the next), and the sessions it cost. d.mu is held.
func (d *drill) faultResult(run *result.Run, f owned.Fault, a applied, end, slack time.Duration, since *time.Duration) result.FaultResult {
	fr := result.FaultResult{Fault: f.String(), AtNS: a.at}
	if a.err != nil {
		fr.Error = a.err.Error()
	}
	recovered, backAt := d.tagOutages(run, &fr, f, a, end, slack)
	if !fr.WentDown && d.wd != nil && a.err == nil {
		fr.Notes = append(fr.Notes, "never seen down by the watchdog (the fault was shorter than it can see)")
	}
	if d.wd == nil {
		fr.Notes = append(fr.Notes, "no watchdog: whether and when it answered again is not measured (the restart's own check answered)")
	}
	fr.Recovered = recovered
	if recovered && fr.WentDown {
		fr.RecoveredAfterNS = backAt - a.at
	}
	from := backAt
	if !recovered {
		from = end
	}
	var back bool
	var after time.Duration
	fr.BaselineSuccess, fr.BaselineSeconds, back, after = result.SuccessBack(run.TimeSeries, a.at, from, *since)
	if recovered {
		fr.SuccessBack, fr.SuccessBackAfterNS = back, after
	}
	*since = end
	if fr.SuccessBack {
		*since = a.at + after
	}
	if fr.BaselineSeconds == 0 {
		fr.Notes = append(fr.Notes, "no request ended before the fault: the baseline is 100%")
	}
	// Sessions lost: failed, alive at some time between the fault and
	// the target answering again.
	until := end
	if recovered {
		until = backAt
	}
	fr.SessionsLost = d.lostBetween(a.at, until)
	if len(d.failed) >= maxFailedSpans {
		fr.Notes = append(fr.Notes, fmt.Sprintf("sessions lost counted among the first %d failed sessions only", maxFailedSpans))
	}
	return fr
}

// tagOutages tags with fr's fault the untagged outages of run that
// started within its window: from a probe before it (one in flight at a
// SIGSTOP goes unanswered) to the slack after it ended (the run's end
// when it did not end well). It returns whether the target recovered
// (the fault ended well and every such outage is over) and when it was
// last back.
func (d *drill) tagOutages(run *result.Run, fr *result.FaultResult, f owned.Fault, a applied, end, slack time.Duration) (recovered bool, backAt time.Duration) {
	lo := a.at - slack
	hi := end
	switch {
	case a.err != nil || a.done == 0:
	case f.Kill != "":
		hi = a.done + slack
	default:
		hi = a.at + f.Stop + slack
	}
	recovered, backAt = a.err == nil && a.done > 0, a.at
	for j := range run.Outages {
		o := &run.Outages[j]
		if o.Fault != "" || o.StartNS < lo || o.StartNS > hi {
			continue
		}
		if o.Back && o.EndNS <= a.at {
			// Over before the signal was sent: not this fault's.
			continue
		}
		o.Fault = fr.Fault
		fr.WentDown = true
		if !o.Back {
			recovered = false
			continue
		}
		backAt = max(backAt, o.EndNS)
	}
	return recovered, backAt
}

// lostBetween counts the failed sessions alive at some time from at to
// until.
func (d *drill) lostBetween(at, until time.Duration) int64 {
	var n int64
	for _, s := range d.failed {
		if s.to >= at && s.from <= until {
			n++
		}
	}
	return n
}

// drillRooms makes the drill's room check when the protocol has one
// (simclient.Client.RoomCheck) and the target answers; for the other
// protocols it is not made (docs/run.md, Recovery drills).
func drillRooms(ctx context.Context, plan *scenario.Plan, addr netip.AddrPort, timeout time.Duration, start time.Time, wd *liveness.Watchdog) *result.RoomCheck {
	p, ok := simclient.Describe(string(plan.Protocol))
	if !ok || p.RoomCheck == nil {
		return nil
	}
	if wd != nil && wd.Down() {
		return nil
	}
	ctx = context.WithoutCancel(ctx) // also after Ctrl-C: a bounded look
	at := time.Since(start)
	rc := p.RoomCheck(ctx, addr, plan.Options, timeout)
	rc.AtNS = at
	return rc
}
