package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// laggedRun is a run of a fast server by a late harness: list_rooms's
// corrected p99 (535 ms) breaches its 20 ms threshold by no more than the
// harness's own send lag p99 (533 ms); the error rate passes.
func laggedRun(t testing.TB) *result.Run {
	r := sampleRun(t)
	r.Violations, r.Totals.Violations = nil, 0
	r.Steps[0].Latency = latencyOf(t, append(ramp(200, 10, 98), 535000, 535000)...)
	r.Steps[0].SendLag = latencyOf(t, append(ramp(5, 1, 98), 533000, 533000)...)
	r.Totals.Failures, r.Steps[1].Failures = 0, 0
	r.Totals.FailuresByReason, r.Steps[1].FailuresByReason = map[string]int64{}, map[string]int64{}
	r.Thresholds = []result.ThresholdResult{
		{Name: "list_rooms.p99 < 20ms", Metric: "list_rooms.p99", Op: "<", Limit: 0.020, Observed: float64(r.Steps[0].Latency.P99US) / 1e6},
		{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01, Observed: 0, Pass: true},
	}
	return r
}

// TestLagExplains is the rule itself: the lag explains a figure when it is
// at least the excess, never under the runtime's wake-up floor, and not
// merely for reaching the limit.
func TestLagExplains(t *testing.T) {
	tests := []struct {
		name        string
		excess, lag int64
		want        bool
	}{
		{"lag covers the excess", 515_000, 533_000, true},
		{"lag equals the excess", 500, 500, true},
		{"excess beyond the lag", 600_000, 533_000, false},
		{"lag over a 20ms limit, excess beyond it", 5_000_000, 30_000, false},
		{"lag under the floor", 10, result.SendLagFloorUS - 1, false},
		{"no excess, no lag", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := result.LagExplains(tt.excess, tt.lag); got != tt.want {
				t.Errorf("LagExplains(%d, %d) = %v, want %v", tt.excess, tt.lag, got, tt.want)
			}
		})
	}
}

