package engine

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// MaxWatchdogTimeout caps the probe timeout a scenario's request
// timeouts give the watchdog (watchdogTimeout).
const MaxWatchdogTimeout = 5 * time.Second

// watchdogTimeout is how long one watchdog probe waits for its answer:
// the scenario's shortest request timeout, within
// [liveness.DefaultTimeout, MaxWatchdogTimeout]. A loaded server that
// answers its clients within their timeout is not hung, so its probe is
// given as long; liveness.DefaultSilentAfter such probes in a row must go
// unanswered before it counts as down.
func watchdogTimeout(plan *scenario.Plan) time.Duration {
	shortest := time.Duration(0)
	for _, f := range plan.Flows {
		for _, s := range f.Steps {
			if t := s.Policy.Timeout; t > 0 && (shortest == 0 || t < shortest) {
				shortest = t
			}
		}
	}
	return min(max(shortest, liveness.DefaultTimeout), MaxWatchdogTimeout)
}

// watchProbe is the protocol's watchdog probe: its Watch, or its Reach.
// A probe that could not open its socket for a local reason (the
// generator out of descriptors or ports: simclient.OpenFailure) is
// inconclusive, not the target down.
func watchProbe(p *simclient.Client, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) liveness.Probe {
	check := func(ctx context.Context) error {
		if p.Watch != nil {
			return p.Watch(ctx, addr, opts, timeout)
		}
		_, err := p.Reach(ctx, addr, opts, timeout)
		return err
	}
	return func(ctx context.Context) error {
		err := check(ctx)
		if err != nil {
			if _, local := simclient.OpenFailure(err); simclient.IsFailedStart(local) {
				return fmt.Errorf("%w: %w", liveness.ErrInconclusive, err)
			}
		}
		return err
	}
}

// watch is a run's watchdog: the liveness.Watchdog, what the load had
// answered when each outage was first seen, and the goroutine running
// it.
type watch struct {
	w      *liveness.Watchdog
	col    *metrics.Collector
	cancel context.CancelFunc
	done   chan struct{}
	// settle is the longest a request of the plan can take (settleTime):
	// failures later than that after an outage are of requests sent once
	// the target was back.
	settle time.Duration
	start  time.Time // the run's, the outages' origin

	mu       sync.Mutex
	answered map[time.Duration]int64 // by outage start
	history  [8]probeStart           // the last probes' starts, a ring
	next     int
}

// answeredSince reports whether the load had requests answered after the
// probe that started at offset at began: the target answered its
// clients, whatever became of the watchdog's probes (a rate limit can
// drop them).
func (x *watch) answeredSince(at time.Duration) bool {
	now := x.col.Live().Successes
	x.mu.Lock()
	defer x.mu.Unlock()
	return now > x.answeredAt(at)
}

// probeStart is the load's successes when a probe started, at offset at.
type probeStart struct {
	at        time.Duration
	successes int64
}

// answeredAt is the load's successes at the start of the probe that
// started at offset from (the watchdog's own reading of the clock comes
// a moment before the probe's), or now when no recent probe did (an
// outage reported by MarkDown). Callers hold x.mu.
func (x *watch) answeredAt(from time.Duration) int64 {
	best := -1
	for i, h := range x.history {
		if i < x.next && h.at >= from && (best < 0 || h.at < x.history[best].at) {
			best = i
		}
	}
	if best < 0 {
		return x.col.Live().Successes
	}
	return x.history[best].successes
}

// startWatch starts the watchdog of a run that started at start; note
// prints a line at once (above the progress bar) when the target goes
// down or comes back. hook, when set, gets the watchdog before it starts
// (Observer.WatchdogReady).
func startWatch(ctx context.Context, cfg Config, p *simclient.Client, plan *scenario.Plan, addr netip.AddrPort, col *metrics.Collector, start time.Time, note func(string)) *watch {
	timeout := cfg.WatchdogTimeout
	if timeout <= 0 {
		timeout = watchdogTimeout(plan)
	}
	x := &watch{col: col, done: make(chan struct{}), answered: map[time.Duration]int64{}, settle: settleTime(plan), start: start}
	probe := watchProbe(p, addr, plan.Options, timeout)
	// OnChange runs in the watchdog's goroutine and in whoever calls
	// MarkDown (an owned server's end, seen by cmd): one note at a time,
	// whatever writer Warnings is.
	var noteMu sync.Mutex
	x.w = &liveness.Watchdog{
		Probe: func(ctx context.Context) error {
			// What the load had answered as each probe started: an
			// outage's AnsweredBefore is the figure at its first failed
			// probe (a hang is declared a probe or more later).
			at := time.Since(start)
			x.mu.Lock()
			x.history[x.next%len(x.history)] = probeStart{at, col.Live().Successes}
			x.next++
			x.mu.Unlock()
			if cfg.Owned == nil {
				return probe(ctx)
			}
			life := cfg.Owned.Current()
			err := probe(ctx)
			exitWins(x.w, life, at, err, reapWait)
			return err
		},
		Interval: cfg.Watchdog,
		Timeout:  timeout,
		Start:    start,
		OnChange: func(o result.Outage) {
			if !o.Back {
				x.mu.Lock()
				x.answered[o.StartNS] = x.answeredAt(o.StartNS)
				x.mu.Unlock()
			}
			if note != nil {
				noteMu.Lock()
				note(outageNote(addr, o))
				noteMu.Unlock()
			}
		},
	}
	cfg.watchdogReady(x.w)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	x.cancel = cancel
	go func() {
		defer close(x.done)
		x.w.Run(wctx)
	}()
	return x
}

