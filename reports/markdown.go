package reports

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// mdCell makes s safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\\\")
	s = strings.ReplaceAll(s, "|", "\\|")
	return mdInline(s)
}

var verdictMark = map[string]string{
	VerdictPass: "✅ pass",
	VerdictFail: "❌ fail",
	VerdictWarn: "⚠️ warn",
	VerdictInfo: "ℹ️ info",
	VerdictSkip: "⏭️ skip",
}

// WriteConformMarkdown writes c as a Markdown summary: the run's notes,
// counts, a table of every case (with its rule id), then details (quoted
// requirement, rule, expected, actual, notes, wire log) for each case that
// failed or warned, and the observations of info cases.
func WriteConformMarkdown(w io.Writer, c *Conform) error {
	ew := &errWriter{w: w}
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
	s := c.Summary()
	fmt.Fprintf(ew, "**%d cases: %d pass, %d fail, %d warn, %d info, %d skip.**\n\n", s.Total, s.Pass, s.Fail, s.Warn, s.Info, s.Skip)
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
	first := true
	for _, k := range c.Cases {
		if k.Verdict != VerdictFail && k.Verdict != VerdictWarn {
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
	first = true
	for _, k := range c.Cases {
		if k.Verdict != VerdictInfo || (k.Actual == "" && len(k.Notes) == 0) {
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
	return ew.err
}

var mdEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "", "\n", " ")

// mdInline makes s safe as inline Markdown text (no raw HTML, one line).
func mdInline(s string) string {
	if s == "" {
		return "(none)"
	}
	return mdEscaper.Replace(s)
}
