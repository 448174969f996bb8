package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/result"
)

// repLagged is a run whose last 5 % of join's requests were sent lag µs
// late and took the server server µs (their corrected latency is the
// sum); the others were sent 5 µs late and took 0.2-1.2 ms. It is judged
// by "join.p99 < 20ms".
func repLagged(t *testing.T, lag, server int64) *result.Run {
	t.Helper()
	lat, lags := repSeq(200, 1, 950), make([]int64, 950)
	for i := range lags {
		lags[i] = 5
	}
	for range 50 {
		lat, lags = append(lat, lag+server), append(lags, lag)
	}
	r := repRunOf(t, lat, 0)
	sl, err := result.NewLatency(repHistOf(t, lags))
	if err != nil {
		t.Fatal(err)
	}
	r.Steps[0].SendLag = sl
	r.Thresholds = []result.ThresholdResult{{Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.020,
		Observed: float64(r.Steps[0].Latency.P99US) / 1e6}}
	r.Thresholds[0].Pass = r.Thresholds[0].Observed < r.Thresholds[0].Limit
	return r
}

// TestExitInconclusive: a breach the harness's send lag explains exits 8
// (run, report merge) and says INCONCLUSIVE; the same breach by a punctual
// harness exits 4; report compare does not gate the increase a late new
// side explains, and says so.
func TestExitInconclusive(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name        string
		lag, server int64 // µs, of the late requests
		code        int
		headline    string
	}{
		{"late harness", 533_000, 1000, exitInconclusive, "INCONCLUSIVE · harness-bound: join.p99 < 20ms measured "},
		{"punctual harness, slow server", 5, 534_000, exitThreshold, "FAIL · 1 of 1 threshold breached"},
		{"late harness, slower server", 200_000, 334_000, exitThreshold, "FAIL · 1 of 1 threshold breached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repLagged(t, tt.lag, tt.server)
			t.Run("run", func(t *testing.T) {
				var out, errb bytes.Buffer
				e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
				code := reportRun(e, &engine.Result{Run: r, Engine: &engine.Info{}, ThresholdsOK: false}, &outputs{})
				if code != tt.code || !strings.Contains(out.String(), "\n"+tt.headline) {
					t.Errorf("exit %d, want %d; no %q in:\n%s", code, tt.code, tt.headline, out.String())
				}
			})
			t.Run("report merge", func(t *testing.T) {
				path := repWriteDoc(t, dir, strings.ReplaceAll(tt.name, " ", "-")+".json", r)
				code, _, stderr := runCLI(t, "report", "merge", path, "-o", path+".merged")
				if code != tt.code {
					t.Errorf("exit %d, want %d: %s", code, tt.code, stderr)
				}
				if tt.code == exitInconclusive && !strings.Contains(stderr, tt.headline) {
					t.Errorf("stderr does not say %q:\n%s", tt.headline, stderr)
				}
			})
		})
	}
	t.Run("report compare", func(t *testing.T) {
		base := repWriteDoc(t, dir, "base.json", repLagged(t, 5, 1000))
		late := repWriteDoc(t, dir, "late.json", repLagged(t, 533_000, 1000))
		code, stdout, stderr := runCLI(t, "report", "compare", base, late)
		// Folded to 80 columns: read with its line breaks as spaces.
		if code != exitOK || !strings.Contains(strings.Join(strings.Fields(stdout), " "), "not judged: harness-bound (send lag p99 533.50ms on the new side") {
			t.Errorf("exit %d, want 0, and the harness-bound line:\n%s%s", code, stdout, stderr)
		}
		// The same increase by a slow server is gated.
		slow := repWriteDoc(t, dir, "slow.json", repLagged(t, 5, 534_000))
		code, stdout, _ = runCLI(t, "report", "compare", base, slow)
		if code != exitThreshold || strings.Contains(stdout, "harness-bound") {
			t.Errorf("a slow server: exit %d, want %d:\n%s", code, exitThreshold, stdout)
		}
	})
}
