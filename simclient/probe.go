package simclient

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// Probe is the protocol-independent part of a rate_probe step: the send
// schedule (the rate ramps linearly From→To over Over) and the accounting of
// outcomes in one-second windows of send time, from which it finds the
// observed limit. Protocol packages do the I/O: for each k < Total() send at
// Start+At(k), then report each request's outcome once with Outcome.
type Probe struct {
	Spec  scenario.RateProbeSpec
	Start time.Time
	win   []probeWindow
	// Sent, Answered, Refused and Lost count every request of the probe.
	Sent, Answered, Refused, Lost int64
	// Refusal names what the first refused request got (its message and
	// bytes), for the finding; "" when the protocol does not say.
	Refusal string
	// Caveat is what the protocol's probe says to read the finding by,
	// the end of its note (udp-lobby's requests that waited for a
	// sequence id, later than the schedule); "" for nothing.
	Caveat string
}

// NoteRefusal notes reply data, of message what ("" when it could not be
// read), that refused a request, when it is the first: the finding names
// what came.
func (p *Probe) NoteRefusal(what string, data []byte) {
	if p.Refusal != "" {
		return
	}
	if what == "" {
		what = "an unreadable reply"
	}
	p.Refusal = fmt.Sprintf("%s (%s)", what, hexPrefix(data))
}

type probeWindow struct{ sent, answered, refused, lost int64 }

// NewProbe starts the accounting of a probe whose first send is at start.
// Its windows are added as its requests reach them (Outcome), not made
// for the whole of Over at once: a long over of a slow ramp holds a window
// per second the probe has run, not per second it could.
func NewProbe(spec scenario.RateProbeSpec, start time.Time) *Probe {
	return &Probe{Spec: spec, Start: start, win: make([]probeWindow, 0, min(int(math.Ceil(spec.Over.Seconds()))+1, 64))}
}

// Total is the number of requests the schedule sends: the integral of the
// rate over Over (RateProbeSpec.Total, which the loader bounds by
// scenario.MaxProbeRequests).
func (p *Probe) Total() int { return p.Spec.Total() }

// At returns when, after Start, request k is due: the instant the integral
// of the ramp reaches k.
func (p *Probe) At(k int) time.Duration {
	over := p.Spec.Over.Seconds()
	a := (p.Spec.To - p.Spec.From) / (2 * over)
	b := p.Spec.From
	var t float64
	if a <= 0 {
		if b <= 0 {
			return p.Spec.Over
		}
		t = float64(k) / b
	} else {
		t = (-b + math.Sqrt(b*b+4*a*float64(k))) / (2 * a)
	}
	return time.Duration(t * float64(time.Second))
}

// ProbeIO is a client's side of a rate probe whose answers come on the
// session's own schedule of reads (Probe.Run drives it).
type ProbeIO interface {
	// Oldest is when the oldest request still awaited was sent; ok is
	// false when none is.
	Oldest() (sent time.Time, ok bool)
	// Recv takes the answers that come before deadline, reporting each
	// request's outcome.
	Recv(deadline time.Time) error
	// Expire reports the awaited requests sent a timeout before now as
	// lost.
	Expire(now time.Time)
	// Send sends the next request, due at due.
	Send(due time.Time) error
}

