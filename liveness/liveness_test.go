package liveness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

var (
	refused    = &net.OpError{Op: "read", Net: "udp", Err: os.NewSyscallError("recvfrom", syscall.ECONNREFUSED)}
	errSilent  = errors.New("no reply to LOBBY_LIST_ROOMS in 1s")
	errNoFiles = fmt.Errorf("%w: %w", ErrInconclusive, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)})
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"answered", nil, ""},
		{"udp port unreachable", refused, result.DownRefused},
		{"tcp reset on connect", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, result.DownRefused},
		{"wrapped refusal", fmt.Errorf("reach: %w", refused), result.DownRefused},
		{"dial failed at once", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EADDRNOTAVAIL)}, result.DownRefused},
		{"timeout", errSilent, result.DownSilent},
		{"deadline", context.DeadlineExceeded, result.DownSilent},
		{"closed after accept", fmt.Errorf("LIST_ROOMS_REQ: %w", io.EOF), result.DownClosed},
		{"closed mid-frame", fmt.Errorf("LIST_ROOMS_REQ: %w", io.ErrUnexpectedEOF), result.DownClosed},
		{"reset after accept", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, result.DownClosed},
		{"undecodable reply", fmt.Errorf("%w: 16 bytes", ErrGarbled), result.DownGarbled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

// TestObserve plays probe results at 1 s steps and checks the outages.
func TestObserve(t *testing.T) {
	type want struct {
		start, lastUp, end int // seconds
		back               bool
		kind               string
	}
	for _, tc := range []struct {
		name   string
		probes []error
		want   []want
	}{
		{"always up", []error{nil, nil, nil}, nil},
		{"one lost probe is not a hang", []error{nil, errSilent, nil, errSilent, nil}, nil},
		{"hang", []error{nil, nil, errSilent, errSilent, errSilent}, []want{{2, 1, 0, false, result.DownSilent}}},
		{"refused at once", []error{nil, refused}, []want{{1, 0, 0, false, result.DownRefused}}},
		{"hang then killed", []error{nil, errSilent, errSilent, refused}, []want{{1, 0, 0, false, result.DownRefused}}},
		{"down and back twice", []error{nil, refused, nil, nil, errSilent, errSilent, nil},
			[]want{{1, 0, 2, true, result.DownRefused}, {4, 3, 6, true, result.DownSilent}}},
		{"down from the start", []error{refused, refused}, []want{{0, 0, 0, false, result.DownRefused}}},
		// The prober out of descriptors says nothing of the target:
		// neither a hang, nor a refusal, nor up.
		{"inconclusive is not down", []error{nil, errNoFiles, errNoFiles, errNoFiles, nil}, nil},
		{"inconclusive does not end a hang or count in it", []error{nil, errSilent, errNoFiles, errSilent, errNoFiles, nil},
			[]want{{1, 0, 5, true, result.DownSilent}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Watchdog{}
			for i, err := range tc.probes {
				w.Observe(time.Duration(i)*time.Second, err)
			}
			got := w.Outages()
			if len(got) != len(tc.want) {
				t.Fatalf("outages = %+v, want %d", got, len(tc.want))
			}
			for i, o := range got {
				x := tc.want[i]
				if o.StartNS != time.Duration(x.start)*time.Second || o.LastUpNS != time.Duration(x.lastUp)*time.Second ||
					o.EndNS != time.Duration(x.end)*time.Second || o.Back != x.back || o.Kind != x.kind || o.Detail == "" {
					t.Errorf("outage %d = %+v, want %+v", i, o, x)
				}
			}
			if down := len(tc.want) > 0 && !tc.want[len(tc.want)-1].back; w.Down() != down {
				t.Errorf("Down() = %v, want %v", w.Down(), down)
			}
		})
	}
}

// TestRun drives a Watchdog with a scripted probe in a synctest bubble:
// the target hangs from +1 s to +2.5 s; the watchdog sees it within two
// probes and sees it back at the first probe after.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var changes []result.Outage
		w := &Watchdog{Interval: 250 * time.Millisecond, Timeout: 100 * time.Millisecond, Start: start,
			OnChange: func(o result.Outage) { changes = append(changes, o) },
			Probe: func(ctx context.Context) error {
				if at := time.Since(start); at >= time.Second && at < 2500*time.Millisecond {
					<-ctx.Done() // hung: answers nothing until the probe's timeout
					return errSilent
				}
				return nil
			}}
		// Ends between two ticks: a deadline on a tick (4 s) raced the
		// tick in the bubble, so the count was 16 or 17 probes.
		ctx, cancel := context.WithTimeout(context.Background(), 3900*time.Millisecond)
		defer cancel()
		w.Run(ctx)
		got := w.Outages()
		if len(got) != 1 {
			t.Fatalf("outages = %+v, want 1", got)
		}
		o := got[0]
		if o.StartNS != time.Second || o.LastUpNS != 750*time.Millisecond || !o.Back || o.EndNS != 2500*time.Millisecond || o.Kind != result.DownSilent {
			t.Errorf("outage = %+v", o)
		}
		if len(changes) != 2 || changes[0].Back || !changes[1].Back {
			t.Errorf("OnChange calls = %+v, want down then back", changes)
		}
		if made, answered := w.Probes(); made != 16 || answered != 10 {
			t.Errorf("probes = %d made, %d answered; want 16, 10", made, answered)
		}
	})
}

