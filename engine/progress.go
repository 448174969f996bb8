package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/metrics"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// ProgressMode is how a run shows its progress.
type ProgressMode int

// Progress modes.
const (
	// ProgressNone prints nothing (--quiet).
	ProgressNone ProgressMode = iota
	// ProgressLines prints one line every LineInterval (non-TTY, CI).
	ProgressLines
	// ProgressBar draws a live mpb bar (a terminal).
	ProgressBar
	// ProgressJSON writes each sample as one JSON object per line, every
	// LineInterval and once at the end: what a `run --workers` worker
	// sends its parent for the combined display.
	ProgressJSON
)

// DefaultLineInterval is how often ProgressLines prints.
const DefaultLineInterval = 5 * time.Second

// ProgressSample is what the progress display shows.
type ProgressSample struct {
	Elapsed, Total    time.Duration
	Active            int64 // live clients
	Started, Finished int64 // sessions
	Rate              float64
	Errors, Dropped   int64
	Violations        int64
	// FailedStarts are sessions that could not open their socket (also
	// counted in Errors); shown only when there are some.
	FailedStarts int64
	// BackingOff are closed-model clients pausing after a session that
	// could not start or failed at once (Stats.BackingOff); shown only
	// when there are some.
	BackingOff int64 `json:",omitempty"`
	// SendLagP99 is the worst step's send lag p99 so far (sendLagP99): how late
	// the harness sent after the intended times; CPU the process's CPU
	// over the last second, in cores (the embedded server's included when
	// it runs in the process). Both sampled once a second; shown only
	// once known (after the first second; CPU not off Unix).
	SendLagP99 time.Duration `json:",omitempty"`
	CPU        float64       `json:",omitempty"`
	// Metrics is a --workers worker's cumulative live figures for its
	// parent's merged metrics (Config.WorkerMetrics); nil in other lines.
	Metrics *metrics.LiveState `json:",omitempty"`
	// Ready is a --workers worker's one line before its load: it is
	// ready and waits for its start instant (Workers.Gate, AwaitStart).
	Ready bool `json:",omitempty"`
}

// String renders the sample as one status line.
func (s ProgressSample) String() string {
	return fmt.Sprintf("%s/%s clients %d sessions %d started %d done %.0f req/s errors %d dropped %d violations %d",
		s.Elapsed.Truncate(time.Second), s.Total, s.Active, s.Started, s.Finished, s.Rate, s.Errors, s.Dropped, s.Violations) + s.failedStarts() + s.backingOff(false) + s.harness()
}

// harness is the suffix of the harness's own figures (send lag p99,
// process CPU), each only once known.
func (s ProgressSample) harness() string {
	var b strings.Builder
	if s.SendLagP99 > 0 {
		fmt.Fprintf(&b, " send lag p99 %v", s.SendLagP99)
	}
	if s.CPU > 0 {
		fmt.Fprintf(&b, " process cpu %.0f%%", 100*s.CPU)
	}
	return b.String()
}

// sendLagP99 is the worst step's send lag p99 in keys (message types
// re-record the same sends: left out), as result.Run.WorstSendLag takes
// it from a result; 0 when nothing was sent.
func sendLagP99(keys []metrics.LiveKey) time.Duration {
	var worst int64
	for _, k := range keys {
		if k.Kind == metrics.KindStep && k.SendLag != nil && k.SendLag.TotalCount() > 0 {
			worst = max(worst, k.SendLag.ValueAtQuantile(99))
		}
	}
	return time.Duration(worst) * time.Microsecond
}

// backingOff is the suffix naming the clients backing off, empty when
// none are; compact for the bar.
func (s ProgressSample) backingOff(compact bool) string {
	switch {
	case s.BackingOff == 0:
		return ""
	case compact:
		return fmt.Sprintf(" backoff %d", s.BackingOff)
	}
	return fmt.Sprintf(" backing off %d (sessions failing at once: %v doubling to %v before the next)", s.BackingOff, failBackoff, maxFailBackoff)
}

// failedStarts is the " failed starts N" suffix of a status line, empty
// when there are none.
func (s ProgressSample) failedStarts() string {
	if s.FailedStarts == 0 {
		return ""
	}
	return fmt.Sprintf(" failed starts %d", s.FailedStarts)
}

