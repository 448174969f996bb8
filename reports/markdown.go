package reports

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// mdCell makes s safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\\\")
	s = strings.ReplaceAll(s, "|", "\\|")
	return mdInline(s)
}

// mdTable writes a Markdown table, every cell through mdCell.
func mdTable(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdCell(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// mdCode puts s in a code span (not in a table: a table cell goes
// through mdCell); a backtick, which would end the span, becomes ', a
// line break a space.
func mdCode(s string) string {
	return "`" + strings.NewReplacer("`", "'", "\r", "", "\n", " ").Replace(s) + "`"
}

var verdictMark = map[string]string{
	result.VerdictPass:   "✅ pass",
	result.VerdictFail:   "❌ fail",
	result.VerdictWarn:   "⚠️ warn",
	result.VerdictInfo:   "ℹ️ info",
	result.VerdictSkip:   "⏭️ skip",
	result.VerdictNotRun: "⛔ not run",
}

func init() {
	register(Format{
		Name: "markdown",
		Help: map[string]string{
			result.KindRun:     "write a Markdown summary to `FILE` (a PR comment, $GITHUB_STEP_SUMMARY)",
			result.KindConform: "write a Markdown summary to `file`",
		},
		Write: one(WriteRunMarkdown, WriteConformMarkdown, false),
		Report: &ReportHelp{
			Summary: "render a result as a Markdown summary",
			Usage: `Usage: lobbybench report markdown RESULT.json [-o FILE]

Writes a run result or a conform result as the Markdown summary that
'run --markdown' and 'conform --markdown' write (for a pull-request
comment, or $GITHUB_STEP_SUMMARY), to FILE or stdout. Its verdict comes
first: TARGET DOWN, INTERRUPTED, INCOMPLETE, FAIL, INCONCLUSIVE or PASS.`,
			List: `  markdown RESULT.json [-o FILE]  a Markdown summary (PR comment, CI job
                                  summary)
`,
		},
	})
}

// WriteConformMarkdown writes c as a Markdown summary: the run's notes,
// counts, a table of every case (with its rule id), then details (quoted
// requirement, rule, expected, actual, notes, wire log) for each case that
// failed or warned, and the observations of info cases.
func WriteConformMarkdown(w io.Writer, c *result.Conform) error {
	ew := &errWriter{w: w}
	writeConformMDHead(ew, c)
	writeOutagesMD(ew, c.Outages)
	writeConformMDTable(ew, c)
	writeConformMDFailures(ew, c.Cases)
	writeConformMDInfo(ew, c.Cases)
	return ew.err
}

// WriteRunMarkdown writes run as a Markdown summary for a pull-request
// comment or a CI job summary ($GITHUB_STEP_SUMMARY). Its first line is
// the run's headline (Run.Headline, as in every format: INTERRUPTED,
// INCOMPLETE, FAIL, INCONCLUSIVE or PASS; none when there is nothing to judge), then
// what ran and why it is incomplete, the totals and sessions, the
// thresholds, a table per step and per message type (count, outcomes,
// latency from the intended send time, send lag p99) with the steps that
// never succeeded, failures by reason, violations by rule, the
// malformed and rate-limit findings, and the warnings `run` prints. The
// figures are in the terminal's units, from the terminal's helpers.
func WriteRunMarkdown(w io.Writer, run *result.Run) error {
	ew := &errWriter{w: w}
	writeRunMDHead(ew, run)
	writeRunMDThresholds(ew, run)
	writeRunMDSeries(ew, run)
	writeLobbyMarkdown(ew, run)
	writeRunMDTarget(ew, run)
	writeRunMDFindings(ew, run)
	return ew.err
}

// writeConformMDHead writes the title, the headline, what ran and the notes.
func writeConformMDHead(ew *errWriter, c *result.Conform) {
	title := "Conformance"
	if c.Protocol != "" {
		title += ": " + c.Protocol
	}
	fmt.Fprintf(ew, "# %s\n\n", title)
	fmt.Fprintf(ew, "**%s**\n\n", mdInline(c.Headline().Text))
	if c.Target != "" {
		fmt.Fprintf(ew, "Target `%s`", c.Target)
	} else {
		fmt.Fprint(ew, "Target unknown")
	}
	if !c.StartedAt.IsZero() {
		fmt.Fprintf(ew, ", started %s", c.StartedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(ew, ", took %s", c.DurationNS.Round(time.Millisecond))
	if c.Strict {
		fmt.Fprint(ew, ", strict (SHOULD checked)")
	}
	fmt.Fprint(ew, ".\n\n")
	for _, n := range c.Notes {
		fmt.Fprintf(ew, "- %s\n", mdInline(n))
	}
	if len(c.Notes) > 0 {
		fmt.Fprint(ew, "\n")
	}
}

// writeOutagesMD writes one item per outage of the target, its output in
// a code block.
func writeOutagesMD(ew *errWriter, outages []result.Outage) {
	for _, o := range outages {
		fmt.Fprintf(ew, "- ⛔ Target down at +%v (%s), last answered at +%v", o.StartNS.Round(time.Millisecond), mdInline(o.What()), o.LastUpNS.Round(time.Millisecond))
		if o.Detail != "" {
			fmt.Fprintf(ew, ": %s", mdInline(o.Detail))
		}
		if len(o.During) > 0 {
			fmt.Fprintf(ew, "; during `%s`", strings.Join(o.During, "`, `"))
		}
		if o.Back {
			fmt.Fprintf(ew, "; back at +%v", o.EndNS.Round(time.Millisecond))
		}
		if ct := o.CulpritText(); ct != "" {
			fmt.Fprintf(ew, "; re-run alone: %s", mdInline(ct))
		}
		fmt.Fprint(ew, "\n")
		if len(o.Output) > 0 {
			fmt.Fprintf(ew, "\n```text\n%s\n```\n", strings.ReplaceAll(strings.Join(o.Output, "\n"), "```", "` ` `"))
		}
	}
	if len(outages) > 0 {
		fmt.Fprint(ew, "\n")
	}
}

// writeConformMDTable writes the counts and the table of every case.
func writeConformMDTable(ew *errWriter, c *result.Conform) {
	s := c.Summary()
	notRun := ""
	if s.NotRun > 0 {
		notRun = fmt.Sprintf(", %d not run", s.NotRun)
	}
	fmt.Fprintf(ew, "**%s: %d pass, %d fail, %d warn, %d info, %d skip%s.**\n\n", words.Count(s.Total, "case"), s.Pass, s.Fail, s.Warn, s.Info, s.Skip, notRun)
	fmt.Fprint(ew, "| ID | Section | Level | Verdict | Description |\n|---|---|---|---|---|\n")
	for _, k := range c.Cases {
		v, ok := verdictMark[k.Verdict]
		if !ok {
			v = k.Verdict
		}
		desc := mdCell(k.Description)
		if k.Rule != "" {
			desc = "[" + mdCell(k.Rule) + "] " + desc
		}
		fmt.Fprintf(ew, "| `%s` | %s | %s | %s | %s |\n", mdCell(k.ID), mdCell(k.Section), mdCell(k.Level), v, desc)
	}
}

// writeConformMDFailures writes the details of each case that failed or
// warned.
func writeConformMDFailures(ew *errWriter, cases []result.Case) {
	first := true
	for _, k := range cases {
		if k.Verdict != result.VerdictFail && k.Verdict != result.VerdictWarn {
			continue
		}
		if first {
			fmt.Fprint(ew, "\n## Failures and warnings\n")
			first = false
		}
		fmt.Fprintf(ew, "\n### `%s` %s (%s, %s)\n\n", k.ID, mdInline(k.Description), k.Level, k.Verdict)
		for _, line := range strings.Split(k.Requirement, "\n") {
			fmt.Fprintf(ew, "> %s\n", mdInline(line))
		}
		fmt.Fprint(ew, "\n")
		if k.Rule != "" {
			fmt.Fprintf(ew, "- Rule: %s\n", mdInline(k.Rule))
		}
		fmt.Fprintf(ew, "- Expected: %s\n- Actual: %s\n", mdInline(k.Expected), mdInline(k.Actual))
		for _, n := range k.Notes {
			fmt.Fprintf(ew, "- Note: %s\n", mdInline(n))
		}
		if len(k.Wire) > 0 || k.WireElided > 0 {
			var b strings.Builder
			writeWire(&b, k.Wire, k.WireElided)
			fmt.Fprintf(ew, "\n```text\n%s```\n", strings.ReplaceAll(b.String(), "```", "` ` `"))
		}
	}
}

// writeConformMDInfo writes the observations of the info cases.
func writeConformMDInfo(ew *errWriter, cases []result.Case) {
	first := true
	for _, k := range cases {
		if k.Verdict != result.VerdictInfo || (k.Actual == "" && len(k.Notes) == 0) {
			continue
		}
		if first {
			fmt.Fprint(ew, "\n## Information\n\n")
			first = false
		}
		obs := k.Notes
		if k.Actual != "" {
			obs = append([]string{k.Actual}, k.Notes...)
		}
		fmt.Fprintf(ew, "- `%s` %s: %s\n", k.ID, mdInline(k.Description), mdInline(strings.Join(obs, "; ")))
	}
}

// writeRunMDHead writes the headline, what ran, why it is incomplete, the
// totals and the sessions.
func writeRunMDHead(ew *errWriter, run *result.Run) {
	if hl := run.Headline(); hl.Text != "" {
		fmt.Fprintf(ew, "**%s**\n\n", mdInline(hl.Text))
	}
	fmt.Fprintf(ew, "### lobbybench run: %s\n\n", mdInline(words.OrDash(run.Scenario)))
	fmt.Fprintf(ew, "Target %s", mdCode(words.OrDash(run.Target)))
	if !run.StartedAt.IsZero() {
		fmt.Fprintf(ew, ", started %s", run.StartedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(ew, ", took %s, %s.\n\n", run.DurationNS.Round(time.Millisecond), words.Count(run.Shards, "shard"))
	for _, why := range run.Incomplete {
		fmt.Fprintf(ew, "- INCOMPLETE: %s\n", mdInline(why))
	}
	fmt.Fprintf(ew, "- %s.\n", mdInline(totalsLine(run)))
	if run.Sessions != nil {
		fmt.Fprintf(ew, "- Sessions: %s.\n", mdInline(run.Sessions.String()))
	}
}

// writeRunMDThresholds writes the table of thresholds, if any.
func writeRunMDThresholds(ew *errWriter, run *result.Run) {
	if len(run.Thresholds) > 0 {
		var rows [][]string
		for _, th := range run.Thresholds {
			v := thresholdVerdict(run, th, verdictMark[result.VerdictPass], verdictMark[result.VerdictFail], "⚠️ harness-bound")
			rows = append(rows, []string{th.Name, th.LimitText(), th.ObservedText(), v})
		}
		fmt.Fprint(ew, "\n#### Thresholds\n\n")
		mdTable(ew, []string{"Threshold", "Limit", "Observed", "Verdict"}, rows)
	}
}

// writeRunMDSeries writes the tables of steps and of message types, and
// the steps that never succeeded.
func writeRunMDSeries(ew *errWriter, run *result.Run) {
	for _, part := range []struct {
		title, col string
		rows       []result.Series
	}{{"Steps", "Step", run.Steps}, {"Messages", "Message", run.Messages}} {
		if len(part.rows) == 0 {
			continue
		}
		var rows [][]string
		for _, s := range part.rows {
			l := s.Latency
			rows = append(rows, []string{s.Name, itoa(s.Requests), itoa(s.Successes), itoa(s.Failures), itoa(s.Cut), words.Pct(s.ErrorRate()),
				fmtLat(l, l.P50US), fmtLat(l, l.P90US), fmtLat(l, l.P99US), fmtLat(l, l.MaxUS), fmtLat(s.SendLag, s.SendLag.P99US)})
		}
		fmt.Fprintf(ew, "\n#### %s (latency from the intended send time)\n\n", part.title)
		mdTable(ew, []string{part.col, "Requests", "OK", "Fail", "Cut", "Err%", "p50", "p90", "p99", "Max", "Send lag p99"}, rows)
		if part.title == "Steps" {
			if never := NeverSucceeded(run); len(never) > 0 {
				fmt.Fprint(ew, "\n")
				for _, line := range never {
					fmt.Fprintf(ew, "- %s\n", mdInline(line))
				}
			}
		}
	}
}

// writeRunMDTarget writes the target's outages, what its process cost and
// the recovery drill.
func writeRunMDTarget(ew *errWriter, run *result.Run) {
	if lines := OutageLines(run); len(lines) > 0 {
		fmt.Fprintf(ew, "\n#### Target outages\n\n")
		for i, line := range lines {
			fmt.Fprintf(ew, "- %s\n", mdInline(line))
			if out := run.Outages[i].Output; len(out) > 0 {
				fmt.Fprintf(ew, "\n  ```text\n  %s\n  ```\n", strings.ReplaceAll(strings.Join(out, "\n  "), "```", "` ` `"))
			}
		}
	}
	if lines := TargetLines(run); len(lines) > 0 {
		fmt.Fprintf(ew, "\n#### Target process (what the load cost the server)\n\n")
		for i, line := range lines {
			if cmd := run.TargetProcess.Command; i == 0 && strings.HasPrefix(line, cmd) {
				// The command as code, what follows as text.
				line = mdCode(cmd) + mdEscaper.Replace(line[len(cmd):])
			} else {
				line = mdInline(line)
			}
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	if run.Drill != nil {
		fmt.Fprintf(ew, "\n#### Recovery drill\n\n")
		for _, line := range run.Drill.Lines() {
			fmt.Fprintf(ew, "- %s\n", mdInline(line))
		}
	}
}

// writeRunMDFindings writes the failures by reason, violations,
// malformed and rate-limit findings, and the warnings.
func writeRunMDFindings(ew *errWriter, run *result.Run) {
	mdReasonHeader, mdReasonRows := reasonTable(run.Totals, "Reason", "Count", "While down", "While up")
	for _, t := range []struct {
		title  string
		header []string
		rows   [][]string
	}{
		{"Failures by reason", mdReasonHeader, mdReasonRows},
		{"Protocol violations", []string{"Rule", "Count", "First packet"}, violationRows(run.Violations)},
		{"Malformed packets", []string{"Kind", "Sent", "Unexpected replies", "Liveness kept"}, malformedRows(run.Malformed)},
		{"Rate limits", []string{"Source", "Limit/s", "Sent", "Accepted", "Limited", "Others p99", "Others errors", "Note"}, rateLimitNoted(run.RateLimits)},
	} {
		if len(t.rows) == 0 {
			continue
		}
		fmt.Fprintf(ew, "\n#### %s\n\n", t.title)
		mdTable(ew, t.header, t.rows)
	}
	if warns := run.Warnings(); len(warns) > 0 {
		fmt.Fprint(ew, "\n#### Warnings\n\n")
		for _, line := range warns {
			fmt.Fprintf(ew, "- ⚠️ %s\n", mdInline(line))
		}
	}
}

// rateLimitNoted is rateLimitRows with each finding's note, the HTML's
// last column too.
func rateLimitNoted(rs []result.RateLimitFinding) [][]string {
	rows := rateLimitRows(rs)
	for i := range rows {
		rows[i] = append(rows[i], rs[i].Note)
	}
	return rows
}

var mdEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "", "\n", " ")

// mdInline makes s safe as inline Markdown text (no raw HTML, one line).
func mdInline(s string) string {
	if s == "" {
		return "(none)"
	}
	return mdEscaper.Replace(s)
}