// TestRunLongTimeout: with a probe timeout of 5 s, a target that hangs
// at +0.5 s is down by the end of a run of 8.5 s. Probes overlap: the
// second starts half a timeout after the first (at 3 s), and the two
// confirm the hang at 8 s, each having waited its whole timeout; one at a
// time, the second would have been cut by the end (at 10.75 s) and the
// run would have said nothing.
func TestRunLongTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var changes []result.Outage
		var at []time.Duration
		w := &Watchdog{Interval: 250 * time.Millisecond, Timeout: 5 * time.Second, Start: start,
			OnChange: func(o result.Outage) { changes = append(changes, o); at = append(at, time.Since(start)) },
			Probe: func(ctx context.Context) error {
				if time.Since(start) >= 500*time.Millisecond {
					<-ctx.Done()
					return errSilent
				}
				return nil
			}}
		ctx, cancel := context.WithTimeout(context.Background(), 8400*time.Millisecond)
		defer cancel()
		w.Run(ctx)
		got := w.Outages()
		if len(got) != 1 {
			t.Fatalf("outages = %+v, want 1: a target silent from +0.5 s of an 8.5 s run", got)
		}
		if o := got[0]; o.StartNS != 500*time.Millisecond || o.LastUpNS != 250*time.Millisecond || o.Back || o.Kind != result.DownSilent {
			t.Errorf("outage = %+v, want silent from 0.5 s, last up at 0.25 s, not back", o)
		}
		if len(at) != 1 || at[0] != 8*time.Second {
			t.Errorf("declared at %v, want once, at 8 s (the second probe's timeout)", at)
		}
		if made, answered := w.Probes(); made != 4 || answered != 2 {
			t.Errorf("probes = %d made, %d answered; want 4 observed (2 answered, 2 silent)", made, answered)
		}
	})
}

// TestRunStallWithinTimeout: a target that stops answering for 4 s,
// less than the probe timeout of 5 s, and then answers what it was sent,
// is not down, though two probes overlapped in its stall.
func TestRunStallWithinTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		resume := start.Add(4500 * time.Millisecond)
		w := &Watchdog{Interval: 250 * time.Millisecond, Timeout: 5 * time.Second, Start: start,
			Probe: func(ctx context.Context) error {
				if now := time.Now(); now.After(start.Add(500*time.Millisecond)) && now.Before(resume) {
					select {
					case <-time.After(time.Until(resume)): // answered when it resumes
					case <-ctx.Done():
						return errSilent
					}
				}
				return nil
			}}
		ctx, cancel := context.WithTimeout(context.Background(), 9900*time.Millisecond)
		defer cancel()
		w.Run(ctx)
		if got := w.Outages(); len(got) != 0 {
			t.Errorf("outages = %+v, want none: the stall was shorter than the probes' timeout", got)
		}
		if made, answered := w.Probes(); made == 0 || made != answered {
			t.Errorf("probes = %d made, %d answered; want every one answered", made, answered)
		}
	})
}

