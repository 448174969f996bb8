package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitFailure struct {
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

// WriteRunJUnit writes run as JUnit XML: suite "thresholds" with one
// testcase per threshold (a failure when it did not pass) and suite
// "violations" with one failing testcase per violated protocol rule.
func WriteRunJUnit(w io.Writer, run *Run) error {
	th := junitSuite{Name: "lobbybench.thresholds", Time: junitTime(run.DurationNS), Timestamp: timestamp(run.StartedAt)}
	for _, t := range run.Thresholds {
		c := junitCase{Name: t.Name, Classname: "thresholds", Time: "0.000"}
		if !t.Pass {
			msg := fmt.Sprintf("%s = %s, want %s %s", t.Metric, fmtFloat(t.Observed), t.Op, fmtFloat(t.Limit))
			if t.Step != "" {
				msg = t.Step + " " + msg
			}
			c.Failure = &junitFailure{Message: msg, Type: "threshold", Text: msg}
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
		msg := fmt.Sprintf("rule %s violated %d time(s)", v.Rule, v.Count)
		vs.add(junitCase{Name: v.Rule, Classname: "violations", Time: "0.000",
			Failure: &junitFailure{Message: msg, Type: "violation", Text: xmlSafe(b.String())}})
	}
	return writeJUnit(w, "lobbybench run", run.DurationNS, th, vs)
}

// WriteConformJUnit writes c as JUnit XML: one testcase per case, classname
// "conform.<section>", verdict fail as <failure> (type = level), skip as
// <skipped>; pass, warn and info pass, warn and info with their text in
// <system-out>. The wire log goes to <system-out> too.
func WriteConformJUnit(w io.Writer, c *Conform) error {
	name := "lobbybench.conform"
	if c.Protocol != "" {
		name += "." + c.Protocol
	}
	s := junitSuite{Name: name, Time: junitTime(c.DurationNS), Timestamp: timestamp(c.StartedAt)}
	for _, k := range c.Cases {
		jc := junitCase{Name: k.ID + " " + k.Description, Classname: "conform." + k.Section, Time: junitTime(k.DurationNS)}
		var out strings.Builder
		detail := fmt.Sprintf("requirement (%s): %s\nexpected: %s\nactual: %s\n", k.Level, k.Requirement, k.Expected, k.Actual)
		switch k.Verdict {
		case VerdictFail:
			jc.Failure = &junitFailure{Message: "expected " + k.Expected + ", got " + k.Actual, Type: k.Level, Text: xmlSafe(detail)}
		case VerdictSkip:
			jc.Skipped = &junitSkipped{Message: k.Actual}
		case VerdictWarn, VerdictInfo:
			out.WriteString(k.Verdict + ": " + detail)
		}
		writeWire(&out, k.Wire)
		if out.Len() > 0 {
			jc.SystemOut = &junitText{Text: xmlSafe(out.String())}
		}
		s.add(jc)
	}
	return writeJUnit(w, "lobbybench conform", c.DurationNS, s)
}

func writeWire(b *strings.Builder, wire []WireEntry) {
	for _, e := range wire {
		arrow := "->"
		if e.Dir == DirRecv {
			arrow = "<-"
		}
		fmt.Fprintf(b, "%s +%s %s\n", arrow, e.OffsetNS, e.Hex)
	}
}
