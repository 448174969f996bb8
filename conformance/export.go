package conformance

import (
	"io"
	"strings"

	"github.com/lobbybench/lobbybench/reports"
)

// ToConform converts r to the reports package's conform model (JSON,
// JUnit, Markdown, HTML): the run's notes, and per case its rule id, notes
// (apart from Actual, which holds a skip's reason), wire entries with
// direction, offset, addresses, hex and note, and the count of entries the
// log bounds left out.
func ToConform(r *Report) *reports.Conform {
	c := reports.NewConform()
	c.Protocol = r.Protocol
	c.Target = r.Target
	c.Strict = r.Strict
	c.StartedAt = r.Started
	c.DurationNS = r.Duration
	c.Notes = append([]string(nil), r.Notes...)
	for _, x := range r.Results {
		k := reports.Case{
			ID:          x.Case.ID,
			Section:     x.Case.Section,
			Description: x.Case.Desc,
			Rule:        x.Case.Rule,
			Requirement: x.Case.Requirement,
			Level:       levelName(x.Case.Level),
			Verdict:     x.Verdict.String(),
			Expected:    x.Expected,
			Actual:      x.Actual,
			Notes:       append([]string(nil), x.Notes...),
			DurationNS:  x.Duration,
			WireElided:  x.WireElided,
		}
		for _, e := range x.Wire {
			dir := reports.DirSent
			if e.Dir == Received {
				dir = reports.DirRecv
			}
			k.Wire = append(k.Wire, reports.WireEntry{Dir: dir, OffsetNS: e.Offset, Local: e.Local, Peer: e.Peer,
				Hex: hexString(e.Data), Note: e.Note})
		}
		c.Cases = append(c.Cases, k)
	}
	return c
}

func levelName(l Level) string {
	switch l {
	case Must:
		return reports.LevelMust
	case Should:
		return reports.LevelShould
	}
	return reports.LevelInfo
}

// WriteJSON writes r as the reports package's conform JSON document.
func WriteJSON(w io.Writer, r *Report) error { return reports.WriteJSON(w, ToConform(r)) }

// WriteJUnit writes r as JUnit XML (one testcase per case, failures as
// <failure>).
func WriteJUnit(w io.Writer, r *Report) error { return reports.WriteConformJUnit(w, ToConform(r)) }

// WriteMarkdown writes r as a Markdown summary for CI.
func WriteMarkdown(w io.Writer, r *Report) error {
	return reports.WriteConformMarkdown(w, ToConform(r))
}

// WriteHTML writes r as one self-contained HTML page (cases grouped by
// section, wire logs in <details>), with the reports package's renderer.
func WriteHTML(w io.Writer, r *Report) error {
	return reports.WriteHTML(w, reports.HTMLOptions{Title: HTMLTitle(r)}, ToConform(r))
}

// HTMLTitle is the title of r's HTML page.
func HTMLTitle(r *Report) string { return "lobbybench conform: " + r.Protocol + " " + r.Target }

// WriteList writes the cases (for --list): id, level, description,
// requirement, without sending anything.
func WriteList(w io.Writer, cases []*Case) error {
	ew := &errWriter{w: w}
	section := ""
	for _, c := range cases {
		if c.Section != section {
			section = c.Section
			io.WriteString(ew, "\n"+section+"\n")
		}
		stage := ""
		switch c.Stage {
		case StageSerial:
			stage = " (runs alone)"
		case StagePool:
			stage = " (runs alone, after the others: exhausts the pool)"
		case StageDestructive:
			stage = " (runs alone, last: may crash the target)"
		}
		io.WriteString(ew, "  "+padRight(c.ID, 10)+" "+padRight(c.Level.String(), 6)+" "+c.Desc+stage+"\n")
		io.WriteString(ew, "             \""+strings.TrimSpace(c.Requirement)+"\"\n")
	}
	return ew.err
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}
