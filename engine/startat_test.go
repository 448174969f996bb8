package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// intendedOffsets runs plan as shard sh with Options.Start at (zero:
// none), starting Execute after delay, and returns the intended times of
// the arrivals it started (against the execution's start) and those it
// dropped, with the reasons.
func intendedOffsets(t *testing.T, plan *scenario.Plan, sh Shard, at time.Time, delay time.Duration) (started, dropped []time.Duration, reasons map[DropReason]int, x *Execution) {
	t.Helper()
	time.Sleep(delay)
	var r recorder
	x, _, err := Execute(context.Background(), Options{Plan: plan, Shard: sh, Start: at, New: r.factory(time.Millisecond), OnDropped: r.onDropped}, nil)
	if err != nil {
		t.Error(err) // not Fatal: shards run on goroutines of their own
		return nil, nil, nil, &Execution{}
	}
	for _, s := range r.starts {
		started = append(started, s.Intended.Sub(x.StartTime()))
	}
	for _, s := range r.dropped {
		dropped = append(dropped, s.Intended.Sub(x.StartTime()))
	}
	return started, dropped, r.reasons, x
}

// TestStartAtKeepsTheSchedule: shards given one start instant, each
// reaching Execute at a different moment before it, start exactly the
// arrivals of an unsharded run started at that instant, at the same
// times: the schedule's zero is the instant, not each shard's own start.
func TestStartAtKeepsTheSchedule(t *testing.T) {
	plan := openPlan(10, []scenario.Stage{{Target: 40, For: 2 * time.Second}}, 3*time.Second, 1000)
	var whole []time.Duration
	synctest(t, func(t *testing.T) {
		whole, _, _, _ = intendedOffsets(t, plan, Shard{}, time.Time{}, 0)
	})
	if len(whole) < 50 {
		t.Fatalf("only %d arrivals in the unsharded run", len(whole))
	}
	synctest(t, func(t *testing.T) {
		at := time.Now().Add(5 * time.Second)
		var mu sync.Mutex
		var all []time.Duration
		var wg sync.WaitGroup
		for i, delay := range []time.Duration{0, 1200 * time.Millisecond, 4 * time.Second, 4900 * time.Millisecond} {
			wg.Go(func() {
				// The shard waits for the instant, as Run does.
				time.Sleep(delay)
				time.Sleep(time.Until(at))
				started, dropped, _, x := intendedOffsets(t, plan, Shard{Index: i, Count: 4}, at, 0)
				if !x.StartTime().Equal(at) || len(dropped) > 0 || x.Stats.LateStart.Load() != 0 {
					t.Errorf("shard %d: start %v (want %v), %d dropped, late %v", i, x.StartTime(), at, len(dropped), time.Duration(x.Stats.LateStart.Load()))
				}
				mu.Lock()
				all = append(all, started...)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(all)
		if !slices.Equal(all, whole) {
			t.Errorf("the shards' arrivals (%d) are not the unsharded schedule's (%d)", len(all), len(whole))
		}
	})
}

// TestStartAtLateShard: a shard that reaches its start instant 1.5 s
// late counts every arrival due before it joined as a late_start drop,
// apart from the generator's own lateness, and plays the rest at their
// own due times: nothing is shifted. The arrivals it started and missed
// are, together, exactly its share of the schedule.
func TestStartAtLateShard(t *testing.T) {
	plan := openPlan(20, nil, 3*time.Second, 1000)
	sh := Shard{Index: 1, Count: 2}
	var share []time.Duration
	synctest(t, func(t *testing.T) {
		share, _, _, _ = intendedOffsets(t, plan, sh, time.Time{}, 0)
	})
	synctest(t, func(t *testing.T) {
		at := time.Now()
		late := 1500 * time.Millisecond
		var gotLate time.Duration
		var gotMissed int64
		time.Sleep(late)
		var r recorder
		x, _, err := Execute(context.Background(), Options{Plan: plan, Shard: sh, Start: at, New: r.factory(time.Millisecond), OnDropped: r.onDropped,
			OnLateStart: func(l time.Duration, n int64) { gotLate, gotMissed = l, n }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var started, missed []time.Duration
		for _, s := range r.starts {
			started = append(started, s.Intended.Sub(at))
		}
		for _, s := range r.dropped {
			missed = append(missed, s.Intended.Sub(at))
		}
		for _, d := range missed {
			if d >= late {
				t.Errorf("an arrival due at +%v, after the shard joined, was counted missed", d)
			}
		}
		for _, d := range started {
			if d < late {
				t.Errorf("an arrival due at +%v, before the shard joined at +%v, was started", d, late)
			}
		}
		if got := append(missed, started...); !slices.Equal(got, share) {
			t.Errorf("missed %v + started %v, want the shard's share %v (no arrival shifted)", missed, started, share)
		}
		st := x.Stats.Snapshot()
		if len(missed) == 0 || st.DroppedLateStart != int64(len(missed)) || r.reasons[DropLateStart] != len(missed) || st.DroppedLate != 0 || st.DroppedNoSlot != 0 {
			t.Errorf("late_start %d (reasons %v), late %d, no slot %d; want %d late_start and nothing else", st.DroppedLateStart, r.reasons, st.DroppedLate, st.DroppedNoSlot, len(missed))
		}
		if st.LateStart != late || gotLate != late || gotMissed != int64(len(missed)) {
			t.Errorf("late start %v, told %v and %d missed; want %v and %d", st.LateStart, gotLate, gotMissed, late, len(missed))
		}
	})
}

// TestStartAtWithinLatenessIsOnTime: a shard less than MaxLateness after
// its instant is on time: its first arrivals start a little late, as a
// generator's do, and none is counted missed.
func TestStartAtWithinLatenessIsOnTime(t *testing.T) {
	synctest(t, func(t *testing.T) {
		plan := openPlan(20, nil, 2*time.Second, 1000)
		at := time.Now()
		time.Sleep(300 * time.Millisecond)
		_, dropped, _, x := intendedOffsets(t, plan, Shard{}, at, 0)
		if len(dropped) > 0 || x.Stats.LateStart.Load() != 0 {
			t.Errorf("%d dropped, late start %v; want none", len(dropped), time.Duration(x.Stats.LateStart.Load()))
		}
	})
}

// TestStartAtClosedLate: a closed-model shard joining late brings up the
// clients the profile wants then, ends at the shared end, and says how
// late it was (no arrival to miss).
func TestStartAtClosedLate(t *testing.T) {
	synctest(t, func(t *testing.T) {
		plan := closedPlan(4, nil, 3*time.Second, 10)
		at := time.Now()
		time.Sleep(2 * time.Second)
		var told time.Duration
		var r recorder
		x, _, err := Execute(context.Background(), Options{Plan: plan, Start: at, New: r.factory(100 * time.Millisecond), OnLateStart: func(l time.Duration, _ int64) { told = l }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if told != 2*time.Second || x.Stats.DroppedLateStart.Load() != 0 {
			t.Errorf("told %v late, %d missed; want 2s and none", told, x.Stats.DroppedLateStart.Load())
		}
		for _, s := range r.starts {
			if s.Intended.Before(at.Add(2*time.Second)) || !s.Intended.Before(at.Add(3*time.Second)) {
				t.Errorf("a session intended at +%v, outside the part of the run left (+2s to +3s)", s.Intended.Sub(at))
			}
		}
	})
}

// TestWaitStart: the wait for the start instant ends at it, or at once
// when ctx ends, with a *StartWaitError.
func TestWaitStart(t *testing.T) {
	synctest(t, func(t *testing.T) {
		at := time.Now().Add(3 * time.Second)
		waited, err := waitStart(context.Background(), at)
		if err != nil || waited != 3*time.Second || !time.Now().Equal(at) {
			t.Errorf("waited %v (%v), now +%v; want 3s", waited, err, time.Until(at))
		}
		if waited, err := waitStart(context.Background(), at.Add(-time.Second)); err != nil || waited != 0 {
			t.Errorf("a past instant: waited %v (%v), want 0", waited, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		t0 := time.Now()
		_, err = waitStart(ctx, t0.Add(time.Minute))
		var we *StartWaitError
		if !errors.As(err, &we) || time.Since(t0) != time.Second {
			t.Errorf("cancelled wait: %v after %v, want a StartWaitError after 1s", err, time.Since(t0))
		}
	})
}

// chanWriter hands each write to a channel: the progress lines of a run
// on another goroutine, as they come.
type chanWriter chan string

func (c chanWriter) Write(p []byte) (int, error) {
	c <- string(p)
	return len(p), nil
}

// TestStartAtServesMetricsWhileWaiting: a run given --start-at and
// --metrics-addr serves its live metrics while it waits for the instant
// (a shard waiting is up for its scraper, its counters at zero), and a
// busy address is refused before the wait, not at the instant when the
// other shards start without this one. The instant is ten minutes away:
// a run that waited before serving would reach the test's deadline.
func TestStartAtServesMetricsWhileWaiting(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name, addr string
		wantErr    string // "": served, then stopped while waiting
	}{
		{"free address, served during the wait", "127.0.0.1:0", ""},
		{"busy address, refused before the wait", busy.Addr().String(), "--metrics-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			lines := make(chanWriter, 16)
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, Config{Plan: mustPlan(t, fakeYAML), Factory: fakeFactory(time.Millisecond), Grace: time.Second,
					StartAt: time.Now().Add(10 * time.Minute), MetricsAddr: tc.addr, Mode: ProgressLines, Progress: lines})
				done <- err
			}()
			if tc.wantErr != "" {
				select {
				case err := <-done:
					var we *StartWaitError
					if err == nil || errors.As(err, &we) || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("Run: %v; want an error naming %s before the wait", err, tc.wantErr)
					}
				case <-ctx.Done():
					t.Error("Run was still waiting for the instant with its metrics address busy")
				}
				return
			}
			var url string
			for url == "" {
				select {
				case l := <-lines:
					if _, rest, ok := strings.Cut(l, "live metrics at "); ok {
						url = strings.TrimSpace(rest)
					}
				case err := <-done:
					t.Fatalf("Run ended before serving its metrics: %v", err)
				case <-ctx.Done():
					t.Fatal("no live metrics while waiting for the start instant")
				}
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("scrape while waiting: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("scrape while waiting: %s, %v", resp.Status, err)
			}
			for _, want := range []string{"\nlobbybench_requests_total 0\n", "\nlobbybench_sessions_started_total 0\n", "\nlobbybench_elapsed_seconds 0\n"} {
				if !strings.Contains(string(body), want) {
					t.Errorf("scrape while waiting lacks %q", strings.TrimSpace(want))
				}
			}
			cancel() // Ctrl-C while waiting
			var we *StartWaitError
			if err := <-done; !errors.As(err, &we) {
				t.Errorf("Run after Ctrl-C while waiting: %v, want a StartWaitError", err)
			}
		})
	}
}

// noteStartWait tells a person watching the progress that the run waits
// for its instant, once; a worker's JSON lines, a quiet run and a wait of
// a second or less say nothing.
func TestNoteStartWait(t *testing.T) {
	far := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name string
		mode ProgressMode
		at   time.Time
		want bool
	}{
		{"lines, an hour ahead", ProgressLines, far, true},
		{"bar, an hour ahead", ProgressBar, far, true},
		{"worker JSON", ProgressJSON, far, false},
		{"quiet", ProgressNone, far, false},
		{"already past", ProgressLines, time.Now().Add(-time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			noteStartWait(&b, tc.mode, tc.at)
			got := b.String()
			if tc.want != (got != "") || tc.want && !strings.Contains(got, "for the start instant "+tc.at.UTC().Format(time.RFC3339Nano)+" (--start-at)") {
				t.Errorf("noteStartWait: %q, want a line: %v", got, tc.want)
			}
		})
	}
}

// TestBuiltBeforeTheStartWait: a run given a start instant makes what its
// clients share, and collects the garbage of making it, before it waits
// for the instant, not after: a shard that did it after came to the
// instant late by that much (18 ms with virtual flows), and the first
// collection then ran as its clients started, each client allocating
// during it made to assist the marking (7-9 ms of send lag, measured).
// An interrupted wait closes what was made.
func TestBuiltBeforeTheStartWait(t *testing.T) {
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	warnings := make(chanWriter, 16)
	done := make(chan error, 1)
	before := forced()
	go func() {
		_, err := Run(ctx, Config{Plan: mustPlan(t, fakeYAML), Factory: fakeFactory(time.Millisecond), Grace: time.Second,
			StartAt: time.Now().Add(10 * time.Minute), Mode: ProgressLines, Warnings: warnings})
		done <- err
	}()
	for waiting := false; !waiting; {
		select {
		case l := <-warnings:
			waiting = strings.Contains(l, "waiting ")
		case err := <-done:
			t.Fatalf("Run ended before waiting for the instant: %v", err)
		}
	}
	if forced() == before {
		t.Error("Run waits for the start instant before it made the clients' shared state and collected")
	}
	cancel()
	var we *StartWaitError
	if err := <-done; !errors.As(err, &we) {
		t.Errorf("Run after Ctrl-C while waiting: %v, want a StartWaitError", err)
	}
}
