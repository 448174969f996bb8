package scenario

import (
	"math"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestLobbyThresholds: thresholds name the lobby measures (time_to_game
// and room_fill statistics, data_sent and data_received run-wide and per
// step), parse with their units, and evaluate against a run's figures; a
// measure the run did not record has no data for its latencies and a
// count of 0.
func TestLobbyThresholds(t *testing.T) {
	p, err := Parse("s.yaml", []byte(minimal+`default_error_gate: false
thresholds:
  - time_to_game.p99 < 2s
  - room_fill.count >= 1
  - data_sent < 1000
  - data_received > 0
  - join.data_sent == 120
  - time_to_game.mean < 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	run := result.NewRun()
	run.Totals.DataSent, run.Totals.DataReceived = 600, 900
	run.Steps = []result.Series{{Name: "join", DataSent: 120, DataReceived: 140}}
	run.TimeToGame = &result.Latency{Count: 4, P99US: 1_500_000, MeanUS: 1_200_000}
	run.RoomFill = &result.Latency{Count: 2, P99US: 30_000}
	tests := []struct {
		name     string
		mutate   func(r *result.Run)
		pass     []bool
		observed []float64 // NaN: no data
	}{
		{"all recorded", func(*result.Run) {},
			[]bool{true, true, true, true, true, false}, []float64{1.5, 2, 600, 900, 120, 1.2}},
		{"no game reached", func(r *result.Run) { r.TimeToGame, r.RoomFill = nil, nil },
			[]bool{false, false, true, true, true, false}, []float64{math.NaN(), 0, 600, 900, 120, math.NaN()}},
		{"too many bytes", func(r *result.Run) { r.Totals.DataSent = 1000 },
			[]bool{true, true, false, true, true, false}, []float64{1.5, 2, 1000, 900, 120, 1.2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := *run
			tc.mutate(&r)
			res, _ := result.Evaluate(p.Conditions(), result.RunMetrics(&r))
			if len(res) != len(tc.pass) {
				t.Fatalf("%d results, want %d", len(res), len(tc.pass))
			}
			for i, got := range res {
				want := tc.observed[i]
				if got.Pass != tc.pass[i] || got.NoData != math.IsNaN(want) || !got.NoData && math.Abs(got.Observed-want) > 1e-9 {
					t.Errorf("%s: pass %v value %v no data %v, want pass %v value %v", got.Name, got.Pass, got.Observed, got.NoData, tc.pass[i], want)
				}
			}
		})
	}
	if _, err := Parse("s.yaml", []byte(minimal+"thresholds:\n  - time_to_game.p99 < 2\n")); err == nil {
		t.Error("time_to_game.p99 without a unit parsed")
	}
	if _, err := Parse("s.yaml", []byte(minimal+"thresholds:\n  - data_sent < 1%\n")); err == nil {
		t.Error("data_sent with a percentage parsed")
	}
}
