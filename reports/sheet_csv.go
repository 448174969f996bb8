// The CSV format: a file named to register after format.go, so that the
// JSON document stays the first format (Formats).

package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

func init() {
	register(Format{
		Name: "csv",
		Help: map[string]string{
			result.KindRun:     "write the per-second series as CSV to `FILE` (a spreadsheet's; the verdict in every row)",
			result.KindConform: "write the cases as CSV to `file`, one row each (the suite's verdict in every row)",
		},
		Write: one(WriteRunCSV, WriteConformCSV, false),
		Report: &ReportHelp{
			Summary: "render a result as CSV, for a spreadsheet",
			Usage: `Usage: lobbybench report csv RESULT.json [-o FILE]

Writes a run result's per-second series (one row a second: completions,
failures, latency percentiles, whether the target was down, players) or
a conform result's cases (one row each), or a capacity search's steps
(one row a load), as the CSV that 'run --csv', 'conform --csv' and
'capacity --csv' write, to FILE or stdout. Its first column, in every
row, is the result's verdict: TARGET DOWN, INTERRUPTED, INCOMPLETE,
FAIL, INCONCLUSIVE or PASS (empty when there is nothing to judge).`,
			List: `  csv RESULT.json [-o FILE]       CSV for a spreadsheet: a run's seconds,
                                  a suite's cases, a search's loads
`,
		},
	})
	registerCapacity("csv", "write the steps as CSV to `FILE`, one row a load (the search's verdict in every row)", WriteCapacityCSV)
}

// verdictCell is the word a headline leads with ("TARGET DOWN",
// "INTERRUPTED", "PASS"): the first cell of every CSV row, so that a row
// copied, filtered or charted alone still says what its figures are
// worth; the headline in full is every row's last cell.
func verdictCell(headline string) string {
	word, _, _ := strings.Cut(headline, " · ")
	return word
}