// TestHarnessBoundJudgement: which breaches the send lag excuses, and the
// headline each run gets.
func TestHarnessBoundJudgement(t *testing.T) {
	th := func(name, metric, op string, limit, observed float64, pass bool) result.ThresholdResult {
		return result.ThresholdResult{Name: name, Metric: metric, Op: op, Limit: limit, Observed: observed, Pass: pass}
	}
	bound := th("list_rooms.p99 < 20ms", "list_rooms.p99", "<", 0.020, 0.535, false)
	tests := []struct {
		name       string
		thresholds []result.ThresholdResult
		edit       func(*result.Run)
		wantBound  []string
		wantStatus string
		wantText   string
	}{
		{name: "breach within the lag", thresholds: []result.ThresholdResult{bound},
			wantBound: []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusInconclusive,
			wantText: "INCONCLUSIVE · harness-bound: list_rooms.p99 < 20ms measured 535.00ms, send lag p99 533.50ms"},
		{name: "others passed are counted",
			thresholds: []result.ThresholdResult{bound, th("errors.rate < 1%", "errors.rate", "<", 0.01, 0, true)},
			wantBound:  []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusInconclusive,
			wantText: "INCONCLUSIVE · harness-bound: list_rooms.p99 < 20ms measured 535.00ms, send lag p99 533.50ms (1 of 2 thresholds passed)"},
		{name: "breach beyond the lag is a FAIL",
			thresholds: []result.ThresholdResult{th("list_rooms.p99 < 600ms", "list_rooms.p99", "<", 0.600, 1.2, false)},
			wantStatus: result.StatusFail, wantText: "FAIL · 1 of 1 threshold breached"},
		{name: "lag over the limit, the server's share over it too",
			thresholds: []result.ThresholdResult{th("list_rooms.p99 < 500ms", "list_rooms.p99", "<", 0.500, 2.0, false)},
			wantStatus: result.StatusFail},
		{name: "same quantile only: p50 lag is small",
			thresholds: []result.ThresholdResult{th("list_rooms.p50 < 1ms", "list_rooms.p50", "<", 0.001, 0.3, false)},
			wantStatus: result.StatusFail},
		{name: "an error rate is never excused",
			thresholds: []result.ThresholdResult{bound, th("errors.rate < 1%", "errors.rate", "<", 0.01, 0.2, false)},
			wantBound:  []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusFail,
			wantText: "FAIL · 1 of 2 thresholds breached, 1 more harness-bound (list_rooms.p99 < 20ms measured 535.00ms, send lag p99 533.50ms)"},
		{name: "timeouts are never excused",
			thresholds: []result.ThresholdResult{th("list_rooms.timeouts == 0", "list_rooms.timeouts", "==", 0, 3, false)},
			wantStatus: result.StatusFail},
		{name: "a bound on the send lag itself stays a FAIL",
			thresholds: []result.ThresholdResult{th("list_rooms.send_lag.p99 < 5ms", "list_rooms.send_lag.p99", "<", 0.005, 0.533, false)},
			wantStatus: result.StatusFail},
		{name: "a lower bound is not excused",
			thresholds: []result.ThresholdResult{th("list_rooms.min > 1s", "list_rooms.min", ">", 1, 0.0002, false)},
			wantStatus: result.StatusFail},
		{name: "no data is not excused",
			thresholds: []result.ThresholdResult{{Name: "list_rooms.p99 < 20ms", Metric: "list_rooms.p99", Op: "<", Limit: 0.02, NoData: true}},
			wantStatus: result.StatusFail},
		{name: "older files split the metric",
			thresholds: []result.ThresholdResult{{Name: "list_rooms.p99 < 20ms", Step: "list_rooms", Metric: "p99", Op: "<", Limit: 0.02, Observed: 0.535}},
			wantBound:  []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusInconclusive},
		{name: "older files split the metric in µs",
			thresholds: []result.ThresholdResult{{Name: "list_rooms.p99 < 20ms", Step: "list_rooms", Metric: "p99_us", Op: "<", Limit: 20_000, Observed: 535_000}},
			wantBound:  []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusInconclusive},
		{name: "older files in µs: beyond the lag",
			thresholds: []result.ThresholdResult{{Name: "list_rooms.p99 < 540ms", Step: "list_rooms", Metric: "p99_us", Op: "<", Limit: 540_000, Observed: 1_200_000}},
			wantStatus: result.StatusFail},
		{name: "violations are a FAIL whatever the lag", thresholds: []result.ThresholdResult{bound},
			edit: func(r *result.Run) { r.Totals.Violations = 2 }, wantBound: []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusFail},
		{name: "interrupted leads", thresholds: []result.ThresholdResult{bound},
			edit:      func(r *result.Run) { r.ShardRuns = []result.ShardRun{{Interrupted: true}} },
			wantBound: []string{"list_rooms.p99 < 20ms"}, wantStatus: result.StatusInterrupted},
		{name: "a step without send lag is judged as before", thresholds: []result.ThresholdResult{bound},
			edit: func(r *result.Run) { r.Steps[0].SendLag = result.Latency{} }, wantStatus: result.StatusFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := laggedRun(t)
			r.Thresholds = tt.thresholds
			if tt.edit != nil {
				tt.edit(r)
			}
			var got []string
			for _, b := range r.HarnessBreaches() {
				got = append(got, b.Threshold.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantBound, ",") {
				t.Errorf("harness-bound %q, want %q", got, tt.wantBound)
			}
			hl := r.Headline()
			if hl.Status != tt.wantStatus {
				t.Errorf("status %q, want %q (%s)", hl.Status, tt.wantStatus, hl.Text)
			}
			if tt.wantText != "" && hl.Text != tt.wantText {
				t.Errorf("headline\n %q, want\n %q", hl.Text, tt.wantText)
			}
		})
	}
}