// Run sends total requests through c on the probe's schedule, taking the
// answers and expiring the lost between sends (a read never waits past
// the oldest request's timeout), then drains: the answers still awaited,
// for up to timeout, the rest lost. It returns nil when ctx ends (what
// was measured stands), or the first error of c.
func (p *Probe) Run(ctx context.Context, c ProbeIO, total int, timeout time.Duration) error {
	for k := 0; k < total; k++ {
		due := p.Start.Add(p.At(k))
		for time.Now().Before(due) {
			wait := due
			if old, ok := c.Oldest(); ok && old.Add(timeout).Before(wait) {
				wait = old.Add(timeout)
			}
			if err := c.Recv(wait); err != nil {
				return err
			}
			c.Expire(time.Now())
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := c.Send(due); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return drainProbe(c, timeout)
}

// drainProbe takes the answers still awaited for up to timeout, then
// reports the rest as lost.
func drainProbe(c ProbeIO, timeout time.Duration) error {
	var ioErr error
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		old, ok := c.Oldest()
		if !ok {
			break
		}
		if err := c.Recv(old.Add(timeout)); err != nil {
			ioErr = err
			break
		}
		c.Expire(time.Now())
	}
	c.Expire(end.Add(time.Nanosecond))
	return ioErr
}

// RateAt returns the scheduled rate (per second) at offset d.
func (p *Probe) RateAt(d time.Duration) float64 {
	f := min(max(d.Seconds()/p.Spec.Over.Seconds(), 0), 1)
	return p.Spec.From + (p.Spec.To-p.Spec.From)*f
}

// Outcomes of one probe request.
const (
	Answered = iota
	Refused  // an explicit refusal (JOIN_FAILED on a list, ERROR_MSG …)
	Lost     // no reply within the timeout
)

// Outcome records how the request sent at offset sent (from Start) ended.
func (p *Probe) Outcome(sent time.Duration, outcome int) {
	w := int(sent / time.Second)
	if w < 0 {
		w = 0
	}
	for w >= len(p.win) {
		p.win = append(p.win, probeWindow{})
	}
	pw := &p.win[w]
	pw.sent++
	p.Sent++
	switch outcome {
	case Answered:
		pw.answered++
		p.Answered++
	case Refused:
		pw.refused++
		p.Refused++
	default:
		pw.lost++
		p.Lost++
	}
}

// Limit returns the first window whose share of refused or lost requests
// exceeds Spec.Loss: limited is true, at is the scheduled rate in the middle
// of that window, accepted the highest answered rate (answers per second)
// of the windows up to and including it — what the server sustained while
// it began refusing — and window its index. Windows with fewer than 5
// requests are not judged (too few to measure a share).
func (p *Probe) Limit() (limited bool, at, accepted float64, window int) {
	for i, w := range p.win {
		if w.sent < 5 {
			continue
		}
		accepted = max(accepted, float64(w.answered))
		if float64(w.refused+w.lost) > p.Spec.Loss*float64(w.sent) {
			return true, p.RateAt(time.Duration(i)*time.Second + time.Second/2), accepted, i
		}
	}
	return false, 0, accepted, -1
}

// Finding builds the report entry of the probe. source names the step
// (its label: the engine maps "<label>.limit" to it); addr is the probing
// socket's address; others is the collateral effect, from
// Shared.OthersP99 (zero when unknown).
func (p *Probe) Finding(source, addr string, others OthersEffect) result.RateLimitFinding {
	limited, at, accepted, w := p.Limit()
	f := result.RateLimitFinding{
		Source:                  source,
		Sent:                    p.Sent,
		Accepted:                p.Answered,
		Limited:                 p.Refused + p.Lost,
		OtherSourcesP99BeforeUS: others.BeforeUS,
		OtherSourcesP99AfterUS:  others.DuringUS,
		OtherSourcesErrors:      others.Errors,
	}
	if limited {
		f.ObservedLimitPerSec = accepted
		f.Note = fmt.Sprintf("from %v: more than %.3g%% of requests refused or lost in second %d (offered %.0f/s); %d refused, %d lost",
			addr, p.Spec.Loss*100, w+1, at, p.Refused, p.Lost)
	} else {
		f.Note = fmt.Sprintf("from %v: no limit up to %.0f/s (%d refused, %d lost)", addr, p.Spec.To, p.Refused, p.Lost)
	}
	if p.Refusal != "" {
		f.Note += "; the first refusal: " + p.Refusal
	}
	if p.Caveat != "" {
		f.Note += "; " + p.Caveat
	}
	return f
}

// ReportProbe adds probe p's finding to the run's Collector: source is the
// step label, addr the probing socket's address, start when the probe
// began. The collateral effect is read from OthersP99: the five seconds
// before start, and from the window where the limit was found (or from
// start, with no limit) until now. cut notes a probe the end of the run
// cut short.
func (sh *Shared) ReportProbe(p *Probe, source, addr string, start time.Time, cut bool) {
	limited, _, _, w := p.Limit()
	var eff OthersEffect
	eff.BeforeUS, _ = sh.OthersP99(start.Add(-5*time.Second), start)
	from := start
	if limited {
		from = start.Add(time.Duration(w) * time.Second)
	}
	eff.DuringUS, eff.Errors = sh.OthersP99(from, time.Now())
	fd := p.Finding(source, addr, eff)
	if cut {
		fd.Note += " (cut short by the end of the run)"
	}
	sh.Collector.AddRateLimit(fd)
}
