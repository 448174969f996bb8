package simclient

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestReportProbe checks that a probe's finding reaches the collector with
// its step, the others' latency before and during the limit, and the cut
// note.
func TestReportProbe(t *testing.T) {
	c := metrics.NewCollector(time.Now())
	sh, err := NewShared(testPlan(t, "  - steps: [list_rooms, {rate_probe: {from: 10/s, to: 100/s, over: 2s}}]\n"), netip.AddrPort{}, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	start := time.Now()
	p := NewProbe(scenario.RateProbeSpec{From: 10, To: 100, Over: 2 * time.Second, Loss: 0.05}, start)
	for i := range 20 {
		o := Answered
		if i >= 10 {
			o = Lost // half lost in window 0: the limit
		}
		p.Outcome(time.Millisecond, o)
	}
	sh.Observe(1, start, 2*time.Millisecond, true) // someone else, during the probe
	sh.ReportProbe(p, "probe", "127.0.0.1:1", start, false)
	sh.ReportProbe(p, "probe", "127.0.0.1:1", start, true)
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(run.RateLimits) != 2 {
		t.Fatalf("%d findings, want 2", len(run.RateLimits))
	}
	f := run.RateLimits[0]
	if f.Source != "probe" || f.ObservedLimitPerSec != 10 || f.OtherSourcesP99AfterUS == 0 || strings.Contains(f.Note, "cut short") {
		t.Errorf("finding %+v", f)
	}
	if !strings.HasSuffix(run.RateLimits[1].Note, " (cut short by the end of the run)") {
		t.Errorf("cut finding's note %q", run.RateLimits[1].Note)
	}
}

// fakeProbeIO is a server that answers every request after delay and
// the ones listed in dropped never; Send fails at failAt (0: never).
type fakeProbeIO struct {
	p       *Probe
	delay   time.Duration
	dropped map[int]bool
	failAt  int
	sent    []time.Time // send time of each request
	due     []time.Time
	head    int // the oldest awaited
}

func (f *fakeProbeIO) Oldest() (time.Time, bool) {
	for f.head < len(f.sent) && f.sent[f.head].IsZero() {
		f.head++ // answered or lost already
	}
	if f.head < len(f.sent) {
		return f.sent[f.head], true
	}
	return time.Time{}, false
}

// Recv sleeps to deadline, taking every answer due by then.
func (f *fakeProbeIO) Recv(deadline time.Time) error {
	time.Sleep(time.Until(deadline))
	now := time.Now()
	for k, s := range f.sent {
		if !s.IsZero() && !f.dropped[k] && !s.Add(f.delay).After(now) {
			f.p.Outcome(f.due[k].Sub(f.p.Start), Answered)
			f.sent[k] = time.Time{}
		}
	}
	return nil
}

func (f *fakeProbeIO) Expire(now time.Time) {
	for k, s := range f.sent {
		if !s.IsZero() && now.Sub(s) >= time.Second {
			f.p.Outcome(f.due[k].Sub(f.p.Start), Lost)
			f.sent[k] = time.Time{}
		}
	}
}

func (f *fakeProbeIO) Send(due time.Time) error {
	if f.failAt > 0 && len(f.sent)+1 == f.failAt {
		return errors.New("socket closed")
	}
	f.sent, f.due = append(f.sent, time.Now()), append(f.due, due)
	return nil
}

// TestProbeRun: Run sends the schedule's requests, each on time, and
// every one ends answered or lost: answers taken between sends, the
// dropped lost after the timeout (the drain waits for them), a Send error
// returned at once.
func TestProbeRun(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		dropped              map[int]bool
		failAt               int
		answered, lost, sent int64
		wantErr              bool
	}{
		{name: "all answered", answered: 20, sent: 20},
		{name: "two dropped", dropped: map[int]bool{3: true, 19: true}, answered: 18, lost: 2, sent: 20},
		{name: "send fails", failAt: 6, answered: 5, sent: 5, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewProbe(scenario.RateProbeSpec{From: 10, To: 10, Over: 2 * time.Second}, time.Now())
				f := &fakeProbeIO{p: p, delay: 5 * time.Millisecond, dropped: tt.dropped, failAt: tt.failAt}
				err := p.Run(context.Background(), f, p.Total(), time.Second)
				if (err != nil) != tt.wantErr {
					t.Fatalf("Run: %v, want an error: %v", err, tt.wantErr)
				}
				if p.Answered != tt.answered || p.Lost != tt.lost || p.Sent != tt.sent {
					t.Errorf("answered %d, lost %d of %d; want %d, %d of %d", p.Answered, p.Lost, p.Sent, tt.answered, tt.lost, tt.sent)
				}
				for k, d := range f.due {
					if d != p.Start.Add(p.At(k)) {
						t.Errorf("request %d due %v, want the schedule's %v", k, d.Sub(p.Start), p.At(k))
					}
				}
			})
		})
	}
}

// TestProbeRunCancelled: a run whose context ends stops sending and
// returns nil, what it measured kept.
func TestProbeRunCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProbe(scenario.RateProbeSpec{From: 10, To: 10, Over: 2 * time.Second}, time.Now())
		ctx, cancel := context.WithTimeout(context.Background(), 550*time.Millisecond)
		defer cancel()
		f := &fakeProbeIO{p: p, delay: 5 * time.Millisecond}
		if err := p.Run(ctx, f, p.Total(), time.Second); err != nil {
			t.Fatal(err)
		}
		if len(f.sent) != 6 || p.Answered != 6 {
			t.Errorf("sent %d, answered %d before the end at 550ms; want 6 and 6", len(f.sent), p.Answered)
		}
	})
}

// TestProbeWindowsAsReached: a probe holds a window per second its
// requests reached, not one per second of its over: a slow ramp over a
// long over (which the loader's bound on the total allows) holds little.
func TestProbeWindowsAsReached(t *testing.T) {
	p := NewProbe(scenario.RateProbeSpec{From: 0, To: 1, Over: 1000 * time.Hour}, time.Now())
	p.Outcome(2500*time.Millisecond, Answered)
	if len(p.win) != 3 || cap(p.win) > 64 {
		t.Fatalf("%d windows held, room for %d; want 3, room for 64 at most", len(p.win), cap(p.win))
	}
	if limited, _, _, _ := p.Limit(); limited {
		t.Fatal("limited on one answer")
	}
}
