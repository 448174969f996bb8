package script

import (
	"fmt"
	"strings"
)

// Describe is b's steps in words, for `describe`: what each sends, waits
// for or tests.
func (b *Block) Describe() string {
	parts := make([]string, 0, len(b.Steps))
	for i := range b.Steps {
		parts = append(parts, b.Steps[i].describe())
	}
	return strings.Join(parts, "; ")
}

func (s *Step) describe() string {
	switch {
	case s.Send != nil:
		return "send " + s.Send.describe()
	case s.Expect != nil:
		return "expect " + s.Expect.describe()
	case s.If != nil:
		d := fmt.Sprintf("if %s: %d steps", s.If.Cond.S, len(s.If.Then.Steps))
		if n := len(s.If.Else.Steps); n > 0 {
			d += fmt.Sprintf(", else %d", n)
		}
		return d
	case s.Repeat != nil:
		if s.Repeat.While.Set() {
			return fmt.Sprintf("repeat while %s (at most %d): %s", s.Repeat.While.S, s.Repeat.Max, s.Repeat.Body.Describe())
		}
		return fmt.Sprintf("repeat %d times: %s", s.Repeat.Count, s.Repeat.Body.Describe())
	}
	return "think"
}

func (s *Send) describe() string {
	d := s.Message.S
	if s.Raw.S != "" {
		d = fmt.Sprintf("%d raw bytes", len(s.Raw.S)/2)
	}
	if s.To.S != "" {
		d += " to " + s.To.S
	}
	return d
}

func (e *Expect) describe() string {
	if e.Silence > 0 {
		return fmt.Sprintf("silence for %s", e.Silence)
	}
	names := make([]string, len(e.Messages))
	for i, m := range e.Messages {
		names[i] = m.S
	}
	d := strings.Join(names, " or ")
	if e.Any {
		d = "any message"
	}
	d += fmt.Sprintf(" within %s", e.Within)
	if e.Where.Set() {
		d += " where " + e.Where.S
	}
	return d
}