// reapWait bounds how long a refused probe of an owned target waits for
// its process's end (exitWins).
const reapWait = time.Second

// exitWins makes an owned process's end win over what a probe started at
// offset at saw of it: the kernel closes a killed process's sockets
// before its parent reaps it, so a probe can find the port refused
// before the exit is known, and the outage then read "refuses
// connections" or "exited" by the race. A refused probe (err) of the
// process life waits up to wait for its end and, when it came, marks
// the target down with its exit before the refusal is observed.
func exitWins(w *liveness.Watchdog, life owned.Life, at time.Duration, err error, wait time.Duration) {
	if liveness.Classify(err) != result.DownRefused {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-life.Exited():
	case <-t.C:
		return // still running: the refusal stands
	}
	exit, tail, _ := life.Ended()
	w.MarkDown(at, result.DownExited, "", exit, tail)
}

// info is the watchdog's part of Info, after stop.
func (x *watch) info() *WatchdogInfo {
	made, answered := x.w.Probes()
	iv := x.w.Interval
	if iv <= 0 {
		iv = liveness.DefaultInterval
	}
	return &WatchdogInfo{IntervalNS: iv, TimeoutNS: x.w.Timeout, Probes: made, Answered: answered}
}

// outageNote is the line printed when the target goes down or comes back.
func outageNote(addr netip.AddrPort, o result.Outage) string {
	if o.Back {
		return fmt.Sprintf("lobbybench: target %v answers again at +%s (down %s)", addr, secs(o.EndNS), secs(o.EndNS-o.StartNS))
	}
	why := o.Detail
	if o.Kind == result.DownExited && o.Exit != "" {
		why = o.Exit
	}
	line := fmt.Sprintf("lobbybench: TARGET DOWN at +%s: %v %s", secs(o.StartNS), addr, map[string]string{
		result.DownRefused: "refuses connections", result.DownSilent: "stopped answering", result.DownExited: "exited",
		result.DownClosed: "closes connections unanswered", result.DownGarbled: "answers, but not in its protocol",
	}[o.Kind])
	if why != "" {
		line += " (" + why + ")"
	}
	return line
}

// outages returns the watchdog's outages so far, each with the steps that
// failed during it (During), what it cost (Failures) and the successes
// recorded before it began (AnsweredBefore): what stop records, and what
// a live view shows while the run lasts (one still going counts its
// failures up to now).
func (x *watch) outages() []result.Outage {
	out := x.w.Outages()
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range out {
		o := &out[i]
		to := time.Duration(0)
		if o.Back {
			to = o.EndNS
		}
		// From the last answered probe: a request refused or timed out
		// after it failed while the target was going down.
		o.Failures, o.During = x.col.FailuresIn(o.LastUpNS, to)
		o.AnsweredBefore = x.answered[o.StartNS]
		if o.Back && (o.Kind == result.DownRefused || o.Kind == result.DownExited) {
			// A new process answers: what failed of the requests sent to
			// it, up to the next outage, its lost state cost.
			from := roundUp(o.EndNS+x.settle, metrics.FailResolution)
			until := time.Duration(0)
			if i+1 < len(out) {
				until = out[i+1].LastUpNS
			}
			if until == 0 || until > from {
				o.FailuresAfter, _ = x.col.FailuresIn(from, until)
			}
		}
	}
	return out
}

// settleTime is the longest a request of plan can take, all its tries:
// a failure that long after the target came back is of a request sent
// once it was back.
func settleTime(plan *scenario.Plan) time.Duration {
	longest := time.Duration(0)
	for _, f := range plan.Flows {
		for _, s := range f.Steps {
			p := s.Policy
			longest = max(longest, p.Timeout*time.Duration(p.Retries+1)+p.RetryInterval*time.Duration(p.Retries))
		}
	}
	return longest
}

func roundUp(d, to time.Duration) time.Duration { return (d + to - 1) / to * to }

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// stop ends the watchdog and fills run's outages: each with the steps
// that failed during it (During), what it cost (Failures), and the
// successes recorded before it began (AnsweredBefore); and
// Totals.FailuresWhileDown; and SilentAtEnd, when the run ended with
// the target silent to its probes and its clients alike (the run judges
// how long: assemble).
func (x *watch) stop(run *result.Run) {
	end := time.Since(x.start)
	x.cancel()
	<-x.done
	if s, ok := x.w.SilentAtEnd(); ok && !x.answeredSince(s.Latest) {
		run.SilentAtEnd = &result.SilentEnd{SinceNS: s.Since, LastUpNS: s.LastUp, EndNS: end}
	}
	out := x.outages()
	if len(out) == 0 {
		return
	}
	total := map[string]int64{}
	for _, o := range out {
		for r, n := range o.Failures {
			total[r] += n
		}
	}
	run.Outages = out
	if len(total) > 0 {
		run.Totals.FailuresWhileDown = total
	}
}
