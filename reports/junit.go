package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// JUnit XML model (the common Jenkins/Surefire dialect read by CI systems).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut *junitText  `xml:"system-out,omitempty"` // after the testcases, as Surefire writes it
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitError   `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitError is a testcase that could not be judged (an interrupted run):
// CI systems show it apart from failures, and as red.
type junitError struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitText keeps multi-line text readable (CDATA; Go splits any "]]>").
type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// xmlSafe replaces characters XML 1.0 cannot hold (NUL and most C0
// controls, invalid UTF-8) with U+FFFD: CDATA sections are written verbatim
// by encoding/xml, so they must be cleaned first.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func junitTime(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func (s *junitSuite) add(c junitCase) {
	s.Tests++
	if c.Failure != nil {
		s.Failures++
	}
	if c.Error != nil {
		s.Errors++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

func writeJUnit(w io.Writer, name string, total time.Duration, suites ...junitSuite) error {
	doc := junitSuites{Name: name, Time: junitTime(total), Suites: suites}
	for _, s := range suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

func init() {
	register(Format{
		Name: "junit",
		Help: map[string]string{
			result.KindRun:     "write thresholds and violated rules as JUnit XML to `FILE`",
			result.KindConform: "write the results as JUnit XML to `file`",
		},
		Write: one(WriteRunJUnit, WriteConformJUnit, true),
		Report: &ReportHelp{
			Summary: "render a result as JUnit XML",
			Usage: `Usage: lobbybench report junit RESULT.json [-o FILE]

