// Package liveness watches whether a target is still alive, for any
// protocol: it classifies a failed reachability check as "refused"
// (nothing listens: the process is gone), "closed" (it accepts TCP
// connections and closes or resets them unanswered), "garbled" (it
// answers, but not in its protocol) or "silent" (it accepts or receives
// and answers nothing: hung), and a Watchdog probes a target a
// few times a second on its own socket, recording the intervals during
// which it did not answer (result.Outage). `run` runs a Watchdog beside
// the load; `conform` classifies the check it makes after every case.
//
// The probe is the protocol's own reachability check, passed in as a
// function, so this package names no protocol.
package liveness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// Probe checks once that the target answers; nil means it did. It must
// return within the context's deadline. Errors that wrap
// syscall.ECONNREFUSED (a TCP reset on connect, an ICMP port unreachable
// on a connected UDP socket) classify as refused, anything else as
// silent.
type Probe func(ctx context.Context) error

// ErrInconclusive, wrapped in a probe's error, says the probe could not
// be made for a reason of the prober's own (its process out of file
// descriptors, no free port): it proves nothing about the target, so
// Observe counts it as made and neither up nor down. Without it a
// harness out of descriptors read as a dead target.
var ErrInconclusive = errors.New("the probe could not be made here")

// ErrGarbled, wrapped in a probe's error, says the target answered with
// something that does not decode as its protocol: it is there and
// sending, not silent, but not a server of the protocol either.
var ErrGarbled = errors.New("bytes that do not decode as the protocol")

// Closed says what a TCP peer that accepted the connection did with a
// request (what, "LIST_ROOMS_REQ") instead of answering it, for an err
// met writing it or reading the reply: it closed the connection (EOF) or
// reset it (ECONNRESET, EPIPE); err is wrapped, so Classify reads it as
// result.DownClosed. Any other err is returned wrapped as it is ("what:
// err"). With what empty it is about the dial: a connection reset as it
// was accepted says so, any other err is returned as it is.
func Closed(what string, err error) error {
	if what == "" {
		if errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("reset the connection as it was accepted (%w)", err)
		}
		return err
	}
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("closed the connection after accept, without answering %s (%w)", what, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("closed the connection after accept, in the middle of its reply to %s (%w)", what, err)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("reset the connection after accept, without answering %s (%w)", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Classify says how a failed probe found the target: result.DownRefused
// when nothing listens (the error wraps ECONNREFUSED), result.DownClosed
// when it accepted a connection and closed or reset it unanswered (the
// error wraps io.EOF or ECONNRESET), result.DownGarbled when it answered
// with what is not its protocol (ErrGarbled), result.DownSilent
// otherwise (a timeout: something may be there, but it did not answer).
// A nil error classifies as "".
func Classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNREFUSED):
		return result.DownRefused
	case errors.Is(err, syscall.ECONNRESET):
		// Also on a dial: the handshake was completed, then reset.
		return result.DownClosed
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !op.Timeout() {
		// A dial that failed at once for another reason (no route,
		// address not available) is as good as refused: nothing can be
		// reached there.
		return result.DownRefused
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return result.DownClosed
	case errors.Is(err, ErrGarbled):
		return result.DownGarbled
	}
	return result.DownSilent
}

// Defaults of a Watchdog.
const (
	DefaultInterval = 250 * time.Millisecond
	DefaultTimeout  = time.Second
	// DefaultSilentAfter is how many probes in a row must go unanswered
	// before a silent target counts as down: one lost probe under load is
	// not a hang. A refused probe counts at once.
	DefaultSilentAfter = 2
)

// Watchdog probes a target every Interval and records its outages. Set
// the fields, then call Run once; Outages may be called at any time,
// from any goroutine.
type Watchdog struct {
	// Probe is the protocol's reachability check. Required.
	Probe Probe
	// Interval is the time from one probe's start to the next; 0 means
	// DefaultInterval.
	Interval time.Duration
	// Timeout bounds one probe; 0 means DefaultTimeout.
	Timeout time.Duration
	// SilentAfter is DefaultSilentAfter when 0.
	SilentAfter int
	// Start is the origin of the outages' offsets (the run's start);
	// the zero value means the time Run is called.
	Start time.Time
	// OnChange, when set, is called (from Run's goroutine) each time the
	// target goes down or comes back, with the outage as it then stands.
	OnChange func(o result.Outage)

	mu       sync.Mutex
	outages  []result.Outage
	lastUp   time.Duration
	silent   int
	firstBad time.Duration
	probes   int64
	answered int64
	// silence is the one Run ended in (endSilence); Probes 0 when none.
	silence Silence
}

