package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 11, 26, 19, 59, 30, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-11-26T20:00:00Z", time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC), ""},
		{"2026-11-26T21:00:00.250+01:00", time.Date(2026, 11, 26, 20, 0, 0, 250e6, time.UTC), ""},
		{"+30s", now.Add(30 * time.Second), ""},
		{" +1m30s ", now.Add(90 * time.Second), ""},
		{"+0s", now, ""},
		{"+-5s", time.Time{}, `--start-at "+-5s"`},
		{"+30", time.Time{}, `--start-at "+30"`},
		{"30s", time.Time{}, `--start-at "30s"`},
		{"2026-11-26 20:00:00", time.Time{}, "want an RFC 3339 time"},
		{"tomorrow", time.Time{}, "or an offset from now (+30s)"},
	}
	for _, tc := range tests {
		got, err := parseStartAt(tc.in, now)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one with %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || !got.Equal(tc.want)):
			t.Errorf("%q: %v (%v), want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckStartAt(t *testing.T) {
	now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		at   time.Time
		err  string
	}{
		{"now", now, ""},
		{"ahead within the bound", now.Add(10 * time.Minute), ""},
		{"ahead beyond the bound", now.Add(10*time.Minute + time.Second), "--start-at 2026-11-26T20:10:01Z is 10m1s away, over --start-at-max-wait 10m0s"},
		{"behind within the run", now.Add(-time.Minute), ""},
		{"behind beyond the run", now.Add(-time.Minute - time.Second), "--start-at 2026-11-26T19:58:59Z is 1m1s in the past, more than the run's duration (1m0s)"},
	}
	for _, tc := range tests {
		err := checkStartAt(tc.at, now, 10*time.Minute, time.Minute)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestRunStartAtUsage: every bad --start-at exits 2 with one line naming
// the flag, before anything is sent.
func TestRunStartAtUsage(t *testing.T) {
	good := writeScenario(t, shortRun)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a time", []string{"--start-at", "soon"}, "--start-at \"soon\": want an RFC 3339 time"},
		{"too far", []string{"--start-at", "+11m"}, "over --start-at-max-wait 10m0s"},
		{"too far for the bound", []string{"--start-at", "+2m", "--start-at-max-wait", "1m"}, "over --start-at-max-wait 1m0s"},
		{"long past", []string{"--start-at", "2000-01-01T00:00:00Z"}, "in the past, more than the run's duration (500ms)"},
		{"zero bound", []string{"--start-at", "+1s", "--start-at-max-wait", "0s"}, "--start-at-max-wait 0s must be above 0"},
		{"bound alone", []string{"--start-at-max-wait", "1m"}, "--start-at-max-wait needs --start-at"},
		{"with workers", []string{"--workers", "2", "--start-at", "+20m"}, "over --start-at-max-wait"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append(append([]string{"run", "--quiet"}, tc.args...), good)...)
			if code != exitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing run", code, out, exitUsage)
			}
			if !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
				t.Errorf("stderr %q: want %q, one line (and the usage hint)", errs, tc.want)
			}
		})
	}
}

// TestRunStartAtInterruptedWaiting: Ctrl-C while the run waits for its
// start instant exits 5 and says nothing was measured (its result files:
// TestNotStartedReplacesStaleFiles).
//
// The interrupt comes when the run says it waits (not after a fixed
// time, which a slow machine could spend before the wait began).
func TestRunStartAtInterruptedWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errs := cancelOn("waiting ", cancel)
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: errs, getenv: func(string) string { return "" }}
	code := runMain(ctx, e, []string{"run", "--start-at", "+5m", writeScenario(t, shortRun)})
	if s := errs.String(); code != exitInterrupted || !strings.Contains(s, "stopped while waiting for the start instant") || !strings.Contains(s, "nothing was measured") {
		t.Errorf("exit %d, stderr %q; want %d, said so", code, s, exitInterrupted)
	}
}

// TestRunStartAtLate: a run whose start instant passed a second ago joins
// late: it says so, counts the arrivals it missed as late_start dropped
// starts (not shifted into the rest of the run), and is INCOMPLETE (exit
// 6) in every format.
func TestRunStartAtLate(t *testing.T) {
	dir := t.TempDir()
	js, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	body := strings.Replace(shortRun, "duration: 500ms", "duration: 3s", 1)
	at := time.Now().Add(-1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	code, out, errs := runCLI(t, "run", "--quiet", "--json", js, "--markdown", md, "--start-at", at, writeScenario(t, body))
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d; stderr %s\nstdout %s", code, exitIncomplete, errs, out)
	}
	if !strings.Contains(errs, "joins late: the ") || !strings.Contains(errs, "counted as dropped starts (late_start), not shifted") {
		t.Errorf("stderr does not say the run joined late: %s", errs)
	}
	f, err := os.Open(js)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := result.ReadRun(f)
	if err != nil {
		t.Fatal(err)
	}
	sr := run.ShardRuns[0]
	// 40 arrivals a second, at least 1.5 s of them missed.
	if missed := run.Sessions.DroppedLateStart; missed < 60 || missed != sr.Sessions.DroppedLateStart || sr.LateStartNS < 1500*time.Millisecond {
		t.Errorf("missed %d (shard %d), late %v; want at least 60 and 1.5s", missed, sr.Sessions.DroppedLateStart, sr.LateStartNS)
	}
	if got := run.Sessions.Started + run.Sessions.Dropped(); got != 120 {
		t.Errorf("started %d + dropped %d = %d, want the schedule's 120 arrivals", run.Sessions.Started, run.Sessions.Dropped(), got)
	}
	if !sr.StartAt.Equal(run.StartedAt) || sr.StartAt.Format(time.RFC3339Nano) != at {
		t.Errorf("start_at %v, started_at %v; want both %s", sr.StartAt, run.StartedAt, at)
	}
	if hl := run.Headline(); hl.Status != result.StatusIncomplete || !strings.Contains(hl.Text, "missed by a late start (shard 0/1 started") {
		t.Errorf("headline %+v", hl)
	}
	if x, err := os.ReadFile(md); err != nil || !strings.HasPrefix(string(x), "**INCOMPLETE · ") {
		t.Errorf("Markdown: %v %.200s", err, x)
	}
	if !strings.Contains(out, "late start)") {
		t.Errorf("the sessions line does not count the late start:\n%s", out)
	}
}
