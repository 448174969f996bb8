package engine

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressLines(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var buf syncBuffer
		n := 0
		stop, _ := startProgress(ProgressLines, &buf, 10*time.Second, time.Second, func() ProgressSample {
			n++
			return ProgressSample{Elapsed: time.Duration(n) * time.Second, Total: 10 * time.Second, Active: 7, Started: 9, Finished: 2, Rate: 1234.4, Errors: 1, Dropped: 3}
		})
		time.Sleep(3500 * time.Millisecond)
		stop()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines in 3.5s at one a second:\n%s", len(lines), buf.String())
		}
		want := "lobbybench: 3s/10s clients 7 sessions 9 started 2 done 1234 req/s errors 1 dropped 3 violations 0"
		if lines[2] != want {
			t.Errorf("line %q\nwant %q", lines[2], want)
		}
	})
}

func TestProgressNone(t *testing.T) {
	var buf syncBuffer
	stop, _ := startProgress(ProgressNone, &buf, time.Second, time.Millisecond, func() ProgressSample { return ProgressSample{} })
	time.Sleep(10 * time.Millisecond)
	stop()
	if buf.String() != "" {
		t.Errorf("quiet progress wrote %q", buf.String())
	}
}

// TestProgressBar draws the mpb bar into a buffer (not a terminal: it
// renders when it completes) and checks the final state is shown.
func TestProgressBar(t *testing.T) {
	var buf syncBuffer
	stop, note := startProgress(ProgressBar, &buf, time.Second, 0, func() ProgressSample {
		return ProgressSample{Elapsed: time.Second, Total: time.Second, Active: 4, Started: 5, Finished: 1, Rate: 10}
	})
	note("lobbybench: TARGET DOWN at +0.1 s")
	time.Sleep(50 * time.Millisecond)
	stop()
	out := buf.String()
	if !strings.Contains(out, "4 live") || !strings.Contains(out, "1/5 done") {
		t.Errorf("bar output %q", out)
	}
	// The note is printed above the bar, not erased by its redraw.
	if i, j := strings.LastIndex(out, "TARGET DOWN at +0.1 s\n"), strings.LastIndex(out, "4 live"); i < 0 || i > j {
		t.Errorf("note not above the bar's final state: %q", out)
	}
}

// TestProgressBarStopsBeforeTotal stops the bar while the last sample is
// short of the total (an interrupt, or the end sampled a moment early):
// stop must still return, with the final state drawn.
func TestProgressBarStopsBeforeTotal(t *testing.T) {
	var buf syncBuffer
	stop, _ := startProgress(ProgressBar, &buf, 10*time.Second, 0, func() ProgressSample {
		return ProgressSample{Elapsed: 3 * time.Second, Total: 10 * time.Second, Active: 2, Started: 6, Finished: 4}
	})
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("stop did not return: the bar never completed")
	}
	if out := buf.String(); !strings.Contains(out, "3s/10s") || !strings.Contains(out, "4/6 done") {
		t.Errorf("bar output %q", out)
	}
}

// notesSink is a BarNotes: the bar is drawn on term, and above records the
// writers startProgress hands it.
type notesSink struct {
	term  syncBuffer
	mu    sync.Mutex
	above []io.Writer
}

func (n *notesSink) Write(p []byte) (int, error) {
	return 0, errors.New("the bar must be drawn on Terminal()")
}
func (n *notesSink) Terminal() io.Writer { return &n.term }
func (n *notesSink) SetAbove(w io.Writer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.above = append(n.above, w)
}