// BarNotes is a progress writer that wants notes printed above the live
// bar, not under it where the next redraw erases them (run's Ctrl-C
// message): while the bar is drawn it is given the bar's container as the
// writer of such lines, and nil once the bar is gone. The bar is drawn on
// Terminal, the writer it wraps (mpb sizes the bar from an *os.File).
type BarNotes interface {
	Terminal() io.Writer
	SetAbove(io.Writer)
}

// startProgress shows samples from sample on w in mode until the returned
// stop function is called (which prints a final state and waits for the
// display to finish). sample is called from one goroutine. note prints
// a line at once, above the bar (mpb keeps it there: a plain write would
// be erased by the next redraw) or between the lines; in ProgressJSON
// mode it writes to w as is, which a caller wanting JSON only avoids.
func startProgress(mode ProgressMode, w io.Writer, total time.Duration, every time.Duration, sample func() ProgressSample) (stop func(), note func(string)) {
	if mode == ProgressNone || w == nil {
		return func() {}, func(string) {}
	}
	if mode == ProgressBar {
		return startBar(w, total, sample)
	}
	return startLines(mode, w, every, sample)
}

// startBar is startProgress's bar (ProgressBar): mpb redraws it in place.
func startBar(w io.Writer, total time.Duration, sample func() ProgressSample) (stop func(), note func(string)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	// Auto refresh and redraw in place even when w is not detected as
	// a terminal (a wrapper of stderr): the caller chose the bar for a
	// terminal already.
	notes, _ := w.(BarNotes)
	if notes != nil {
		w = notes.Terminal()
	}
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithAutoRefresh(), mpb.ForceTTY())
	var mu sync.Mutex
	last := ProgressSample{Total: total}
	// Built with total 0 and given its total after: a bar built with
	// a total > 0 ignores SetTotal, so a stop before the last sample
	// reached the total (any interrupt, and most ends) left the bar
	// incomplete and p.Wait blocked forever.
	bar := p.AddBar(0,
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Sprintf("%s/%s", last.Elapsed.Truncate(time.Second), total)
		}, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			mu.Lock()
			defer mu.Unlock()
			// Compact: the whole line must fit an 80-column terminal,
			// or each redraw wraps and moves up one row too few, and
			// the bar fills the scrollback (the long form is in
			// ProgressLines).
			return fmt.Sprintf("%d live %d/%d done %.0f/s err %d drop %d viol %d",
				last.Active, last.Finished, last.Started, last.Rate, last.Errors, last.Dropped, last.Violations) + last.failedStarts() + last.backingOff(true)
		})),
	)
	bar.SetTotal(max(total.Milliseconds(), 1), false)
	if notes != nil {
		notes.SetAbove(p)
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			s := sample()
			mu.Lock()
			last = s
			mu.Unlock()
			bar.SetCurrent(min(s.Elapsed.Milliseconds(), max(total.Milliseconds(), 1)))
			select {
			case <-ctx.Done():
				// Abort, not SetTotal(-1, true): that sets the total
				// to the current value, so an interrupted run's bar
				// jumped to full. Aborted, it stays where the run
				// stopped (full only when the run reached its end).
				bar.Abort(false)
				return
			case <-t.C:
			}
		}
	}()
	return func() {
			cancel()
			wg.Wait()
			if notes != nil {
				notes.SetAbove(nil)
			}
			p.Wait()
		}, func(line string) {
			if _, err := fmt.Fprintln(p, line); err != nil {
				fmt.Fprintln(w, line) // the bar is done
			}
		}
}

// startLines is startProgress's lines (ProgressLines, ProgressJSON).
func startLines(mode ProgressMode, w io.Writer, every time.Duration, sample func() ProgressSample) (stop func(), note func(string)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	// Lines for people every LineInterval; JSON for a --workers
	// parent, also once at the stop so it gets the final counts.
	var mu sync.Mutex // the lines and the notes share w
	write, final := func(s ProgressSample) { mu.Lock(); defer mu.Unlock(); fmt.Fprintf(w, "lobbybench: %s\n", s) }, false
	if mode == ProgressJSON {
		enc := json.NewEncoder(w)
		write, final = func(s ProgressSample) { mu.Lock(); defer mu.Unlock(); _ = enc.Encode(s) }, true
	}
	if every <= 0 {
		every = DefaultLineInterval
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if final {
					write(sample())
				}
				return
			case <-t.C:
				write(sample())
			}
		}
	}()
	return func() { cancel(); wg.Wait() }, func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, line)
	}
}
