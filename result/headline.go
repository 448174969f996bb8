package result

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// Headline statuses (and StatusTargetDown, StatusInconclusive).
const (
	StatusPass        = "pass"
	StatusFail        = "fail"
	StatusInterrupted = "interrupted"
	// StatusIncomplete: the run was not interrupted but did not generate
	// all the load its scenario asked for (a --workers worker died,
	// sessions could not open their socket, a closed model's clients did
	// not come up), or none of it (its text then says NO LOAD: Run.NoLoad);
	// exit 6.
	StatusIncomplete = "incomplete"
)

// Headline is the verdict every format of a result leads with (the
// terminal's first line, the HTML banner, the Markdown summary, the JUnit
// error case): Status is StatusTargetDown, StatusInterrupted,
// StatusIncomplete, StatusFail, StatusInconclusive, StatusPass (in that
// precedence) or "" when there is nothing to judge; Text says it in words,
// status first.
type Headline struct {
	Status string
	Text   string
}

// Partial reports whether the result cannot be read as a whole
// measurement: the target went down (StatusTargetDown), the result
// covers only part of what was asked (interrupted, or incomplete), or
// nothing was measured at all (NotStarted). Every
// format says so before any figure, JUnit with an <error> testcase, and
// a comparison breaks GateComplete.
func (h Headline) Partial() bool {
	switch h.Status {
	case StatusTargetDown, StatusInterrupted, StatusIncomplete, StatusUnreachable:
		return true
	}
	return false
}

// DownOutages returns the outages that make the run TARGET DOWN: every
// one but a recovery drill's deliberate fault (Outage.Fault) the target
// came back from.
func (r *Run) DownOutages() []Outage {
	var out []Outage
	for _, o := range r.Outages {
		if o.Fault == "" || !o.Back {
			out = append(out, o)
		}
	}
	return out
}

// NoteTargetDown sets r.TargetDown from its outages: the TARGET DOWN
// part of its headline, or "" when the target did not go down.
func (r *Run) NoteTargetDown() {
	r.TargetDown = ""
	if down := r.DownOutages(); len(down) > 0 {
		r.TargetDown = downText(down)
	}
}

// downText is the TARGET DOWN headline of outages (non-empty) in a run
// "TARGET DOWN · at +1.2 s (refused), not back by the end
// (412 requests answered before; 9 conn_refused, 27 creator_failed
// after)".
func downText(outs []Outage) string {
	o := outs[0]
	text := fmt.Sprintf("TARGET DOWN · at +%s (%s)", words.Seconds(o.StartNS), o.Kind)
	if o.Exit != "" {
		text = fmt.Sprintf("TARGET DOWN · at +%s (%s: %s)", words.Seconds(o.StartNS), o.Kind, o.Exit)
	}
	var why []string
	if o.AnsweredBefore > 0 || len(o.Failures) > 0 {
		why = append(why, fmt.Sprintf("%d requests answered before", o.AnsweredBefore))
	}
	after := "after"
	if o.Back {
		text += fmt.Sprintf(" for %s (back at +%s", words.Seconds(o.EndNS-o.StartNS), words.Seconds(o.EndNS))
		after = "while down"
	} else {
		text += ", not back by the end ("
	}
	if len(o.Failures) > 0 {
		why = append(why, ReasonsText(o.Failures)+" "+after)
	} else if len(why) > 0 {
		why = append(why, "no request failed "+after)
	}
	if lost := lostState(outs); len(lost) > 0 {
		// Not "no request failed while down" alone when requests
		// failed after the restarts, for what the server forgot.
		why = append(why, ReasonsText(lost)+" after "+words.Agree(countRestarts(outs), "the restart", "the restarts")+
			", of requests sent to the restarted server: it had lost their state")
	}
	if o.Back {
		if len(why) > 0 {
			text += "; " + strings.Join(why, "; ")
		}
		text += ")"
	} else {
		if len(why) == 0 {
			why = append(why, "nothing recorded of the load")
		}
		text += strings.Join(why, "; ") + ")"
	}
	if o.Fault != "" {
		text += "; caused by the drill's fault " + o.Fault
	}
	if n := len(outs) - 1; n > 0 {
		text += ", and " + words.Count(n, "more outage")
	}
	return text
}

// lostState sums the outages' FailuresAfter: the failures a restarted
// server's lost state cost.
func lostState(outs []Outage) map[string]int64 {
	var m map[string]int64
	for _, o := range outs {
		for r, n := range o.FailuresAfter {
			if m == nil {
				m = map[string]int64{}
			}
			m[r] += n
		}
	}
	return m
}

