package words

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name        string
		text        string
		width, hang int
		want        []string
	}{
		{"fits", "a short line", 20, 2, []string{"a short line"}},
		{"exact", "12345 7890", 10, 2, []string{"12345 7890"}},
		{"hanging", "one two three four five", 10, 2, []string{"one two", "  three", "  four", "  five"}},
		{"keeps leading spaces", "  down at +1.2 s, last seen up", 16, 4, []string{"  down at +1.2", "    s, last seen", "    up"}},
		{"cuts a word too long", "x abcdefghijkl", 6, 2, []string{"x", "  abcd", "  efgh", "  ijkl"}},
		{"counts runes not bytes", "µµµµ µµµµ", 9, 0, []string{"µµµµ µµµµ"}},
		{"counts display width", "界界界 界", 8, 0, []string{"界界界", "界"}},
		{"hang too wide", "aa bb", 3, 5, []string{"aa", "bb"}},
		{"empty", "", 10, 2, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Wrap(tt.text, tt.width, tt.hang)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Wrap(%q, %d, %d) = %q, want %q", tt.text, tt.width, tt.hang, got, tt.want)
			}
			for _, l := range got {
				if w := Width(l); w > tt.width {
					t.Errorf("line %q is %d columns wide, over %d", l, w, tt.width)
				}
			}
		})
	}
}

// TestFoldColumns: a line over the width folds under its value column
// (after the first gap of two spaces), label and gap kept; lines that fit
// keep their layout; a line with no such gap, or a value column past half
// the width, hangs two columns in from its indent.
func TestFoldColumns(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"fits", "  load   20/s\n", 16, "  load   20/s\n"},
		{"value column", "  rooms  one two three four\n", 18, "  rooms  one two\n         three\n         four\n"},
		{"no gap", "  a sentence without columns\n", 16, "  a sentence\n    without\n    columns\n"},
		{"several lines", "x\n  ab  cd ef gh\n", 12, "x\n  ab  cd ef\n      gh\n"},
		{"no final newline", "  ab  cd ef gh", 12, "  ab  cd ef\n      gh"},
		{"value column past half", "  a long label  v w x", 16, "  a long label\n    v w x"},
		{"columns kept", "  1  label  one two three", 20, "  1  label  one two\n     three"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := FoldColumns(tt.in, tt.width)
			if got != tt.want {
				t.Errorf("FoldColumns(%q, %d) =\n%q, want\n%q", tt.in, tt.width, got, tt.want)
			}
			for _, l := range strings.Split(got, "\n") {
				if Width(l) > tt.width {
					t.Errorf("line %q is over %d columns", l, tt.width)
				}
			}
		})
	}
}
