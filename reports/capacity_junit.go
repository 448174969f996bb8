package reports

import (
	"fmt"
	"io"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

func init() {
	registerCapacity("junit", "write one JUnit testcase per step to `FILE`", WriteCapacityJUnit)
}

// WriteCapacityJUnit writes the search as JUnit XML: first the search's
// own testcase (an error when the target went down, the search was
// harness-bound, interrupted or never began, or a ladder's verdicts did not rise with
// the load; a failure when no load held), then a
// testcase per step (a harness-bound or target-down step an error; a FAIL
// step, the load above the limit that a search is meant to find, passes
// with what broke in its output), then a failure per protocol rule
// broken under load (a violation is a bug at any load).
func WriteCapacityJUnit(w io.Writer, c *result.Capacity) error {
	u := c.Unit()
	hl := c.Headline()
	s := junitSuite{Name: "lobbybench.capacity", Time: junitTime(c.DurationNS), Timestamp: timestamp(c.StartedAt)}
	text := hl.Text
	for _, line := range c.Coverage {
		text += "\nCOVERAGE: " + line
	}
	search := junitCase{Name: "sustainable load", Classname: "capacity", Time: junitTime(c.DurationNS), SystemOut: &junitText{Text: xmlSafe(text)}}
	switch {
	case hl.Partial() || hl.Status == result.StatusInconclusive:
		search.Error = &junitError{Message: hl.Text, Type: hl.Status, Text: xmlSafe(hl.Text)}
	case hl.Status == result.StatusFail:
		search.Failure = &junitFailure{Message: hl.Text, Type: "capacity", Text: xmlSafe(hl.Text)}
	}
	s.add(search)
	step := c.Settings.StepNS + c.Settings.WarmupNS
	for _, st := range c.Steps {
		k := junitCase{Name: "load " + result.FormatLoad(st.Load, u), Classname: "capacity.steps", Time: junitTime(step)}
		detail := fmt.Sprintf("achieved %.1f/s, p50 %s, p99 %s, errors %s, send lag p99 %s, violations %s; %s",
			st.Throughput, words.US(st.P50US), words.US(st.P99US), words.Pct(st.ErrorRate), words.US(st.SendLagP99US), violationsText(st.Violations), st.Headline)
		switch st.Verdict {
		case result.CapFail:
			k.SystemOut = &junitText{Text: xmlSafe("FAIL: broke: " + words.JoinMax(st.Broke, 3) + "\n" + detail)}
		case result.CapHarnessBound, result.CapTargetDown:
			k.Error = &junitError{Message: verdictWord(st.Verdict) + ": " + st.Why, Type: st.Verdict, Text: xmlSafe(detail)}
		default:
			k.SystemOut = &junitText{Text: xmlSafe(detail)}
		}
		s.add(k)
	}
	suites := []junitSuite{s}
	if len(c.Rules) > 0 {
		rs := junitSuite{Name: "lobbybench.capacity.rules", Time: junitTime(c.DurationNS), Timestamp: timestamp(c.StartedAt)}
		for _, r := range c.Rules {
			msg := fmt.Sprintf("%s broken from %s (%s, %d violations)", r.Rule, result.FormatLoad(r.FirstLoad, u), words.Count(r.Steps, "step"), r.Count)
			rs.add(junitCase{Name: r.Rule, Classname: "capacity.rules", Time: "0.000", Failure: &junitFailure{Message: msg, Type: "violation", Text: msg}})
		}
		suites = append(suites, rs)
	}
	return writeJUnit(w, "lobbybench capacity", c.DurationNS, suites...)
}
