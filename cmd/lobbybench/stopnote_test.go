package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/termtest"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// TestStopNoteAboveBarStartsAtColumnZero: Ctrl-C under a live bar. The
// terminal echoes "^C" at the cursor (two columns into the row under the
// bar); the bar's next redraw moves up and clears from that column. The
// stop note must still start at column 0 of its own row, not after what is
// left of the bar ("5slobbybench: stopping").
func TestStopNoteAboveBarStartsAtColumnZero(t *testing.T) {
	scr := termtest.New()
	tick := make(chan any)
	p := mpb.New(mpb.WithOutput(scr), mpb.WithWidth(32), mpb.WithManualRefresh(tick), mpb.ForceTTY())
	defer p.Shutdown()
	bar := p.AddBar(100, mpb.PrependDecorators(decor.Name("5s/10s")), mpb.AppendDecorators(decor.Name("4 live")))
	bar.SetCurrent(50)
	tick <- time.Now()
	scr.WaitFor(t, "4 live")
	scr.Write([]byte("^C")) // the tty echoes the interrupt where the cursor is

	var errb bytes.Buffer
	e := &env{stderr: &errb, notes: &barNotes{stderr: &errb}}
	e.notes.SetAbove(p)
	const note = "lobbybench: stopping: no new session starts. Ctrl-C again to stop at once."
	e.say("\n" + note + "\n")
	tick <- time.Now()
	scr.WaitFor(t, "stopping")

	if errb.Len() > 0 {
		t.Errorf("the note went to stderr, not above the bar: %q", errb.String())
	}
	if u := scr.Unknown(); len(u) > 0 {
		t.Errorf("escape sequences the test's terminal does not know: %v", u)
	}
	out := scr.Text()
	rows := strings.Split(out, "\n")
	if len(rows) < 2 || rows[0] != note || !strings.HasPrefix(rows[1], "5s/10s") {
		t.Errorf("want the note whole on the first row, the bar under it; the screen:\n%s", out)
	}
}
