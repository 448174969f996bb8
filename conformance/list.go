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
		stage := ""
		switch c.Stage {
		case StageSerial:
			stage = " (runs alone)"
		case StagePool:
			stage = " (runs alone, after the others: exhausts the pool)"
		case StageDestructive:
			stage = " (runs alone, last: may crash the target)"
		}
		if _, err := fmt.Fprintf(w, "  %-*s %-6s %s%s\n%s\"%s\"\n", width, c.ID, c.Level, c.Desc, stage, indent, strings.TrimSpace(c.Requirement)); err != nil {
			return err
		}
	}
	return nil
}
