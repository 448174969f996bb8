package reports

import (
	"fmt"
	"strings"
	"time"
)

// Headline statuses.
const (
	StatusPass        = "pass"
	StatusFail        = "fail"
	StatusInterrupted = "interrupted"
	// StatusIncomplete: the run was not interrupted but did not generate
	// all the load its scenario asked for (a --workers worker died,
	// sessions could not open their socket); exit 6.
	StatusIncomplete = "incomplete"
)

// Headline is the verdict every format of a result leads with (the
// terminal's first line, the HTML banner, the Markdown summary, the JUnit
// error case): Status is StatusPass, StatusFail, StatusInterrupted,
// StatusIncomplete or "" when there is nothing to judge; Text says it in
// words, status first.
type Headline struct {
	Status string
	Text   string
}

// Partial reports whether the result covers only part of what was asked
// (interrupted, or incomplete): every format says so before any figure,
// JUnit with an <error> testcase, and a comparison breaks GateComplete.
func (h Headline) Partial() bool {
	return h.Status == StatusInterrupted || h.Status == StatusIncomplete
}

// Interrupted reports whether the run, or any shard merged into it, was
// stopped before the end of its scenario (Ctrl-C, a deadline).
func (r *Run) Interrupted() bool {
	for _, s := range r.ShardRuns {
		if s.Interrupted {
			return true
		}
	}
	return false
}

// StepsNeverSucceeded returns the steps of r that were tried (at least one
// request) and never succeeded: every request failed or was cut by the end
// of the run (a request answered only after the end is as unmeasured as an
// unanswered one). Not among them: a step never reached (no request, e.g. a
// late step of a flow longer than the run), which has nothing to judge, and
// a wait step (Series.Wait: think, barrier) whose every attempt was cut, as
// the run merely ended during the wait; a wait that failed (a barrier's
// timeout) counts.
func (r *Run) StepsNeverSucceeded() []Series {
	var out []Series
	for _, s := range r.Steps {
		if s.Requests > 0 && s.Successes == 0 && !(s.Wait && s.Failures == 0) {
			out = append(out, s)
		}
	}
	return out
}

// MissingLoad says, one phrase each, what of the scenario's load the run
// did not generate (workers that left no result, sessions that could not
// open their socket), or nil when it generated it all: the run is then
// INCOMPLETE (Headline) and `run` exits 6.
func (r *Run) MissingLoad() []string {
	var out []string
	if n := len(r.Incomplete); n > 0 {
		out = append(out, Count(n, "worker")+" left no result")
	}
	if r.Sessions != nil && r.Sessions.FailedStarts > 0 {
		n := r.Sessions.FailedStarts
		out = append(out, Count(n, "session")+" could not open "+Agree(n, "its", "their")+" socket")
	}
	return out
}

// Headline judges the run. An interrupted run says so first, whatever its
// thresholds say: they were judged on the part that ran; so does an
// incomplete one (the load was not all generated), next. A step that was
// tried and never succeeded fails the run and leads its verdict, even when
// every threshold passed (a run with "0 OK" on a step is not green).
func (r *Run) Headline() Headline {
	passed := 0
	for _, th := range r.Thresholds {
		if th.Pass {
			passed++
		}
	}
	var verdict string
	status := ""
	switch n := len(r.Thresholds); {
	case n > 0 && passed < n:
		status, verdict = StatusFail, fmt.Sprintf("%d of %s breached", n-passed, Count(n, "threshold"))
	case r.Totals.Violations > 0:
		status, verdict = StatusFail, Count(r.Totals.Violations, "protocol violation")
	case n > 0:
		status, verdict = StatusPass, Agree(n, "the", "all")+" "+Count(n, "threshold")+" passed"
	}
	if never := r.StepsNeverSucceeded(); len(never) > 0 {
		// First: a step with no success has no figure to judge, so
		// whatever else passed, the run did not do what it set out to.
		var parts []string
		for _, s := range never {
			parts = append(parts, s.Name+" ("+tally(s)+")")
		}
		what := fmt.Sprintf("step %s was tried and never succeeded", parts[0])
		if len(parts) > 1 {
			what = fmt.Sprintf("%d steps were tried and never succeeded: %s", len(parts), strings.Join(parts, ", "))
		}
		if verdict != "" {
			what += "; " + verdict
		}
		status, verdict = StatusFail, what
	}
	missing := r.MissingLoad()
	if r.Interrupted() {
		who := "the run was stopped"
		if k := len(r.ShardRuns); k > 1 {
			stopped := 0
			for _, s := range r.ShardRuns {
				if s.Interrupted {
					stopped++
				}
			}
			who = fmt.Sprintf("%d of %d shards were stopped", stopped, k)
		}
		text := fmt.Sprintf("INTERRUPTED · %s after %s, before the scenario's end", who, r.DurationNS.Round(time.Millisecond))
		if len(missing) > 0 {
			text += ", and the load was not all generated (" + strings.Join(missing, ", ") + ")"
		}
		text += ": the figures cover only what ran"
		if verdict != "" {
			text += " (on that part: " + verdict + ")"
		}
		return Headline{Status: StatusInterrupted, Text: text}
	}
	if len(missing) > 0 {
		text := "INCOMPLETE · the load was not all generated (" + strings.Join(missing, ", ") + "): the figures cover only what ran"
		if verdict != "" {
			text += " (on that part: " + verdict + ")"
		}
		return Headline{Status: StatusIncomplete, Text: text}
	}
	if status == "" {
		return Headline{}
	}
	return Headline{Status: status, Text: strings.ToUpper(status) + " · " + verdict}
}