// csvRows writes header and then each row led by the verdict's word and
// ended by the headline in full.
func csvRows(w io.Writer, headline string, header []string, rows func(emit func(row ...string) error) error) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(append([]string{"verdict"}, header...), "headline")); err != nil {
		return err
	}
	word := verdictCell(headline)
	err := rows(func(row ...string) error {
		return cw.Write(append(append([]string{word}, row...), headline))
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// maxCSVSeconds bounds the rows of a run's CSV: a run lasts at most a day,
// and a document read from a file may say anything.
const maxCSVSeconds = 8 * 24 * 3600

// runCSVHeader names the figures of a run's CSV, between the verdict and
// the headline (documented with their units in docs/formats.md).
var runCSVHeader = []string{"second", "covered_s", "requests", "ok", "failed",
	"p50_us", "p90_us", "p99_us", "max_us", "target_down", "in_room", "in_game"}

// WriteRunCSV writes r's per-second series as CSV: one row a second from
// the first (0, or earlier) to the last either series holds or the run
// lasted into, every second between included (a second without a completion is a row of zeros and
// no latency); latency cells are empty where the second had no success,
// never a measured-looking 0.
func WriteRunCSV(w io.Writer, r *result.Run) error {
	points := map[int64]result.Point{}
	first, last := int64(0), int64(-1)
	for _, p := range r.TimeSeries {
		points[p.Second] = p
		first, last = min(first, p.Second), max(last, p.Second)
	}
	players := map[int64]result.PlayersPoint{}
	for _, p := range r.Players {
		players[p.Second] = p
		first, last = min(first, p.Second), max(last, p.Second)
	}
	if r.DurationNS > 0 && r.DurationNS < maxCSVSeconds*time.Second {
		// Through the run's length: seconds without a completion at its
		// end (a target gone quiet) are rows of zeros, not left out.
		last = max(last, int64((r.DurationNS-1)/time.Second))
	}
	if last >= first && last-first >= maxCSVSeconds {
		return fmt.Errorf("reports: the time series spans seconds %d to %d, more than %d rows", first, last, maxCSVSeconds)
	}
	return csvRows(w, r.Headline().Text, runCSVHeader, func(emit func(...string) error) error {
		var held *result.PlayersPoint // the players series' last value, held after its end
		for sec := first; sec <= last; sec++ {
			p := points[sec]
			lat, err := secondLatency(p)
			if err != nil {
				return fmt.Errorf("reports: second %d: %w", sec, err)
			}
			if pp, ok := players[sec]; ok {
				held = &pp
			}
			inRoom, inGame := "", ""
			if held != nil {
				inRoom, inGame = strconv.FormatInt(held.InRoom, 10), strconv.FormatInt(held.InGame, 10)
			}
			row := []string{strconv.FormatInt(sec, 10), covered(sec, r.DurationNS),
				strconv.FormatInt(p.Requests, 10), strconv.FormatInt(p.Requests-p.Errors, 10), strconv.FormatInt(p.Errors, 10)}
			row = append(append(row, lat...), boolCell(downAt(r.Outages, sec, r.DurationNS)), inRoom, inGame)
			if err := emit(row...); err != nil {
				return err
			}
		}
		return nil
	})
}

// covered is the part of second sec the run covered, in seconds: 1, or
// less for the second it ended inside (whose counts are for that part
// only). A run of unknown length counts every second whole.
func covered(sec int64, run time.Duration) string {
	c := time.Second
	if run > 0 {
		c = min(time.Second, max(0, run-time.Duration(sec)*time.Second)).Round(time.Millisecond)
	}
	return strconv.FormatFloat(c.Seconds(), 'f', -1, 64)
}

// secondLatency is a second's p50, p90, p99 and max of corrected latency
// in µs, empty where it had no success.
func secondLatency(p result.Point) ([]string, error) {
	if p.Hist == "" || p.Requests-p.Errors <= 0 {
		return []string{"", "", "", ""}, nil
	}
	h, err := p.Histogram()
	if err != nil {
		return nil, err
	}
	us := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{us(p.P50US), us(h.ValueAtPercentile(90)), us(p.P99US), us(h.Max())}, nil
}

// downAt reports whether the target was down (an outage, the watchdog's
// finding) at any time in second sec; an outage not back by the end lasts
// to the run's end.
func downAt(outs []result.Outage, sec int64, run time.Duration) bool {
	from, to := time.Duration(sec)*time.Second, time.Duration(sec+1)*time.Second
	for _, o := range outs {
		end := o.EndNS
		if !o.Back {
			end = max(run, o.StartNS+1)
		}
		if o.StartNS < to && end > from {
			return true
		}
	}
	return false
}

func boolCell(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// conformCSVHeader names the figures of a conform result's CSV.
var conformCSVHeader = []string{"id", "section", "rule", "level", "result", "description", "expected", "actual", "notes", "duration_us"}

// WriteConformCSV writes c's cases as CSV, one row each in the result's
// order; notes are joined by " | ".
func WriteConformCSV(w io.Writer, c *result.Conform) error {
	return csvRows(w, c.Headline().Text, conformCSVHeader, func(emit func(...string) error) error {
		for _, k := range c.Cases {
			if err := emit(k.ID, k.Section, k.Rule, k.Level, k.Verdict, k.Description, k.Expected, k.Actual,
				strings.Join(k.Notes, " | "), strconv.FormatInt(k.DurationNS.Microseconds(), 10)); err != nil {
				return err
			}
		}
		return nil
	})
}

// capacityCSVHeader names the figures of a capacity search's CSV, the
// load's by its model: sessions_per_s (open) or clients (closed).
func capacityCSVHeader(c *result.Capacity) []string {
	load := "sessions_per_s"
	if c.Model == "closed" {
		load = "clients"
	}
	return []string{load, "step_verdict", "requests", "throughput_per_s", "error_rate", "p50_us", "p99_us", "send_lag_p99_us", "broke"}
}

// WriteCapacityCSV writes c's steps as CSV, one row a load in the
// search's order.
func WriteCapacityCSV(w io.Writer, c *result.Capacity) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return csvRows(w, c.Headline().Text, capacityCSVHeader(c), func(emit func(...string) error) error {
		for _, s := range c.Steps {
			broke := strings.Join(s.Broke, " | ")
			if broke == "" {
				broke = s.Why
			}
			if err := emit(f(s.Load), verdictWord(s.Verdict), strconv.FormatInt(s.Requests, 10), f(s.Throughput), f(s.ErrorRate),
				latencyCell(s.P50US), latencyCell(s.P99US), latencyCell(s.SendLagP99US), broke); err != nil {
				return err
			}
		}
		return nil
	})
}

// latencyCell is a figure in µs, empty when there is none (0).
func latencyCell(us int64) string {
	if us == 0 {
		return ""
	}
	return strconv.FormatInt(us, 10)
}