// countRestarts counts the outages with FailuresAfter.
func countRestarts(outs []Outage) int {
	n := 0
	for _, o := range outs {
		if len(o.FailuresAfter) > 0 {
			n++
		}
	}
	return n
}

// ReasonsText is failures by reason in words, most first: "9
// conn_refused, 27 creator_failed" sorted as "27 creator_failed, 9
// conn_refused".
func ReasonsText(m map[string]int64) string {
	reasons := make([]string, 0, len(m))
	for r := range m {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := reasons[i], reasons[j]
		return m[a] > m[b] || m[a] == m[b] && a < b
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", m[r], r)
	}
	return strings.Join(parts, ", ")
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
		out = append(out, words.Count(n, "worker")+" left no result")
	}
	if n := len(r.MissingShards); n > 0 {
		out = append(out, words.Plural(n, "shard")+" "+strings.Join(r.MissingShards, ", ")+" missing from the merge")
	}
	if r.Sessions != nil && r.Sessions.FailedStarts > 0 {
		n := r.Sessions.FailedStarts
		out = append(out, words.Count(n, "session")+" could not open "+words.Agree(n, "its", "their")+" socket")
	}
	if r.Sessions != nil && r.Sessions.DroppedLateStart > 0 {
		out = append(out, words.Count(r.Sessions.DroppedLateStart, "arrival")+" missed by a late start ("+strings.Join(r.LateShards(), "; ")+")")
	}
	return append(out, r.ClientsShort()...)
}

// ClientsShort says, for a closed-model run whose live clients stayed far
// below what its stages asked for (Sessions.ClientsShort), how far: "only
// 5118 of the 1000000 clients the stages asked for were ever live at
// once", or one such phrase a shard that fell short ("shard 1/4: only
// …"), each shard judged by its own share: a merge's sums could hide one
// shard's shortfall behind another's plateau.
func (r *Run) ClientsShort() []string {
	var out []string
	if len(r.ShardRuns) > 1 {
		for _, s := range r.ShardRuns {
			if s.Sessions.ClientsShort() {
				out = append(out, "shard "+s.Shard+": "+s.Sessions.ClientsShortText())
			}
		}
		return out
	}
	if r.Sessions != nil && r.Sessions.ClientsShort() {
		out = append(out, r.Sessions.ClientsShortText())
	}
	return out
}

// NoLoad says why the run generated no load, "no request was sent (0
// sessions started)", or "" when it sent one: such a run measured
// nothing, so no threshold, and no absence of one, can make it pass. Its
// headline is NO LOAD (status StatusIncomplete: none of the load was
// generated) and `run` exits 6.
func (r *Run) NoLoad() string {
	if r.Totals.Requests > 0 {
		return ""
	}
	started := r.Totals.SessionsStarted
	if r.Sessions != nil {
		started = max(started, r.Sessions.Started)
	}
	text := "no request was sent (" + words.Count(started, "session") + " started)"
	if s := r.Sessions; s != nil && s.ClientsAsked == 0 && started == 0 && r.closed() {
		text += ": the stages never asked for a client before the end (a ramp from 0 reaches its first client only when its target reaches 1)"
	}
	return text
}

// closed reports whether every shard of r ran the closed model.
func (r *Run) closed() bool {
	for _, s := range r.ShardRuns {
		if s.Model != "closed" {
			return false
		}
	}
	return len(r.ShardRuns) > 0
}

// LateShards says, one phrase a shard, which shards came up after the
// run's start instant (`run --start-at`) and joined late: "shard 3/4
// started 4.2 s late, missed 120 arrivals".
func (r *Run) LateShards() []string {
	var out []string
	for _, s := range r.ShardRuns {
		if s.LateStartNS <= 0 {
			continue
		}
		t := fmt.Sprintf("shard %s started %s late", s.Shard, words.Seconds(s.LateStartNS))
		if n := s.Sessions.DroppedLateStart; n > 0 {
			t += ", missed " + words.Count(n, "arrival")
		}
		out = append(out, t)
	}
	return out
}