// Headline judges the conform result: a failed case, a warning under
// --strict, or more skips than MaxSkips allows fail it; the skip and
// warning counts are always said, so a hollow run cannot pass unseen. An
// interrupted suite says so first, whatever its cases say: they are only
// the part that ran.
func (c *Conform) Headline() Headline {
	hl := c.verdict()
	if !c.Interrupted {
		return hl
	}
	text := fmt.Sprintf("INTERRUPTED · the suite was stopped after %s, before every case ran: the verdicts cover only what ran", c.DurationNS.Round(time.Millisecond))
	if hl.Text != "" {
		text += " (on that part: " + hl.Text + ")"
	}
	return Headline{Status: StatusInterrupted, Text: text}
}

// verdict is Headline without the interruption.
func (c *Conform) verdict() Headline {
	s := c.Summary()
	if s.Total == 0 {
		return Headline{Text: "NO VERDICT · no case was run"}
	}
	var why []string
	if s.Fail > 0 {
		why = append(why, fmt.Sprintf("%d of %s failed", s.Fail, Count(s.Total, "case")))
	}
	if c.Strict && s.Warn > 0 {
		why = append(why, "strict: "+Count(s.Warn, "warning")+Agree(s.Warn, " counts as a failure", " count as failures"))
	}
	if c.SkipsOverBudget() {
		why = append(why, fmt.Sprintf("%d of %s skipped, over --max-skips %d", s.Skip, Count(s.Total, "case"), *c.MaxSkips))
	}
	var also []string
	if s.Warn > 0 && !c.Strict {
		also = append(also, Count(s.Warn, "warning"))
	}
	if s.Skip > 0 && !c.SkipsOverBudget() {
		also = append(also, fmt.Sprintf("%d of %s skipped", s.Skip, Count(s.Total, "case")))
	}
	tail := ""
	if len(also) > 0 {
		tail = "; " + strings.Join(also, ", ")
	}
	if len(why) > 0 {
		return Headline{Status: StatusFail, Text: "FAIL · " + strings.Join(why, "; ") + tail}
	}
	return Headline{Status: StatusPass, Text: fmt.Sprintf("PASS · no case failed (%d of %d passed)%s", s.Pass, s.Total, tail)}
}

// SkipsOverBudget reports whether more cases were skipped than MaxSkips
// allows (false when no budget was set).
func (c *Conform) SkipsOverBudget() bool {
	return c.MaxSkips != nil && c.Summary().Skip > *c.MaxSkips
}

// WithoutPassingWire returns a copy of c whose passing cases carry no wire
// log: the HTML and JUnit of an all-pass suite stay small (the JSON keeps
// every exchange; conform --verbose keeps them everywhere).
func (c *Conform) WithoutPassingWire() *Conform {
	cp := *c
	cp.Cases = append([]Case(nil), c.Cases...)
	for i := range cp.Cases {
		if k := &cp.Cases[i]; k.Verdict == VerdictPass && len(k.Wire) > 0 {
			k.WireOmitted += len(k.Wire)
			k.Wire = nil
		}
	}
	return &cp
}
