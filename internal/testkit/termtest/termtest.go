// Package termtest is a small terminal for tests of what lobbybench
// draws on one: progress bars redrawn in place and the notes above them.
package termtest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Screen is a terminal just good enough for mpb's redraws: it keeps the
// text on each row and follows carriage return, newline (as a tty's
// output processing makes it, to column 0 of the next row), cursor up
// (ESC[nA), erase below (ESC[J) and erase line right (ESC[K). Every
// write is signalled on wrote.
type Screen struct {
	mu       sync.Mutex
	rows     [][]rune
	row, col int
	unknown  []string // escape sequences it does not know
	wrote    chan struct{}
}

// New is an empty screen, its cursor at the top left.
func New() *Screen { return &Screen{rows: [][]rune{nil}, wrote: make(chan struct{}, 64)} }

func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := string(p)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\r':
			s.col = 0
		case r == '\n':
			s.row, s.col = s.row+1, 0
			for len(s.rows) <= s.row {
				s.rows = append(s.rows, nil)
			}
		case r == 0x1b && strings.HasPrefix(text[i:], "\x1b["):
			j := i + 2
			for j < len(text) && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			if j == len(text) {
				s.unknown = append(s.unknown, strconv.Quote(text[i:]))
				return len(p), nil
			}
			n, _ := strconv.Atoi(text[i+2 : j])
			switch text[j] {
			case 'A':
				s.row = max(s.row-max(n, 1), 0)
			case 'J':
				s.rows = s.rows[:s.row+1]
				s.cut()
			case 'K':
				s.cut()
			default:
				s.unknown = append(s.unknown, strconv.Quote(text[i:j+1]))
			}
			size = j + 1 - i
		default:
			line := s.rows[s.row]
			for len(line) <= s.col {
				line = append(line, ' ')
			}
			line[s.col] = r
			s.rows[s.row], s.col = line, s.col+1
		}
		i += size
	}
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

// cut erases the cursor's row from the cursor on.
func (s *Screen) cut() {
	if line := s.rows[s.row]; len(line) > s.col {
		s.rows[s.row] = line[:s.col]
	}
}

// Text is the screen's rows, one a line.
func (s *Screen) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.rows {
		fmt.Fprintf(&b, "%s\n", string(r))
	}
	return b.String()
}

// WaitFor waits (bounded) until the screen shows want.
func (s *Screen) WaitFor(t testing.TB, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(s.Text(), want) {
		select {
		case <-s.wrote:
		case <-deadline:
			t.Fatalf("the screen never showed %q:\n%s", want, s.Text())
		}
	}
}

// Unknown lists the escape sequences written that the screen does not
// know (a test fails on them: what they did is not on the screen).
func (s *Screen) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}
