package reports

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// TestRunCSVGolden: a run's per-second series as CSV, every row led by
// the verdict's word (PASS, FAIL, INTERRUPTED, TARGET DOWN), a row for
// every second between the first and the last (a gap is zeros and no
// latency), the last second's part covered, the seconds the target was
// down, the players held after their series ends.
func TestRunCSVGolden(t *testing.T) {
	gap := passingRun(t)
	gap.DurationNS = 4500 * time.Millisecond
	gap.TimeSeries = append(gap.TimeSeries, pointOf(t, 4, 10, 10)) // second 4: only failures
	quiet := passingRun(t)
	quiet.DurationNS = 3100 * time.Millisecond // seconds 2 and 3 without a completion
	gap.Players = []result.PlayersPoint{{Second: 0, InRoom: 12}, {Second: 1, InRoom: 20, InGame: 8}, {Second: 2, InRoom: 8, InGame: 8}, {Second: 3}}
	interrupted := passingRun(t)
	interrupted.ShardRuns = []result.ShardRun{{Shard: "0/1", Interrupted: true}}
	tests := []struct {
		file, verdict string
		run           *result.Run
	}{
		{"run_pass.csv", "PASS", passingRun(t)},
		{"run_fail.csv", "FAIL", sampleRun(t)},
		{"run_gap.csv", "PASS", gap},
		{"run_interrupted.csv", "INTERRUPTED", interrupted},
		{"run_quiet_end.csv", "PASS", quiet},
		{"run_down.csv", "TARGET DOWN", downRun(t)},
		{"run_empty.csv", "", result.NewRun()},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteRunCSV(&b, tt.run); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatalf("not CSV: %v", err)
			}
			checkVerdictRows(t, rows, runCSVHeader, tt.run.Headline().Text, tt.verdict)
		})
	}
}

// TestRunCSVRows checks the figures of rows against the run they come
// from: counts, percentiles from each second's histogram, empty latency
// where a second had no success, the part of the last second covered.
func TestRunCSVRows(t *testing.T) {
	r := passingRun(t)
	r.DurationNS = 3250 * time.Millisecond
	r.TimeSeries = []result.Point{pointOf(t, 0, 5, 1, 100, 200, 300, 400), pointOf(t, 3, 2, 2)}
	r.Outages = []result.Outage{{StartNS: 1500 * time.Millisecond, EndNS: 2100 * time.Millisecond, Back: true, Kind: result.DownSilent}}
	var b bytes.Buffer
	if err := WriteRunCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	hl := r.Headline().Text
	if !strings.HasPrefix(hl, "TARGET DOWN · ") {
		t.Fatalf("fixture: headline %q", hl)
	}
	want := []string{
		"verdict,second,covered_s,requests,ok,failed,p50_us,p90_us,p99_us,max_us,target_down,in_room,in_game,headline",
		"TARGET DOWN,0,1,5,4,1,200,401,401,401,0,,," + hl, // 2 significant digits: 400 reads back as 401
		"TARGET DOWN,1,1,0,0,0,,,,,1,,," + hl,
		"TARGET DOWN,2,1,0,0,0,,,,,1,,," + hl,
		"TARGET DOWN,3,0.25,2,0,2,,,,,0,,," + hl,
	}
	if got := strings.Split(strings.TrimSpace(b.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunCSVBounded: a document whose seconds are far apart (read from a
// file, it may say anything) is refused, not written as millions of rows.
func TestRunCSVBounded(t *testing.T) {
	r := result.NewRun()
	r.TimeSeries = []result.Point{{Second: 0, Requests: 1}, {Second: 1 << 40, Requests: 1}}
	var b bytes.Buffer
	if err := WriteRunCSV(&b, r); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("error %v; want the series refused", err)
	}
	if b.Len() > 0 {
		t.Errorf("wrote %d bytes", b.Len())
	}
}

// TestConformCSVGolden: a conform result's cases, one row each, led by
// the suite's verdict.
func TestConformCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteConformCSV(&b, suiteConform()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "conform_suite.csv"), b.Bytes())
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(suiteConform().Cases)+1 {
		t.Fatalf("%d rows for %d cases", len(rows), len(suiteConform().Cases))
	}
	checkVerdictRows(t, rows, conformCSVHeader, suiteConform().Headline().Text, "FAIL")
}

// checkVerdictRows checks a CSV's header (header between verdict and
// headline) and that every row leads with word and ends with headline.
func checkVerdictRows(t *testing.T, rows [][]string, header []string, headline, word string) {
	t.Helper()
	if got, want := strings.Join(rows[0], ","), "verdict,"+strings.Join(header, ",")+",headline"; got != want {
		t.Errorf("header %s, want %s", got, want)
	}
	for _, row := range rows[1:] {
		if row[0] != word || row[len(row)-1] != headline {
			t.Errorf("row %q is not led by %q and ended by %q", row, word, headline)
		}
	}
}
