package reports

import (
	"io"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
)

// TermWidth is the width, in display columns, the terminal report is laid
// out for (words.TermWidth says why).
const TermWidth = words.TermWidth

// displayWidth is the number of terminal columns s takes (words.Width).
func displayWidth(s string) int { return words.Width(s) }

// writeWrapped writes text wrapped to TermWidth with a hanging indent of
// hang columns.
func writeWrapped(w io.Writer, text string, hang int) {
	for _, line := range words.Wrap(text, TermWidth, hang) {
		io.WriteString(w, line+"\n")
	}
}

// WriteWrapped writes text to w wrapped at word boundaries to TermWidth,
// continuation lines indented by hang columns: the one way every line of
// the terminal report that may run long is folded.
func WriteWrapped(w io.Writer, text string, hang int) error {
	ew := &errWriter{w: w}
	writeWrapped(ew, text, hang)
	return ew.err
}

// writeColumns writes a borderless table indented by indent: the header,
// then the rows, columns two spaces apart, each column aligned as align
// says ('r' right, anything else left; numbers are right-aligned). When
// the table is wider than TermWidth, a first cell too long for its column
// goes on a line of its own with the row's other cells under it; when
// even that does not fit, each row becomes one wrapped line of
// "first: header value, header value…".
func writeColumns(w io.Writer, indent int, align string, header []string, rows [][]string) {
	n := len(header)
	widths := make([]int, n)
	for i, h := range header {
		widths[i] = displayWidth(h)
	}
	for _, r := range rows {
		for i := 0; i < n && i < len(r); i++ {
			widths[i] = max(widths[i], displayWidth(r[i]))
		}
	}
	rest := 0
	for _, wd := range widths[1:] {
		rest += 2 + wd
	}
	room := TermWidth - indent - rest // for the first column
	if room < displayWidth(header[0]) {
		writeRecords(w, indent, header, rows)
		return
	}
	if widths[0] > room {
		widths[0] = displayWidth(header[0])
		for _, r := range rows {
			if c := displayWidth(r[0]); c <= room {
				widths[0] = max(widths[0], c)
			}
		}
	}
	pad := strings.Repeat(" ", indent)
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString(pad)
		for i := 0; i < n; i++ {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if i > 0 {
				b.WriteString("  ")
			}
			gap := strings.Repeat(" ", max(widths[i]-displayWidth(c), 0))
			if i < len(align) && align[i] == 'r' {
				b.WriteString(gap + c)
			} else {
				b.WriteString(c + gap)
			}
		}
		io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
	}
	line(header)
	for _, r := range rows {
		if len(r) > 0 && displayWidth(r[0]) > widths[0] {
			writeWrapped(w, pad+r[0], indent+2)
			r = append([]string{""}, r[1:]...)
		}
		line(r)
	}
}

// writeRecords writes each row as one wrapped line: its first cell, then
// the other cells after their lower-cased headers.
func writeRecords(w io.Writer, indent int, header []string, rows [][]string) {
	for _, r := range rows {
		var parts []string
		for i := 1; i < len(header) && i < len(r); i++ {
			parts = append(parts, strings.ToLower(header[i])+" "+r[i])
		}
		writeWrapped(w, strings.Repeat(" ", indent)+r[0]+": "+strings.Join(parts, ", "), indent+2)
	}
}

// cutTo is s cut to at most n display columns, "…" marking a cut.
func cutTo(s string, n int) string {
	if displayWidth(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	head, _ := words.CutWidth(s, n-1)
	return head + "…"
}