func TestMarkDown(t *testing.T) {
	w := &Watchdog{}
	w.Observe(0, nil)
	w.Observe(time.Second, refused)
	w.MarkDown(1200*time.Millisecond, result.DownExited, "", "killed by SIGABRT", []string{"terminate called"})
	w.MarkDown(3*time.Second, result.DownExited, "", "killed by SIGKILL", nil) // still the same outage
	got := w.Outages()
	if len(got) != 1 || got[0].Kind != result.DownExited || got[0].Exit != "killed by SIGKILL" || got[0].StartNS != time.Second {
		t.Fatalf("outages = %+v", got)
	}
	w.Observe(4*time.Second, nil)
	w.MarkDown(5*time.Second, result.DownExited, "", "exited with status 2", nil)
	// A probe sent just before the exit and answered after MarkDown does
	// not end the outage (it would end before it began).
	w.Observe(4900*time.Millisecond, nil)
	if got := w.Outages(); len(got) != 2 || got[1].Back {
		t.Fatalf("a probe sent before the exit ended the outage: %+v", got)
	}
	w.Observe(5100*time.Millisecond, nil)
	if got := w.Outages(); !got[1].Back || got[1].EndNS != 5100*time.Millisecond {
		t.Fatalf("a probe sent after the exit did not end the outage: %+v", got)
	}
	if got := w.Outages(); len(got) != 2 || got[1].StartNS != 5*time.Second || got[1].LastUpNS != 4*time.Second {
		t.Fatalf("outages = %+v", got)
	}
}

// TestSilentAtEnd: a run that ends while the target is silent, two
// probes or more unanswered before they can find it down, says since
// when; one that ends while it answers, after it was found down, or with
// one probe unanswered (it may be lost), does not.
func TestSilentAtEnd(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hangAt, end time.Duration // the target answers nothing from hangAt (0: never; -1: from the start)
		want        Silence       // Probes 0: none
	}{
		{name: "hangs 4 s before the end", hangAt: 6 * time.Second, end: 9900 * time.Millisecond,
			want: Silence{Since: 6 * time.Second, Latest: 8500 * time.Millisecond, LastUp: 5750 * time.Millisecond, Probes: 2}},
		{name: "one probe unanswered", hangAt: 8 * time.Second, end: 9900 * time.Millisecond},
		{name: "answers to the end", end: 9900 * time.Millisecond},
		{name: "found down before the end", hangAt: time.Second, end: 9900 * time.Millisecond},
		{name: "silent from the start", hangAt: -1, end: 4 * time.Second,
			want: Silence{Since: 0, Latest: 2500 * time.Millisecond, LastUp: -1, Probes: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				w := &Watchdog{Interval: 250 * time.Millisecond, Timeout: 5 * time.Second, Start: start,
					Probe: func(ctx context.Context) error {
						if tc.hangAt != 0 && time.Since(start) >= tc.hangAt {
							<-ctx.Done()
							return errSilent
						}
						return nil
					}}
				if _, ok := w.SilentAtEnd(); ok {
					t.Fatal("silent at the end before Run")
				}
				ctx, cancel := context.WithTimeout(context.Background(), tc.end)
				defer cancel()
				w.Run(ctx)
				got, ok := w.SilentAtEnd()
				if ok != (tc.want.Probes > 0) || got != tc.want {
					t.Errorf("SilentAtEnd = %+v, %v; want %+v (outages %+v)", got, ok, tc.want, w.Outages())
				}
			})
		})
	}
}
