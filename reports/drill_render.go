package reports

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/result"
)

// How the formats show a recovery drill (result.Drill) beside the words
// its types say themselves: a JUnit suite and the charts' fault lines.

// drillSuite is the JUnit suite "lobbybench.drill" of a run with a drill:
// a testcase per fault, failing when the target did not answer again by
// the end, and one for the room check, failing when a listed room was
// dead; nil without a drill.
func drillSuite(run *result.Run) *junitSuite {
	d := run.Drill
	if d == nil {
		return nil
	}
	s := junitSuite{Name: "lobbybench.drill", Time: junitTime(run.DurationNS), Timestamp: timestamp(run.StartedAt)}
	for _, f := range d.Faults {
		c := junitCase{Name: f.Fault + ": recovered", Classname: "drill", Time: junitTime(f.RecoveredAfterNS)}
		if f.NotApplied {
			c.Skipped = &junitSkipped{Message: "not applied: the run ended first"}
		} else if !f.Recovered {
			c.Time = "0.000"
			c.Failure = &junitFailure{Message: "the target did not answer again by the end: " + f.Fault, Type: "not recovered", Text: xmlSafe(f.Line())}
		} else {
			c.SystemOut = &junitText{Text: xmlSafe(f.Line())}
		}
		s.add(c)
	}
	if r := d.Rooms; r != nil && r.Error == "" {
		c := junitCase{Name: "listed rooms answer", Classname: "drill", Time: "0.000"}
		if len(r.Dead) > 0 {
			c.Failure = &junitFailure{Message: fmt.Sprintf("%d listed room(s) do not answer", len(r.Dead)), Type: "leaked rooms", Text: xmlSafe(r.Line())}
		}
		s.add(c)
	}
	return &s
}

// faultLines are a drill's faults as chart lines at their time, in
// seconds since the start, labelled with their signal.
func faultLines(faults []result.FaultResult) []vline {
	var out []vline
	for i, f := range faults {
		label, _, _ := strings.Cut(f.Fault, " ")
		out = append(out, vline{X: f.AtNS.Seconds(), Label: fmt.Sprintf("%d %s", i+1, label), Title: f.Line()})
	}
	return out
}
