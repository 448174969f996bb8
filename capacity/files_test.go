package capacity

import (
	"bytes"
	"context"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestEngineRunnerFilesOnce: a capacity step says its open-files need
// once (not once per run: a step is a warm-up and a judged run), computed
// from what the step needs (an open model's peak of live sessions, a
// closed model's clients) rather than from max_clients (20,000 here), and
// only when that is over the limit; the engine's own warning, counted
// from max_clients, is left off for every run. The lines, as `capacity`
// prints them folded to 80 columns, are in testdata/files_warning.txt.
func TestEngineRunnerFilesOnce(t *testing.T) {
	open := pollPlan(t, netip.MustParseAddrPort("127.0.0.1:9"))
	open.Load.MaxClients = 20_000
	closed := *open
	closed.Load.Model = scenario.Closed
	embedded := *open
	embedded.Target = ""
	var out bytes.Buffer
	for _, tc := range []struct {
		name  string
		plan  *scenario.Plan
		load  float64
		limit uint64
		want  string // in the one line; "" no line
	}{
		{"open, over the limit", open, 50, 100, "the step at 50/s needs about 112 open files (48 live sessions at the peak of its first run + 64 margin)"},
		{"open, fits", open, 50, 1024, ""},
		{"closed, over the limit", &closed, 60, 100, "the step at 60 clients needs about 124 open files (60 clients + 64 margin)"},
		{"embedded server counted", &embedded, 50, 100, "for the embedded server + 64 margin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var notes []string
			runs := 0
			r := &EngineRunner{Plan: tc.plan, Hold: 2 * time.Second, Warmup: time.Second, Judge: DefaultJudgement, FilesLimit: tc.limit,
				Note: func(s string) { notes = append(notes, s) },
				Run: func(_ context.Context, cfg engine.Config) (*engine.Result, error) {
					runs++
					if !cfg.NoFilesWarning {
						t.Error("the engine was left to warn from max_clients")
					}
					run := &result.Run{DurationNS: cfg.Plan.Load.Duration, Thresholds: []result.ThresholdResult{passing("errors.rate", 0, 0.05)},
						TimeSeries: []result.Point{{Second: 0, Requests: 10}}}
					return &engine.Result{Run: run, Engine: &engine.Info{Sessions: engine.SessionInfo{MaxActive: 48}}}, nil
				}}
			if _, err := r.Step(context.Background(), tc.load); err != nil {
				t.Fatal(err)
			}
			if runs != 2 {
				t.Fatalf("%d runs, want the warm-up and the judged run", runs)
			}
			switch {
			case tc.want == "" && len(notes) > 0:
				t.Errorf("notes %q, want none: the step fits", notes)
			case tc.want != "" && (len(notes) != 1 || !strings.Contains(notes[0], tc.want)):
				t.Errorf("notes %q, want one with %q", notes, tc.want)
			}
			if tc.plan.Target != "" {
				for _, n := range notes {
					reports.WriteWrapped(&out, "lobbybench capacity: "+n, 2)
				}
			}
		})
	}
	golden.Check(t, filepath.Join("testdata", "files_warning.txt"), out.Bytes())
	for i, l := range strings.Split(out.String(), "\n") {
		if n := len([]rune(l)); n > reports.TermWidth {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
}