Writes a run result (one testcase per threshold and per violated rule) or a
conform result (one testcase per case) as JUnit XML, to FILE or stdout.`,
			List: "  junit RESULT.json [-o FILE]     JUnit XML for CI\n",
		},
	})
}

// WriteRunJUnit writes run as JUnit XML: suite "thresholds" with one
// testcase per threshold (a failure when it did not pass, its message in
// the units the terminal uses; an <error> of type harness-bound when the
// harness's lateness explains the breach, Run.HarnessBound, and then a
// leading <error> testcase "harness kept up" with the INCONCLUSIVE
// headline) and suite "violations" with one failing
// testcase per violated protocol rule. An interrupted or incomplete run
// leads with suite "run" holding one <error> testcase that says so, so no
// CI reads a partial run as a pass; each step tried and never succeeded adds a
// failing testcase "step NAME succeeded" to that suite.
func WriteRunJUnit(w io.Writer, run *result.Run) error {
	var suites []junitSuite
	rs := junitSuite{Name: "lobbybench.run", Time: junitTime(run.DurationNS), Timestamp: timestamp(run.StartedAt)}
	hl := run.Headline()
	addInterrupted(&rs, hl, "run", run.DurationNS)
	if hl.Status == result.StatusInconclusive {
		// Not a failure of the server, not a pass: an <error>, the
		// testcase saying what the run could not judge.
		rs.add(junitCase{Name: "harness kept up", Classname: "run", Time: junitTime(run.DurationNS),
			Error: &junitError{Message: hl.Text, Type: hl.Status, Text: xmlSafe(hl.Text + "\n" + run.SendLagWarning())}})
	}
	for _, s := range run.StepsNeverSucceeded() {
		msg := fmt.Sprintf("step %s never succeeded (%s)", s.Name, s.Tally())
		rs.add(junitCase{Name: "step " + s.Name + " succeeded", Classname: "run", Time: "0.000",
			Failure: &junitFailure{Message: msg, Type: "never succeeded", Text: xmlSafe(msg + ": " + likelyCause(run, s))}})
	}
	if len(rs.Cases) > 0 {
		suites = append(suites, rs)
	}
	if ds := drillSuite(run); ds != nil {
		suites = append(suites, *ds)
	}
	th := junitSuite{Name: "lobbybench.thresholds", Time: junitTime(run.DurationNS), Timestamp: timestamp(run.StartedAt)}
	for _, t := range run.Thresholds {
		c := junitCase{Name: t.Name, Classname: "thresholds", Time: "0.000"}
		if !t.Pass {
			msg := fmt.Sprintf("%s = %s, want %s", t.Metric, t.ObservedText(), t.LimitText())
			if t.Step != "" {
				msg = t.Step + " " + msg
			}
			if b, ok := run.HarnessBound(t); ok {
				msg += fmt.Sprintf(", within the harness's send lag %s %s (harness-bound)", b.Quantile, words.US(b.LagUS))
				c.Error = &junitError{Message: msg, Type: "harness-bound", Text: msg}
			} else {
				c.Failure = &junitFailure{Message: msg, Type: "threshold", Text: msg}
			}
		}
		th.add(c)
	}
	vs := junitSuite{Name: "lobbybench.violations", Time: junitTime(run.DurationNS), Timestamp: timestamp(run.StartedAt)}
	for _, v := range run.Violations {
		var b strings.Builder
		for i, s := range v.Samples {
			fmt.Fprintf(&b, "sample %d at %s: packet %s", i+1, s.OffsetNS, s.Packet)
			if s.Request != "" {
				fmt.Fprintf(&b, " request %s", s.Request)
			}
			if s.Detail != "" {
				fmt.Fprintf(&b, " (%s)", s.Detail)
			}
			b.WriteByte('\n')
		}
		msg := fmt.Sprintf("rule %s violated %s", v.Rule, words.Count(v.Count, "time"))
		vs.add(junitCase{Name: v.Rule, Classname: "violations", Time: "0.000",
			Failure: &junitFailure{Message: msg, Type: "violation", Text: xmlSafe(b.String())}})
	}
	return writeJUnit(w, "lobbybench run", run.DurationNS, append(suites, th, vs)...)
}

// addInterrupted adds to s the <error> testcase "<what> completed" that
// a partial result (Headline.Partial: interrupted or incomplete) leads
// with, its type the status, so no CI reads a partial result as a pass.
func addInterrupted(s *junitSuite, hl result.Headline, what string, d time.Duration) {
	if !hl.Partial() {
		return
	}
	s.add(junitCase{Name: what + " completed", Classname: what, Time: junitTime(d),
		Error: &junitError{Message: hl.Text, Type: hl.Status, Text: xmlSafe(hl.Text)}})
}

// WriteConformJUnit writes c as JUnit XML: a suite during which the target
// stopped answering leads with the <error> testcase "target kept
// answering" (type target_down) that says how and during which cases, and
// its not-run cases are <skipped> with the reason; otherwise an interrupted
// suite leads with the <error> testcase "conform completed" that says so; then one testcase per case, classname
// "conform.<section>", verdict fail as <failure> (type = level), skip as
// <skipped>; pass, warn and info pass, warn and info with their text in
// <system-out>, except that under Strict a warning is a <failure> (type
// "should (strict)"), as the exit code says. More skips than MaxSkips add a
// failing testcase "skip budget". The rule id and notes go with the text (a passing case's
// notes alone to <system-out>), the wire log to <system-out> too, and the
// run's notes to the suite's <system-out>.
func WriteConformJUnit(w io.Writer, c *result.Conform) error {
	name := "lobbybench.conform"
	if c.Protocol != "" {
		name += "." + c.Protocol
	}
	s := junitSuite{Name: name, Time: junitTime(c.DurationNS), Timestamp: timestamp(c.StartedAt)}
	if hl := c.Headline(); hl.Status == result.StatusTargetDown {
		s.add(targetDownJUnitCase(c, hl))
	} else {
		addInterrupted(&s, hl, "conform", c.DurationNS)
	}
	for i := range c.Cases {
		s.add(conformJUnitCase(&c.Cases[i], c.Strict))
	}
	if c.MaxSkips != nil {
		sum := c.Summary()
		jc := junitCase{Name: fmt.Sprintf("skip budget: at most %d of %s skipped", *c.MaxSkips, words.Count(sum.Total, "case")), Classname: "conform", Time: "0.000"}
		if c.SkipsOverBudget() {
			msg := fmt.Sprintf("%s skipped, over --max-skips %d: the run checked too little to pass", words.Count(sum.Skip, "case"), *c.MaxSkips)
			jc.Failure = &junitFailure{Message: msg, Type: "skip budget", Text: msg}
		}
		s.add(jc)
	}
	if len(c.Notes) > 0 {
		var out strings.Builder
		writeNotes(&out, c.Notes)
		s.SystemOut = &junitText{Text: xmlSafe(out.String())}
	}
	return writeJUnit(w, "lobbybench conform", c.DurationNS, s)
}

// targetDownJUnitCase is the <error> testcase "target kept answering" of
// a suite during which the target stopped: how and during which cases.
func targetDownJUnitCase(c *result.Conform, hl result.Headline) junitCase {
	// An <error>, not a <failure>: no case's requirement was judged
	// by it, the suite could not go on. CI goes red on either.
	var d strings.Builder
	d.WriteString(hl.Text + "\n")
	for _, o := range c.Outages {
		fmt.Fprintf(&d, "down at +%v (%s), last answered at +%v", o.StartNS.Round(time.Millisecond), o.What(), o.LastUpNS.Round(time.Millisecond))
		if o.Detail != "" {
			fmt.Fprintf(&d, ": %s", o.Detail)
		}
		if len(o.During) > 0 {
			fmt.Fprintf(&d, "; during %s", strings.Join(o.During, ", "))
		}
		if o.Exit != "" {
			fmt.Fprintf(&d, "; exit: %s", o.Exit)
		}
		d.WriteByte('\n')
		for _, l := range o.Output {
			fmt.Fprintf(&d, "output: %s\n", l)
		}
	}
	return junitCase{Name: "target kept answering", Classname: "conform", Time: junitTime(c.DurationNS),
		Error: &junitError{Message: hl.Text, Type: hl.Status, Text: xmlSafe(d.String())}}
}

// conformJUnitCase is case k's testcase (see WriteConformJUnit); under
// strict a warning is a <failure>.
func conformJUnitCase(k *result.Case, strict bool) junitCase {
	name := k.ID + " " + k.Description
	if k.Rule != "" {
		// the rule leads the description, as in the text report
		name = k.ID + " [" + k.Rule + "] " + k.Description
	}
	jc := junitCase{Name: name, Classname: "conform." + k.Section, Time: junitTime(k.DurationNS)}
	var out strings.Builder
	detail := junitCaseDetail(k)
	switch k.Verdict {
	case result.VerdictFail:
		jc.Failure = &junitFailure{Message: "expected " + k.Expected + ", got " + k.Actual, Type: k.Level, Text: xmlSafe(detail)}
	case result.VerdictSkip:
		jc.Skipped = &junitSkipped{Message: k.Actual}
		writeNotes(&out, k.Notes)
	case result.VerdictNotRun:
		// <skipped>: the case was not executed, which is what JUnit's
		// skipped means; the suite is red already through the
		// "target kept answering" <error> and the in-flight cases'
		// <failure>s, and one dead server is not N errors.
		jc.Skipped = &junitSkipped{Message: k.Actual}
	case result.VerdictWarn:
		if strict {
			jc.Failure = &junitFailure{Message: "strict: expected " + k.Expected + ", got " + k.Actual, Type: k.Level + " (strict)", Text: xmlSafe(detail)}
		} else {
			out.WriteString(k.Verdict + ": " + detail)
		}
	case result.VerdictInfo:
		out.WriteString(k.Verdict + ": " + detail)
	default:
		writeNotes(&out, k.Notes)
	}
	writeWire(&out, k.Wire, k.WireElided)
	if k.WireOmitted > 0 {
		fmt.Fprintf(&out, "(%s of this passing case left out: conform --verbose keeps them; the JSON has them)\n", words.Count(k.WireOmitted, "wire log entry"))
	}
	if out.Len() > 0 {
		jc.SystemOut = &junitText{Text: xmlSafe(out.String())}
	}
	return jc
}

// junitCaseDetail is the text of case k's verdict: requirement, rule,
// expected, actual and notes (an info case's empty expected and actual
// left out).
func junitCaseDetail(k *result.Case) string {
	var d strings.Builder
	fmt.Fprintf(&d, "requirement (%s): %s\n", k.Level, k.Requirement)
	if k.Rule != "" {
		fmt.Fprintf(&d, "rule: %s\n", k.Rule)
	}
	if k.Expected != "" || k.Verdict != result.VerdictInfo {
		fmt.Fprintf(&d, "expected: %s\n", k.Expected)
	}
	if k.Actual != "" || k.Verdict != result.VerdictInfo {
		fmt.Fprintf(&d, "actual: %s\n", k.Actual)
	}
	writeNotes(&d, k.Notes)
	return d.String()
}

func writeNotes(b *strings.Builder, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

// writeWire writes one line per entry: direction, offset, hex, then the
// addresses (from → to) and the entry's note in parentheses when known,
// and a last line for entries the suite did not record.
func writeWire(b *strings.Builder, wire []result.WireEntry, elided int) {
	for _, e := range wire {
		arrow, from, to := "->", e.Local, e.Peer
		if e.Dir == result.DirRecv {
			arrow, from, to = "<-", e.Peer, e.Local
		}
		fmt.Fprintf(b, "%s +%s %s", arrow, e.OffsetNS, e.Hex)
		var extra []string
		if from != "" || to != "" {
			extra = append(extra, firstNonEmpty(from, "?")+" → "+firstNonEmpty(to, "?"))
		}
		if e.Note != "" {
			extra = append(extra, e.Note)
		}
		if len(extra) > 0 {
			fmt.Fprintf(b, " (%s)", strings.Join(extra, "; "))
		}
		b.WriteByte('\n')
	}
	if elided > 0 {
		fmt.Fprintf(b, "... %d more %s not recorded\n", elided, words.Plural(elided, "entry"))
	}
}