// Headline judges the run. A run during which the target went down
// (TargetDown) says so before anything else, status StatusTargetDown,
// and then the rest of its verdict: a dead server is the finding, and
// every figure after it is of a load against nothing. Otherwise an
// interrupted run says so first, whatever its
// thresholds say: they were judged on the part that ran; so does an
// incomplete one (the load was not all generated), next, and before it a
// run that sent nothing (NO LOAD, status StatusIncomplete). A step that was
// tried and never succeeded fails the run and leads its verdict, even when
// every threshold passed (a run with "0 OK" on a step is not green). A run
// whose only breaches are harness-bound (HarnessBound: the harness's own
// send lag explains them) is INCONCLUSIVE, not FAIL: "INCONCLUSIVE ·
// harness-bound: list_rooms.p99 < 20ms measured 535.00ms, send lag p99
// 533.00ms".
func (r *Run) Headline() Headline {
	if r.NotStarted != nil {
		return r.NotStarted.headline()
	}
	hl := r.verdict()
	if r.Drill != nil && len(r.Drill.Faults) > 0 {
		if hl.Text == "" {
			hl.Text = r.Drill.Text()
		} else {
			hl.Text += "; " + r.Drill.Text()
		}
	}
	down := r.DownOutages()
	if len(down) == 0 {
		return hl
	}
	text := downText(down)
	switch {
	case hl.Status == StatusPass:
		// Not "PASS": nothing may read greener than the run was.
		_, rest, _ := strings.Cut(hl.Text, " · ")
		text += "; on what ran: " + rest
	case hl.Text != "":
		text += "; then " + hl.Text
	}
	return Headline{Status: StatusTargetDown, Text: text}
}

