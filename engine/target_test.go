//go:build linux

package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
)

// TestRunEmbeddedTelemetry: a run against the embedded server reports
// its process's figures, saying they include the load generator's own
// work; Observer.LoadStart gets the run's start, the origin of the offsets.
func TestRunEmbeddedTelemetry(t *testing.T) {
	var log []string
	rec := &momentLog{log: &log}
	res, err := Run(context.Background(), Config{Plan: mustPlan(t, fakeYAML), Factory: fakeFactory(time.Millisecond),
		Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	tp := res.Run.TargetProcess
	if tp == nil {
		t.Fatal("no TargetProcess for the embedded server")
	}
	if tp.Command != owned.EmbeddedCommand || !strings.Contains(tp.Note, "include the load generator's own work") {
		t.Errorf("command %q, note %q", tp.Command, tp.Note)
	}
	if len(tp.Samples) < 1 || tp.PeakRSSBytes < 1<<20 || tp.Samples[0].Threads < 1 {
		t.Errorf("implausible figures: %d samples, peak RSS %d", len(tp.Samples), tp.PeakRSSBytes)
	}
	if !rec.start.Equal(res.Run.StartedAt) {
		t.Errorf("LoadStart got %v, the run started at %v", rec.start, res.Run.StartedAt)
	}
	if last := tp.Samples[len(tp.Samples)-1].OffsetNS; last < 0 {
		t.Errorf("sample offset %v before the start", last)
	}
}