// TestHarnessBoundFormats: every format says INCONCLUSIVE and the send lag
// (goldens), the HTML too.
func TestHarnessBoundFormats(t *testing.T) {
	r := laggedRun(t)
	tests := []struct {
		file  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"run_lagged_table.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, r) }, []string{"INCONCLUSIVE · harness-bound", "HARNESS-BOUND"}},
		{"run_lagged.md", func(b *bytes.Buffer) error { return WriteRunMarkdown(b, r) }, []string{"INCONCLUSIVE · harness-bound", "harness sent late"}},
		{"run_lagged_junit.xml", func(b *bytes.Buffer) error { return WriteRunJUnit(b, r) }, []string{`type="inconclusive"`, `type="harness-bound"`}},
		{"run_lagged.html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, r) }, []string{`class="status inconclusive"`, "warning: the harness sent late", "v-bound"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in the output", w)
				}
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
		})
	}
}

// TestCompareHarnessBound: two runs of one build, the new one by a harness
// 533 ms late at p99: its p99 increase (+40000 %, beyond the noise) is not
// judged, and says why; the same increase without the lag breaks the gate;
// so does one the lag covers only in part. The late requests take the
// server 1 ms, as the others: corrected latency is send lag plus that.
func TestCompareHarnessBound(t *testing.T) {
	series := func(lat, lag []int64) result.Series {
		return result.Series{Name: "list_rooms", Requests: int64(len(lat)), Successes: int64(len(lat)), FailuresByReason: map[string]int64{},
			Latency: latencyOf(t, lat...), Uncorrected: latencyOf(t, ramp(150, 1, len(lat))...), SendLag: latencyOf(t, lag...)}
	}
	late := func(slow, lag int64) (lat, lags []int64) {
		lat, lags = ramp(200, 1, 950), ramp(5, 0, 950)
		for range 50 {
			lat, lags = append(lat, slow), append(lags, lag)
		}
		return lat, lags
	}
	runOf := func(s result.Series) *result.Run {
		r := result.NewRun()
		r.Steps = []result.Series{s}
		r.Totals = result.Totals{Requests: s.Requests, Successes: s.Successes, FailuresByReason: map[string]int64{}}
		return r
	}
	base := runOf(series(ramp(200, 1, 1000), ramp(5, 0, 1000)))
	tests := []struct {
		name       string
		slow, lag  int64
		wantOK     bool
		wantSpared string
	}{
		{"harness-bound", 534_000, 533_000, true, "list_rooms p99 1.19ms -> 534.01ms (+44812.95%): not judged: harness-bound (send lag p99 533.50ms on the new side, 5µs on the base)"},
		{"no lag: a regression", 535_000, 5, false, ""},
		{"lag covers part of it", 535_000, 100_000, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lat, lag := late(tt.slow, tt.lag)
			c, err := result.Compare(base, runOf(series(lat, lag)), result.DefaultGates())
			if err != nil {
				t.Fatal(err)
			}
			if c.OK() != tt.wantOK {
				t.Errorf("OK %v, want %v; breaches %v; spared %q", c.OK(), tt.wantOK, c.Breaches, c.Spared)
			}
			if tt.wantSpared != "" && (len(c.Spared) != 1 || c.Spared[0] != tt.wantSpared) {
				t.Errorf("spared %q, want [%q]", c.Spared, tt.wantSpared)
			}
			if tt.wantSpared == "" {
				for _, s := range c.Spared {
					if strings.Contains(s, "harness-bound") {
						t.Errorf("spared as harness-bound: %q", s)
					}
				}
			}
			var b bytes.Buffer
			if err := WriteCompareTable(&b, c); err != nil {
				t.Fatal(err)
			}
			// Folded to TermWidth: compared with its line breaks as spaces.
			flat := strings.Join(strings.Fields(b.String()), " ")
			if tt.wantSpared != "" && !strings.Contains(flat, "Not gated: "+tt.wantSpared) {
				t.Errorf("the table does not say it:\n%s", b.String())
			}
		})
	}
}
