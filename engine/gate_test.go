package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestAwaitStart: a worker says it is ready in one progress line its
// parent reads as such, then takes the instant its parent writes; a gate
// closed without one, or with something else, is an error naming it, and
// its context ends the wait.
func TestAwaitStart(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		in   string
		want string // "" for at
	}{
		{"the instant", at.Format(time.RFC3339Nano) + "\n", ""},
		{"the instant, no newline before the end", at.Format(time.RFC3339Nano), ""},
		{"closed without one", "", "closed the gate without a start instant"},
		{"not an instant", "soon\n", `"soon" is not a start instant`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := AwaitStart(context.Background(), &out, strings.NewReader(tc.in))
			var s ProgressSample
			if json.Unmarshal(out.Bytes(), &s) != nil || !s.Ready || strings.Count(out.String(), "\n") != 1 {
				t.Errorf("ready line %q: want one progress line with Ready", out.String())
			}
			switch {
			case tc.want == "" && (err != nil || !got.Equal(at)):
				t.Errorf("AwaitStart = %v, %v; want %v", got, err, at)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("AwaitStart = %v, %v; want an error saying %q", got, err, tc.want)
			}
		})
	}
	t.Run("context ends the wait", func(t *testing.T) {
		pr, pw := io.Pipe() // a parent that never writes
		defer pw.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := AwaitStart(ctx, io.Discard, pr); !errors.Is(err, context.Canceled) {
			t.Errorf("AwaitStart = %v, want context.Canceled", err)
		}
	})
}

// TestOpenGate: the parent sets the start instant only once every worker
// is ready or has ended, writes the same instant to all the ready ones,
// and makes it the run's StartAt and the live figures' zero.
func TestOpenGate(t *testing.T) {
	settled := make(chan struct{}, 1)
	r := &workersRun{ctx: context.Background(), settled: settled}
	type pipe struct {
		r *io.PipeReader
		w *io.PipeWriter
	}
	var pipes []pipe
	for range 3 {
		pr, pw := io.Pipe()
		pipes = append(pipes, pipe{pr, pw})
		r.workers = append(r.workers, &worker{stdin: pw, settled: settled})
	}
	r.workers[2].stdin = nil // never started: ended
	r.workers[2].done = true
	read := make(chan string, 2)
	for _, p := range pipes[:2] {
		go func() {
			b, _ := io.ReadAll(p.r)
			read <- string(b)
		}()
	}
	opened := make(chan struct{})
	go func() { r.openGate(make(chan struct{})); close(opened) }()
	var last time.Time // just before the last worker is ready
	for i, wk := range r.workers[:2] {
		select {
		case <-opened:
			t.Fatalf("the gate opened with %d of 2 workers ready", i)
		default:
		}
		last = time.Now()
		wk.mu.Lock()
		wk.ready = true
		wk.mu.Unlock()
		wk.settle()
	}
	<-opened
	want := r.w.StartAt.UTC().Format(time.RFC3339Nano) + "\n"
	if r.w.StartAt.Before(last.Add(gateMargin)) {
		t.Errorf("start instant %v set before the last worker was ready (%v)", r.w.StartAt, last)
	}
	if r.w.StartAt.IsZero() || !r.liveStart.Equal(r.w.StartAt) {
		t.Fatalf("StartAt %v, live zero %v: want one instant, set", r.w.StartAt, r.liveStart)
	}
	for range 2 {
		if got := <-read; got != want {
			t.Errorf("a worker read %q, want %q", got, want)
		}
	}
}
