package conformance

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// A case's wait for a reply, measuring how late the harness itself ran.
// A harness stalled past a wait's end (a busy machine, a long GC pause,
// a stopped process) would report the server's reply, already queued on
// its socket, as silence: Go's read with a deadline already past does not
// look at the socket. So a wait reads in slices, counts how late each
// read came back past its deadline as the harness's stall, extends its end
// by it, and once over reads what is already queued (a fresh short
// deadline) before it declares silence. A wait whose stalls add up to
// more than MaxStallFactor times its length (or the run's --timeout, when
// longer: a short poll is one step of a longer wait) cannot tell the
// server's silence from its own lateness, nor from the server's own
// timers running out on a harness that went quiet: it ends with a
// *StallError, and the case is inconclusive (a skip that says so), never a
// fail.
const (
	// waitSlice is the longest one read of a wait lasts.
	waitSlice = 100 * time.Millisecond
	// stallSlack is lateness the scheduler's ordinary jitter explains:
	// not counted as a stall.
	stallSlack = 25 * time.Millisecond
	// drainGrace is the deadline of a read of what is already queued.
	drainGrace = 5 * time.Millisecond
	// drainTries bounds the reads of the queue that came back late
	// (and so may not have looked at it).
	drainTries = 3
	// MaxStallFactor is how many times its length (at least --timeout) a
	// wait's stalls may add up to before it cannot tell.
	MaxStallFactor = 4
)

// ErrStalled matches a *StallError under errors.Is.
var ErrStalled = errors.New("the harness stalled")

// StallError ends a wait during which the harness stalled for longer than
// it could make up for (Limit): nothing was queued when it looked, but it
// cannot say that the server was silent. It matches ErrStalled and
// liveness.ErrInconclusive (a reachability check it ends proves nothing
// of the target).
type StallError struct {
	Wait, Stalled, Limit time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf(Inconclusive+"the harness stalled for %v during a %v wait for a reply (more than the %v it makes up for), so it cannot tell the server's silence from its own lateness; nothing was queued when it looked",
		e.Stalled.Round(time.Millisecond), e.Wait, e.Limit)
}

func (e *StallError) Is(target error) bool {
	return target == ErrStalled || target == liveness.ErrInconclusive
}

// Wait is one wait of a case for a reply: give each read Deadline, and
// after a read that timed out call TimedOut; once it reports the wait
// over, Err is its end.
type Wait struct {
	t        *T
	d        time.Duration
	end      time.Time
	dl       time.Time // the last read's deadline
	stalled  time.Duration
	draining bool
	drains   int
}

// NewWait starts a wait of d for a reply.
func (t *T) NewWait(d time.Duration) *Wait {
	return &Wait{t: t, d: d, end: time.Now().Add(d)}
}

// Deadline is the deadline of the next read: the wait's end or a slice
// of it, or once the wait is over a fresh short one, to read what is
// already queued.
func (w *Wait) Deadline() time.Time {
	now := time.Now()
	if w.draining {
		w.dl = now.Add(drainGrace)
	} else {
		w.dl = w.end
		if s := now.Add(waitSlice); s.Before(w.dl) {
			w.dl = s
		}
	}
	if h := w.t.Env.stallHook; h != nil {
		h() // a test's stall, between the deadline and the read
	}
	return w.dl
}

// TimedOut records a read that timed out at its Deadline and reports
// whether the wait is over, queue read included.
func (w *Wait) TimedOut() (over bool) {
	now := time.Now()
	late := now.Sub(w.dl)
	if w.draining {
		// A read that came back late may not have looked: again.
		w.drains++
		return late <= stallSlack || w.drains >= drainTries
	}
	if late > stallSlack {
		w.stalled += late
		w.end = w.end.Add(late)
		w.t.noteStall(w.stalled, nil)
	}
	if w.stalled > w.limit() || !now.Before(w.end) {
		w.draining = true
	}
	return false
}

// limit is the most stall the wait makes up for.
func (w *Wait) limit() time.Duration { return MaxStallFactor * max(w.d, w.t.Env.Timeout) }

// Err is the end of a wait over with nothing read: silence, or a
// *StallError when its stalls were more than it could make up for. The
// case's T keeps the stalls for its verdict.
func (w *Wait) Err(silence error) error {
	if w.stalled > w.limit() {
		e := &StallError{Wait: w.d, Stalled: w.stalled, Limit: w.limit()}
		w.t.noteStall(w.stalled, e)
		return e
	}
	return silence
}

// noteStall records a wait's stall so far in the case (the largest is
// kept), and e when the wait could not tell.
func (t *T) noteStall(d time.Duration, e *StallError) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stalled = max(t.stalled, d)
	if e != nil && t.cannotTell == nil {
		t.cannotTell = e
	}
}

// stallVerdict turns the verdict of a case during which a wait could not
// tell (T.cannotTell) into a skip saying so: a fail, a warning or a harness
// error resting on a wait the harness's own stall may explain is
// inconclusive, never a fail; a pass stays one (every reply it needed
// came). A stall its waits made up for is noted.
func (t *T) stallVerdict(res *result.Case) {
	t.mu.Lock()
	stalled, e := t.stalled, t.cannotTell
	t.mu.Unlock()
	switch {
	case e != nil && (res.Verdict == result.VerdictFail || res.Verdict == result.VerdictWarn):
		res.Actual = fmt.Sprintf("%v (it had found: expected %s, got %s)", e, res.Expected, res.Actual)
		res.Verdict, res.Expected = result.VerdictSkip, ""
	case e != nil && res.Verdict == result.VerdictSkip && strings.HasPrefix(res.Actual, harnessError):
		res.Actual = e.Error()
	case stalled > 0:
		res.Notes = append(res.Notes, fmt.Sprintf("the harness stalled for up to %v during a wait for a reply; the wait was extended by it and read what was queued",
			stalled.Round(time.Millisecond)))
	}
}

// ReadFull reads len(b) bytes from c within a Wait of d (stalls of the
// harness extend it, and what is queued is read before it gives up). It
// returns what io.ReadFull would (io.EOF, io.ErrUnexpectedEOF, the read's
// error), os.ErrDeadlineExceeded when the wait ended first, or a
// *StallError when it could not tell.
func (t *T) ReadFull(c net.Conn, b []byte, d time.Duration) error {
	w := t.NewWait(d)
	got := 0
	for got < len(b) {
		if err := c.SetReadDeadline(w.Deadline()); err != nil {
			return err
		}
		n, err := c.Read(b[got:])
		got += n
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if w.TimedOut() {
				return w.Err(err)
			}
		case errors.Is(err, io.EOF) && got > 0 && got < len(b):
			return io.ErrUnexpectedEOF
		case got == len(b) && errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
	return nil
}
