package reports

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// conformBarWidth is the bar's width in columns, brackets included.
const conformBarWidth = 24

// ConformProgress draws a conformance suite's progress on a terminal: a
// bar of the cases done of the total, the section of the case done last
// beside it, the whole line within TermWidth. The caller decides it is on
// a terminal (as `run` decides its own bar); it goes to stderr, apart
// from every report.
type ConformProgress struct {
	p   *mpb.Progress
	bar *mpb.Bar

	mu          sync.Mutex
	done, total int
	section     string
}

// NewConformProgress starts the bar on w for a suite of total cases.
func NewConformProgress(w io.Writer, total int) *ConformProgress {
	c := &ConformProgress{total: total}
	// Auto refresh and redraw in place even when w is not detected as a
	// terminal (a wrapper of stderr): the caller chose the bar for a
	// terminal already.
	c.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(TermWidth), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithAutoRefresh(), mpb.ForceTTY())
	c.bar = c.p.AddBar(int64(max(total, 1)), mpb.BarWidth(conformBarWidth), mpb.BarFillerTrim(),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return c.line() })))
	return c
}

// Case is conformance.Config.Progress: done cases of total, the last one
// done of section.
func (c *ConformProgress) Case(done, total int, section string) {
	c.mu.Lock()
	c.done, c.total, c.section = done, total, section
	c.mu.Unlock()
	c.bar.SetCurrent(int64(done))
}

// Above is where lines go to be printed above the bar while it is drawn
// (a write under it would be erased by the next redraw); writes fail once
// the bar is stopped.
func (c *ConformProgress) Above() io.Writer { return c.p }

// Stop leaves the bar where the suite stopped (full only when every case
// was done) and waits for its last frame.
func (c *ConformProgress) Stop() {
	if !c.bar.Completed() {
		c.bar.Abort(false)
	}
	c.p.Wait()
}

// line is what precedes the bar, the whole line TermWidth columns:
// "conform  12/87 " and the section of the case done last, cut or padded
// to the columns left.
func (c *ConformProgress) line() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	count := fmt.Sprintf("conform %*d/%d ", len(strconv.Itoa(c.total)), c.done, c.total)
	room := TermWidth - displayWidth(count) - conformBarWidth - 1
	section := cutTo(c.section, room)
	return count + section + strings.Repeat(" ", max(room-displayWidth(section), 0)+1)
}
