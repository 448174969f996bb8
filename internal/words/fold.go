package words

import (
	"strings"

	"github.com/clipperhouse/displaywidth"
)

// TermWidth is the width, in display columns, lobbybench's terminal output
// (the reports, describe) is laid out for. It is fixed rather than read from the terminal: the report is
// the same on a terminal, in a pipe, in a CI log and in the golden files,
// 80 columns is what a default terminal and a pasted log show, and wider
// terminals lose nothing but blank space.
const TermWidth = 80

// Width is the number of terminal columns s takes (a CJK rune two,
// "µ" or "·" one), with ambiguous-width runes counted narrow.
func Width(s string) int { return displaywidth.String(s) }

// Wrap breaks text into lines of at most width display columns, at spaces:
// the first line keeps text's leading spaces, the following ones start
// with hang spaces (a hanging indent). A word too wide for a line of its
// own is cut where the line ends.
func Wrap(text string, width, hang int) []string {
	lead := text[:len(text)-len(strings.TrimLeft(text, " "))]
	if hang < 0 || hang >= width {
		hang = 0
	}
	if Width(lead) >= width {
		lead = ""
	}
	indent := strings.Repeat(" ", hang)
	var lines []string
	cur, curW, empty := lead, Width(lead), true
	for _, word := range strings.Fields(text) {
		ww := Width(word)
		if !empty && curW+1+ww > width {
			lines = append(lines, cur)
			cur, curW, empty = indent, hang, true
		}
		if !empty {
			cur, curW = cur+" ", curW+1
		}
		// Each turn moves at least one rune of word onto a line.
		for curW+ww > width {
			head, tail := CutWidth(word, width-curW)
			lines = append(lines, cur+head)
			cur, curW, word, ww = indent, hang, tail, Width(tail)
		}
		cur, curW, empty = cur+word, curW+ww, false
	}
	return append(lines, cur)
}

// CutWidth splits s after as many runes as fit in n columns, at least one.
func CutWidth(s string, n int) (string, string) {
	w := 0
	for i, r := range s {
		rw := Width(string(r))
		if i > 0 && w+rw > n {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// FoldColumns folds each line of text (a label, a gap of two or more
// spaces, then a value: what a tabwriter lays out) that is wider than
// width, so that its continuation lines start under the value; a line
// without such a gap hangs two columns in from its own indent.
func FoldColumns(text string, width int) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if Width(l) > width {
			lines[i] = strings.Join(foldLine(l, width), "\n")
		}
	}
	return strings.Join(lines, "\n")
}

// foldLine folds l under its value column, the label and its gap kept.
func foldLine(l string, width int) []string {
	at := valueAt(l)
	col := Width(l[:at])
	if col > width/2 {
		// The label alone, the value below it.
		hang := 2 + len(l) - len(strings.TrimLeft(l, " "))
		value := Wrap(strings.Repeat(" ", hang)+l[at:], width, hang)
		return append([]string{strings.TrimRight(l[:at], " ")}, value...)
	}
	// The first line as written (its columns' gaps kept) up to the last
	// space that fits; the rest under the value.
	cut := -1
	for i := at; i < len(l); i++ {
		if l[i] == ' ' && Width(l[:i]) <= width {
			cut = i
		}
	}
	if cut < 0 {
		pad := strings.Repeat(" ", col)
		out := Wrap(pad+l[at:], width, col)
		out[0] = l[:at] + strings.TrimPrefix(out[0], pad)
		return out
	}
	rest := Wrap(strings.Repeat(" ", col)+strings.TrimSpace(l[cut:]), width, col)
	return append([]string{strings.TrimRight(l[:cut], " ")}, rest...)
}

// valueAt is the byte offset in l where its value starts: after the first
// gap of two or more spaces that follows its text, or its indent plus two
// (within l).
func valueAt(l string) int {
	body := strings.TrimLeft(l, " ")
	indent := len(l) - len(body)
	if i := strings.Index(body, "  "); i >= 0 {
		gap := len(body[i:]) - len(strings.TrimLeft(body[i:], " "))
		return indent + i + gap
	}
	return min(indent+2, len(l))
}