// TestProgressBarNotes: a BarNotes progress writer gets, while the bar is
// drawn, a writer whose lines land above the bar (before its final
// redraw), and nil once the bar is gone; the bar itself is drawn on its
// Terminal.
func TestProgressBarNotes(t *testing.T) {
	var n notesSink
	stop, _ := startProgress(ProgressBar, &n, time.Second, 0, func() ProgressSample {
		return ProgressSample{Elapsed: time.Second, Total: time.Second, Active: 4, Started: 5, Finished: 1}
	})
	n.mu.Lock()
	above := n.above
	n.mu.Unlock()
	if len(above) != 1 || above[0] == nil {
		t.Fatalf("SetAbove calls while the bar runs: %v, want one writer", above)
	}
	const note = "lobbybench: stopping: no new session starts; requests in flight get up to 3s (--grace) to finish, then the results are written.\n"
	if _, err := io.WriteString(above[0], note); err != nil {
		t.Fatal(err)
	}
	stop()
	if len(n.above) != 2 || n.above[1] != nil {
		t.Errorf("SetAbove calls %v, want the writer then nil", n.above)
	}
	out := n.term.String()
	at, bar := strings.Index(out, note), strings.LastIndex(out, "1/5 done")
	if at < 0 || bar < at {
		t.Errorf("the note is not whole above the final bar:\n%q", out)
	}
	if _, err := io.WriteString(above[0], "late\n"); err == nil {
		t.Error("a note after the bar ended did not fail: it would be lost")
	}
}

// The status line ends with the harness's figures once they are known:
// the send lag p99 and the process's CPU.
func TestProgressLineHarness(t *testing.T) {
	base := ProgressSample{Elapsed: 3 * time.Second, Total: 10 * time.Second, Active: 7, Started: 9, Finished: 2, Rate: 1234.4}
	const head = "3s/10s clients 7 sessions 9 started 2 done 1234 req/s errors 0 dropped 0 violations 0"
	for _, tc := range []struct {
		name string
		lag  time.Duration
		cpu  float64
		want string
	}{
		{"not known yet", 0, 0, head},
		{"both", 2160 * time.Microsecond, 0.853, head + " send lag p99 2.16ms process cpu 85%"},
		{"lag only", 408 * time.Microsecond, 0, head + " send lag p99 408µs"},
		{"cpu only", 0, 1.5, head + " process cpu 150%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.SendLagP99, s.CPU = tc.lag, tc.cpu
			if got := s.String(); got != tc.want {
				t.Errorf("line %q\nwant %q", got, tc.want)
			}
		})
	}
}

// sendLagP99 is the worst step's send lag p99 (message types, which
// re-record the same sends, left out), 0 when nothing was sent.
func TestSendLagP99(t *testing.T) {
	hist := func(us ...int64) *hdrhistogram.Histogram {
		h := result.NewLatencyHistogram()
		for _, v := range us {
			_ = h.RecordValue(v)
		}
		return h
	}
	fast, slow := make([]int64, 99), []int64{5000}
	for i := range fast {
		fast[i] = 100
	}
	for _, tc := range []struct {
		name string
		keys []metrics.LiveKey
		want time.Duration
	}{
		{"none", nil, 0},
		{"nothing sent", []metrics.LiveKey{{Kind: metrics.KindStep, SendLag: hist()}}, 0},
		{"the worst step's", []metrics.LiveKey{{Kind: metrics.KindStep, SendLag: hist(slow...)}, {Kind: metrics.KindStep, SendLag: hist(fast...)}}, 5000 * time.Microsecond},
		{"p99 within a step", []metrics.LiveKey{{Kind: metrics.KindStep, SendLag: hist(append(fast, slow...)...)}}, 100 * time.Microsecond},
		{"message types left out", []metrics.LiveKey{{Kind: metrics.KindStep, SendLag: hist(100)}, {Kind: metrics.KindMessage, SendLag: hist(9000)}}, 100 * time.Microsecond},
		{"p99 of two", []metrics.LiveKey{{Kind: metrics.KindStep, SendLag: hist(100, 5000)}}, 5000 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sendLagP99(tc.keys); got.Round(10*time.Microsecond) != tc.want {
				t.Errorf("p99 %v, want %v", got, tc.want)
			}
		})
	}
}
