package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// screen is a terminal just good enough for mpb's redraws: it keeps the
// text on each row and follows carriage return, newline (as a tty's
// output processing makes it, to column 0 of the next row), cursor up
// (ESC[nA), erase below (ESC[J) and erase line right (ESC[K). Every
// write is signalled on wrote.
type screen struct {
	mu       sync.Mutex
	rows     [][]rune
	row, col int
	unknown  []string
	wrote    chan struct{}
}

func newScreen() *screen { return &screen{rows: [][]rune{nil}, wrote: make(chan struct{}, 64)} }

func (s *screen) Write(p []byte) (int, error) {
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
func (s *screen) cut() {
	if line := s.rows[s.row]; len(line) > s.col {
		s.rows[s.row] = line[:s.col]
	}
}

// text is the screen's rows, one a line.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.rows {
		fmt.Fprintf(&b, "%s\n", string(r))
	}
	return b.String()
}

// waitFor waits (bounded) until the screen shows want.
func (s *screen) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(s.text(), want) {
		select {
		case <-s.wrote:
		case <-deadline:
			t.Fatalf("the screen never showed %q:\n%s", want, s.text())
		}
	}
}

// TestStopNoteAboveBarStartsAtColumnZero: Ctrl-C under a live bar. The
// terminal echoes "^C" at the cursor (two columns into the row under the
// bar); the bar's next redraw moves up and clears from that column. The
// stop note must still start at column 0 of its own row, not after what is
// left of the bar ("5slobbybench: stopping").
func TestStopNoteAboveBarStartsAtColumnZero(t *testing.T) {
	scr := newScreen()
	tick := make(chan any)
	p := mpb.New(mpb.WithOutput(scr), mpb.WithWidth(32), mpb.WithManualRefresh(tick))
	defer p.Shutdown()
	bar := p.AddBar(100, mpb.PrependDecorators(decor.Name("5s/10s")), mpb.AppendDecorators(decor.Name("4 live")))
	bar.SetCurrent(50)
	tick <- time.Now()
	scr.waitFor(t, "4 live")
	scr.Write([]byte("^C")) // the tty echoes the interrupt where the cursor is

	var errb bytes.Buffer
	e := &env{stderr: &errb, notes: &barNotes{stderr: &errb}}
	e.notes.SetAbove(p)
	const note = "lobbybench: stopping: no new session starts. Ctrl-C again to stop at once."
	e.say("\n" + note + "\n")
	tick <- time.Now()
	scr.waitFor(t, "stopping")

	if errb.Len() > 0 {
		t.Errorf("the note went to stderr, not above the bar: %q", errb.String())
	}
	if len(scr.unknown) > 0 {
		t.Errorf("escape sequences the test's terminal does not know: %v", scr.unknown)
	}
	out := scr.text()
	rows := strings.Split(out, "\n")
	if len(rows) < 2 || rows[0] != note || !strings.HasPrefix(rows[1], "5s/10s") {
		t.Errorf("want the note whole on the first row, the bar under it; the screen:\n%s", out)
	}
}