// Silence is how the target was silent when Run ended (SilentAtEnd).
type Silence struct {
	// Since is when the first unanswered probe started, Latest when the
	// last one did.
	Since, Latest time.Duration
	// LastUp is when the last answered probe started; -1 when none was.
	LastUp time.Duration
	// Probes is how many went unanswered, none answered after them.
	Probes int
}

// Run probes until ctx is done. It returns nothing: what it found is in
// Outages.
//
// A probe starts at a tick when none is under way, or when fewer than
// SilentAfter are and the last one started half a Timeout ago or more;
// each is given the whole Timeout, and their results are observed in the
// order they started. A hung target is so confirmed by SilentAfter
// probes that overlap, about one and a half Timeouts after its hang (two
// probes), silent all that while. One probe at a time took SilentAfter
// whole Timeouts (10 s at 5 s each), longer than the rest of a short
// run: a run that ended in between said nothing of a target silent for
// most of it, or said it by luck, as its wind-down outlasted the second
// probe or not.
func (w *Watchdog) Run(ctx context.Context) {
	interval, timeout := w.Interval, w.Timeout
	if interval <= 0 {
		interval = DefaultInterval
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	w.mu.Lock()
	if w.Start.IsZero() {
		w.Start = time.Now()
	}
	w.mu.Unlock()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var out []*flight // in the order they started
	limit := w.silentAfter()
	defer func() {
		// Probes cut by the end prove the target down no more; they
		// return with ctx. How long they went unanswered is kept.
		w.endSilence(out)
		for _, f := range out {
			<-f.done
		}
	}()
	for {
		if w.ended(ctx) {
			return
		}
		if n := len(out); n == 0 || n < limit && time.Since(w.Start)-out[n-1].at >= timeout/2 {
			out = append(out, w.launch(ctx, timeout))
		}
		var ok bool
		if out, ok = w.untilTick(ctx, tick.C, out); !ok {
			return
		}
	}
}

// untilTick observes the probes under way (out, in the order they
// started) as each ends in turn, until the next tick; it returns those
// still under way, and false once ctx is done (a probe cut by the end of
// the run proves nothing).
func (w *Watchdog) untilTick(ctx context.Context, tick <-chan time.Time, out []*flight) ([]*flight, bool) {
	for {
		var head chan struct{}
		if len(out) > 0 {
			head = out[0].done
		}
		select {
		case <-ctx.Done():
			return out, false
		case <-head:
			if ctx.Err() != nil {
				return out, false
			}
			w.Observe(out[0].at, out[0].err)
			out = out[1:]
		case <-tick:
			return out, true
		}
	}
}

// endSilence records, as Run ends, the silence it ends in (SilentAtEnd):
// the probes that went unanswered (timed out and observed, or still
// under way) with no probe answered after them.
func (w *Watchdog) endSilence(out []*flight) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Silence{Since: w.firstBad, Latest: w.firstBad, Probes: w.silent}
	for _, f := range out {
		select {
		case <-f.done:
			switch {
			case f.err == nil:
				s = Silence{} // answered: any silence began later
				continue
			case errors.Is(f.err, ErrInconclusive):
				continue // says nothing of the target
			}
		default:
		}
		if s.Probes == 0 {
			s.Since = f.at
		}
		s.Latest = f.at
		s.Probes++
	}
	s.LastUp = w.lastUp
	if w.answered == 0 {
		s.LastUp = -1
	}
	w.silence = s
}

// SilentAtEnd reports whether the run ended with the target silent but
// not yet found down: at least SilentAfter probes unanswered, none
// answered after them, too few of them yet for their whole Timeout (a
// single lost probe is not a silence). ok is false while the target
// answered, when it was found down (Outages says so), and before Run has
// ended.
func (w *Watchdog) SilentAtEnd() (s Silence, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down() || w.silence.Probes < w.silentAfter() {
		return Silence{}, false
	}
	return w.silence, true
}

