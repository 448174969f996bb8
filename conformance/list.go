package conformance

import (
	"fmt"
	"io"
	"strings"
)

// WriteList writes the cases (for --list): id, level, description,
// requirement, without sending anything.
// The id column is as wide as the longest id listed, so levels line up.
func WriteList(w io.Writer, cases []*Case) error {
	width := 0
	for _, c := range cases {
		width = max(width, len(c.ID))
	}
	indent := strings.Repeat(" ", 2+width+1)
	section := ""
	for _, c := range cases {
		if c.Section != section {
			section = c.Section
			if _, err := fmt.Fprintf(w, "\n%s\n", section); err != nil {
				return err
			}
		}
		phase := ""
		switch c.Phase {
		case PhaseSerial:
			phase = " (runs alone)"
		case PhasePool:
			phase = " (runs alone, after the others: exhausts the pool)"
		case PhaseDestructive:
			phase = " (runs alone, last: may crash the target)"
		case PhaseReview:
			phase = " (sends nothing: judged after the others, from what they received)"
		}
		if _, err := fmt.Fprintf(w, "  %-*s %-6s %s%s\n%s\"%s\"\n", width, c.ID, c.Level, c.Desc, phase, indent, strings.TrimSpace(c.Requirement)); err != nil {
			return err
		}
	}
	return nil
}