// verdict is Headline without the target's outages.
func (r *Run) verdict() Headline {
	status, verdict := r.thresholdVerdict()
	if never := r.StepsNeverSucceeded(); len(never) > 0 {
		// First: a step with no success has no figure to judge, so
		// whatever else passed, the run did not do what it set out to.
		status, verdict = StatusFail, neverSucceededText(never, verdict)
	}
	missing := r.MissingLoad()
	noLoad := r.NoLoad()
	if r.Interrupted() {
		return r.interruptedHeadline(missing, verdict)
	}
	if noLoad != "" {
		// Before INCOMPLETE and FAIL: whatever else is wrong, nothing
		// was measured.
		text := "NO LOAD · " + noLoad + ": nothing was measured"
		if len(missing) > 0 {
			text += " (" + strings.Join(missing, ", ") + ")"
		}
		if verdict != "" {
			text += "; " + verdict
		}
		return Headline{Status: StatusIncomplete, Text: text}
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

// thresholdVerdict judges the thresholds and protocol violations: the
// status and its text ("" and "" when there is nothing to judge).
func (r *Run) thresholdVerdict() (status, verdict string) {
	passed := 0
	for _, th := range r.Thresholds {
		if th.Pass {
			passed++
		}
	}
	bound := r.HarnessBreaches()
	real := len(r.Thresholds) - passed - len(bound)
	switch n := len(r.Thresholds); {
	case real > 0:
		status, verdict = StatusFail, fmt.Sprintf("%d of %s breached", real, words.Count(n, "threshold"))
		if len(bound) > 0 {
			verdict += fmt.Sprintf(", %d more harness-bound (%s)", len(bound), harnessBoundText(bound))
		}
	case r.Totals.Violations > 0:
		status, verdict = StatusFail, words.Count(r.Totals.Violations, "protocol violation")
		if len(bound) > 0 {
			verdict += fmt.Sprintf("; %d of %s harness-bound (%s)", len(bound), words.Count(n, "threshold"), harnessBoundText(bound))
		}
	case len(bound) > 0:
		// No breach the server can be charged with, and none it is
		// cleared of: the harness was too late to tell.
		status, verdict = StatusInconclusive, "harness-bound: "+harnessBoundText(bound)
		if passed > 0 {
			verdict += fmt.Sprintf(" (%d of %s passed)", passed, words.Count(n, "threshold"))
		}
	case n > 0:
		status, verdict = StatusPass, words.Agree(n, "the", "all")+" "+words.Count(n, "threshold")+" passed"
	}
	return status, verdict
}

// neverSucceededText names the steps tried that never succeeded, then
// the verdict on the rest.
func neverSucceededText(never []Series, verdict string) string {
	var parts []string
	for _, s := range never {
		parts = append(parts, s.Name+" ("+s.Tally()+")")
	}
	what := fmt.Sprintf("step %s was tried and never succeeded", parts[0])
	if len(parts) > 1 {
		what = fmt.Sprintf("%d steps were tried and never succeeded: %s", len(parts), strings.Join(parts, ", "))
	}
	if verdict != "" {
		what += "; " + verdict
	}
	return what
}

// interruptedHeadline is the headline of a stopped run: who was stopped,
// the load missing, and the verdict on what ran.
func (r *Run) interruptedHeadline(missing []string, verdict string) Headline {
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

// Headline judges the conform result: a failed case, a warning under
// --strict, or more skips than MaxSkips allows fail it; the skip and
// warning counts are always said, so a hollow run cannot pass unseen, and a
// run in which not one case passed never passes. A target that stopped
// answering leads, before anything else (TARGET DOWN, then the rest of the
// verdict); an interrupted suite says so next, whatever its cases say: they
// are only the part that ran.
func (c *Conform) Headline() Headline {
	if c.NotStarted != nil {
		return c.NotStarted.headline()
	}
	hl := c.verdict()
	if c.Interrupted {
		text := fmt.Sprintf("INTERRUPTED · the suite was stopped after %s, before every case ran: the verdicts cover only what ran", c.DurationNS.Round(time.Millisecond))
		if hl.Text != "" {
			text += " (on that part: " + hl.Text + ")"
		}
		hl = Headline{Status: StatusInterrupted, Text: text}
	}
	if down := c.TargetDown(); down != "" {
		text := "TARGET DOWN · " + down
		if hl.Text != "" {
			text += " — " + hl.Text
		}
		return Headline{Status: StatusTargetDown, Text: text}
	}
	return hl
}

// TargetDown says, when the target stopped answering during the suite (an
// outage that was not a scheduled fault, or one it never came back from),
// how and during which cases, and how many cases were not run:
// "the server stopped answering (refused: nothing listens) during
// tcp-lobby/5/3; 12 cases not run". "" when it kept answering.
func (c *Conform) TargetDown() string {
	var first *Outage
	var during []string
	seen := map[string]bool{}
	for i := range c.Outages {
		o := &c.Outages[i]
		if o.Fault != "" && o.Back {
			continue
		}
		if first == nil {
			first = o
		}
		for _, id := range o.During {
			if !seen[id] {
				seen[id] = true
				during = append(during, id)
			}
		}
	}
	if first == nil {
		return ""
	}
	text := "the server stopped answering (" + first.What() + ")"
	switch {
	case len(during) > 0:
		text += " during " + strings.Join(during, ", ")
		if ct := first.CulpritText(); ct != "" {
			text += "; " + ct
		}
	default:
		text += fmt.Sprintf(" at +%v", first.StartNS.Round(time.Millisecond))
	}
	if n := c.Summary().NotRun; n > 0 {
		text += "; " + words.Count(n, "case") + " not run"
	}
	return text
}

// verdict is Headline without the interruption.
func (c *Conform) verdict() Headline {
	s := c.Summary()
	if s.Total == 0 {
		return Headline{Text: "NO VERDICT · no case was run"}
	}
	var why []string
	if s.Fail > 0 {
		why = append(why, fmt.Sprintf("%d of %s failed", s.Fail, words.Count(s.Total, "case")))
	}
	if c.Strict && s.Warn > 0 {
		why = append(why, "strict: "+words.Count(s.Warn, "warning")+words.Agree(s.Warn, " counts as a failure", " count as failures"))
	}
	if c.SkipsOverBudget() {
		why = append(why, fmt.Sprintf("%d of %s skipped, over --max-skips %d", s.Skip, words.Count(s.Total, "case"), *c.MaxSkips))
	}
	var also []string
	if s.Warn > 0 && !c.Strict {
		also = append(also, words.Count(s.Warn, "warning"))
	}
	if s.Skip > 0 && !c.SkipsOverBudget() {
		also = append(also, fmt.Sprintf("%d of %s skipped", s.Skip, words.Count(s.Total, "case")))
	}
	tail := ""
	if len(also) > 0 {
		tail = "; " + strings.Join(also, ", ")
	}
	if len(why) > 0 {
		return Headline{Status: StatusFail, Text: "FAIL · " + strings.Join(why, "; ") + tail}
	}
	if s.Pass == 0 {
		// Whatever the skip budget says: a run that checked nothing that
		// held proves nothing.
		var what []string
		for _, p := range []struct {
			n    int
			what string
		}{{s.Warn, "warned"}, {s.Info, "informational"}, {s.Skip, "skipped"}, {s.NotRun, "not run"}} {
			if p.n > 0 {
				what = append(what, fmt.Sprintf("%d %s", p.n, p.what))
			}
		}
		return Headline{Status: StatusFail, Text: fmt.Sprintf("NO PASS · not one of %s passed (%s)", words.Count(s.Total, "case"), strings.Join(what, ", "))}
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