// flight is a probe under way (Run): when it started, and its result once
// done is closed.
type flight struct {
	at   time.Duration
	err  error
	done chan struct{}
}

// launch starts a probe bounded by timeout.
func (w *Watchdog) launch(ctx context.Context, timeout time.Duration) *flight {
	f := &flight{at: time.Since(w.Start), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		f.err = w.Probe(pctx)
	}()
	return f
}

// ended reports whether the run is over: ctx done or past its deadline.
// The tick and the end can come at once, and select picks either (the
// context may not even be cancelled yet): a probe started at or after
// the end proves nothing.
func (w *Watchdog) ended(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

// Observe records the result of one probe started at offset at (Run
// calls it; a caller that probes by itself, as conform does after each
// case, may too).
func (w *Watchdog) Observe(at time.Duration, err error) {
	w.mu.Lock()
	w.probes++
	if errors.Is(err, ErrInconclusive) {
		w.mu.Unlock()
		return
	}
	var changed *result.Outage
	down := w.down()
	switch kind := Classify(err); {
	case err == nil && down && at < w.outages[len(w.outages)-1].StartNS:
		// A probe sent before the outage began (MarkDown: an owned
		// process seen to exit while the probe was in flight) says
		// nothing of after: the outage stays open.
		w.answered++
	case err == nil:
		w.answered++
		w.silent = 0
		w.lastUp = at
		if down {
			o := &w.outages[len(w.outages)-1]
			o.Back, o.EndNS = true, at
			changed = o
		}
	case down:
		// Still down; a hang that turns into a refusal (the process was
		// killed) is said.
		if o := &w.outages[len(w.outages)-1]; kind == result.DownRefused && o.Kind == result.DownSilent {
			o.Kind, o.Detail = kind, err.Error()
		}
	default:
		after := w.silentAfter()
		if w.silent == 0 {
			w.firstBad = at
		}
		w.silent++
		if kind == result.DownRefused || w.silent >= after {
			w.outages = append(w.outages, result.Outage{StartNS: w.firstBad, LastUpNS: w.lastUp, Kind: kind, Detail: err.Error()})
			changed = &w.outages[len(w.outages)-1]
			w.silent = 0
		}
	}
	var o result.Outage
	if changed != nil {
		o = *changed
	}
	w.mu.Unlock()
	if changed != nil && w.OnChange != nil {
		w.OnChange(o)
	}
}

// MarkDown records that the target is down from offset at for a reason
// the probes cannot see, such as an owned process's exit (kind
// result.DownExited, exit "killed by SIGABRT"). It opens an outage if
// none is open, and fills in the exit and output of the open one.
func (w *Watchdog) MarkDown(at time.Duration, kind, detail, exit string, output []string) {
	w.mu.Lock()
	if n := len(w.outages); n > 0 && !w.outages[n-1].Back {
		o := &w.outages[n-1]
		o.Kind, o.Exit, o.Output = kind, exit, output
		if detail != "" {
			o.Detail = detail
		}
		w.mu.Unlock()
		return
	}
	w.outages = append(w.outages, result.Outage{StartNS: at, LastUpNS: w.lastUp, Kind: kind, Detail: detail, Exit: exit, Output: output})
	o := w.outages[len(w.outages)-1]
	w.mu.Unlock()
	if w.OnChange != nil {
		w.OnChange(o)
	}
}

// Outages returns a copy of the outages so far, oldest first.
func (w *Watchdog) Outages() []result.Outage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]result.Outage(nil), w.outages...)
}

// Down reports whether the target is down now (the last outage is open).
func (w *Watchdog) Down() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down()
}

// down is Down with w.mu held.
func (w *Watchdog) down() bool {
	return len(w.outages) > 0 && !w.outages[len(w.outages)-1].Back
}

// silentAfter is SilentAfter, or its default.
func (w *Watchdog) silentAfter() int {
	if w.SilentAfter <= 0 {
		return DefaultSilentAfter
	}
	return w.SilentAfter
}

// Probes returns how many probes were made and how many were answered.
func (w *Watchdog) Probes() (made, answered int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.probes, w.answered
}
