package scenario

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Curve is a load read from a CSV file (load.curve): points of a target
// over real time, compressed into the run.
type Curve struct {
	Path     string  // as written in the scenario
	Column   string  // "players" (closed model) or "rate" (open model)
	Points   int     // rows read
	Span     float64 // real time from the first row to the last, seconds
	Compress float64 // real seconds per second of the run (load.compress, default 1)
}

// Limits of a curve file.
const (
	maxCurveSize   = 8 << 20
	maxCurvePoints = 100_000
	maxCurveErrors = 10
)

// curveValue is what a curve's second column means: the closed model's
// concurrent clients, or the open model's arrival rate per second.
var curveValue = map[string]LoadModel{"players": Closed, "rate": Open}

// curveTime is how a curve's first column gives the time of a row.
var curveTime = map[string]func(string) (float64, error){
	"time":   parseClock,
	"minute": func(s string) (float64, error) { v, err := plainNumber(s); return v * 60, err },
	"second": plainNumber,
}

// curve reads the CSV file that load.curve (value node n) names, relative
// to the scenario's directory, and turns it into a start value and stages
// over the run (time divided by compress). It reports problems in the CSV
// as "file.csv:line: …", and ok is false when there was any.
func (d *decoder) curve(n *yaml.Node, compress float64) (c Curve, start float64, stages []Stage, ok bool) {
	name, ok := d.str(n, "load.curve")
	if !ok {
		return c, 0, nil, false
	}
	c = Curve{Path: name, Compress: compress}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(d.file), path)
	}
	data, err := readCurveFile(path)
	if err != nil {
		d.errf(n, "load.curve: %v", err)
		return c, 0, nil, false
	}
	cr := &curveReader{d: d, path: path, where: fmt.Sprintf(" (load.curve, %s:%d)", d.file, n.Line), r: csv.NewReader(strings.NewReader(string(data)))}
	cr.r.Comment = '#'
	cr.r.FieldsPerRecord = -1
	cr.r.TrimLeadingSpace = true
	if !cr.readHeader(&c) {
		return c, 0, nil, false
	}
	pts := cr.readRows()
	if cr.nerr > maxCurveErrors {
		d.later = append(d.later, Error{File: path, Msg: fmt.Sprintf("%d more problems not shown", cr.nerr-maxCurveErrors)})
	}
	if cr.nerr > 0 {
		return c, 0, nil, false
	}
	if len(pts) < 2 {
		cr.bad(0, "%s: a curve needs at least 2 rows (the run lasts from the first row's time to the last's)", map[bool]string{true: "no rows", false: "only 1 row"}[len(pts) == 0])
		return c, 0, nil, false
	}
	c.Points = len(pts)
	c.Span = pts[len(pts)-1][0]
	return c, pts[0][1], curveStages(pts, compress), true
}

// curveReader reads a load curve's CSV.
type curveReader struct {
	d     *decoder
	path  string // the CSV's, for its errors
	where string // " (load.curve, scenario:line)", after each error
	r     *csv.Reader
	nerr  int // the problems found; the first maxCurveErrors are reported
	// header is the CSV's two column names; timeOf and model read them.
	header []string
	timeOf func(string) (float64, error)
	model  LoadModel
}

// bad reports a problem at line of the CSV (0: the file), up to
// maxCurveErrors of them.
func (cr *curveReader) bad(line int, format string, args ...any) {
	cr.nerr++
	if cr.nerr <= maxCurveErrors {
		cr.d.later = append(cr.d.later, Error{File: cr.path, Line: line, Msg: fmt.Sprintf(format, args...) + cr.where})
	}
}

// readHeader reads the header: a time column (time, minute or second)
// and a value column (players or rate) that sets c.Column and the model.
func (cr *curveReader) readHeader(c *Curve) bool {
	header, err := cr.r.Read()
	if err != nil {
		if err == io.EOF {
			cr.bad(0, "empty curve: want a header time,players (or minute/second, players/rate) and rows")
		} else {
			cr.bad(csvLine(err), "%v", csvErr(err))
		}
		return false
	}
	hline, _ := cr.r.FieldPos(0)
	if len(header) == 2 {
		cr.timeOf = curveTime[strings.ToLower(strings.TrimSpace(header[0]))]
		c.Column = strings.ToLower(strings.TrimSpace(header[1]))
		cr.model = curveValue[c.Column]
	}
	if cr.timeOf == nil || cr.model == "" {
		cr.bad(hline, "header %q: want two columns, time, minute or second then players (concurrent clients, closed model) or rate (arrivals per second, open model), e.g. time,players", strings.Join(header, ","))
		return false
	}
	cr.header = header
	return true
}

// readRows reads the rows as points (time from the first row's, value),
// reporting each bad row; times must increase.
func (cr *curveReader) readRows() [][2]float64 {
	var first, prevT float64
	prevLine, rows, prevRaw := 0, 0, ""
	var pts [][2]float64
	for {
		rec, err := cr.r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			cr.bad(csvLine(err), "%v", csvErr(err))
			break
		}
		line, _ := cr.r.FieldPos(0)
		rows++
		if rows > maxCurvePoints {
			cr.bad(line, "more than %d rows", maxCurvePoints)
			break
		}
		t, v, ok := cr.readRow(rec, line)
		if !ok {
			continue
		}
		if prevLine > 0 && t <= prevT {
			cr.bad(line, "%s %s is not after %s on line %d: times must increase", cr.header[0], strings.TrimSpace(rec[0]), prevRaw, prevLine)
			continue
		}
		if prevLine == 0 {
			first = t
		}
		prevT, prevLine, prevRaw = t, line, strings.TrimSpace(rec[0])
		pts = append(pts, [2]float64{t - first, v})
	}
	return pts
}

// readRow reads one row's time and value.
func (cr *curveReader) readRow(rec []string, line int) (t, v float64, ok bool) {
	header := cr.header
	if len(rec) != 2 {
		cr.bad(line, "%d field%s, want 2 (%s,%s)", len(rec), map[bool]string{true: "s"}[len(rec) != 1], header[0], header[1])
		return 0, 0, false
	}
	t, err := cr.timeOf(strings.TrimSpace(rec[0]))
	if err != nil {
		cr.bad(line, "%s %q: %v", header[0], rec[0], err)
		return 0, 0, false
	}
	v, err = curveNumber(cr.model, strings.TrimSpace(rec[1]))
	if err != nil {
		cr.bad(line, "%s %q: %v", header[1], rec[1], err)
		return 0, 0, false
	}
	return t, v, true
}

// curveStages are the stages between the points, their time divided by
// compress. Durations come from the cumulative compressed time, so
// rounding to the nanosecond does not drift over many rows.
func curveStages(pts [][2]float64, compress float64) []Stage {
	at := func(t float64) time.Duration { return time.Duration(math.Round(t / compress * 1e9)) }
	var stages []Stage
	for i := 1; i < len(pts); i++ {
		stages = append(stages, Stage{Target: pts[i][1], For: at(pts[i][0]) - at(pts[i-1][0])})
	}
	return stages
}

// readCurveFile reads a regular file of at most maxCurveSize bytes.
func readCurveFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxCurveSize {
		return nil, fmt.Errorf("%s is %d bytes; a curve is at most %d", path, st.Size(), maxCurveSize)
	}
	return io.ReadAll(io.LimitReader(f, maxCurveSize))
}

func csvLine(err error) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return 0
}

func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// curveNumber parses a curve's value: a whole number of players (0 to
// 1,000,000), or a rate in arrivals per second (0 to 1,000,000).
func curveNumber(model LoadModel, s string) (float64, error) {
	v, err := plainNumber(s)
	if err != nil {
		return 0, err
	}
	if v > 1_000_000 {
		return 0, fmt.Errorf("over 1000000")
	}
	if model == Closed && v != math.Trunc(v) {
		return 0, fmt.Errorf("not a whole number of players")
	}
	return v, nil
}

// plainNumber parses a finite, non-negative number.
func plainNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("not a number")
	case v < 0:
		return 0, fmt.Errorf("negative (want 0 or more)")
	}
	return v, nil
}

// parseClock parses a time of the time column: a clock time H:MM or
// H:MM:SS (hours may pass 24, seconds may have a fraction), or a duration
// with a unit (90s, 1h30m).
func parseClock(s string) (float64, error) {
	if !strings.Contains(s, ":") {
		d, err := ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("want a clock time (13:05, 13:05:30) or a duration with a unit (90s, 1h30m); plain numbers go in a minute or second column")
		}
		return d.Seconds(), nil
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("want a clock time H:MM or H:MM:SS")
	}
	h, err1 := strconv.ParseUint(parts[0], 10, 32)
	m, err2 := strconv.ParseUint(parts[1], 10, 32)
	sec := 0.0
	var err3 error
	if len(parts) == 3 {
		sec, err3 = strconv.ParseFloat(parts[2], 64)
	}
	if err1 != nil || err2 != nil || err3 != nil || len(parts[1]) != 2 || m > 59 || sec < 0 || sec >= 60 || math.IsNaN(sec) {
		return 0, fmt.Errorf("want a clock time H:MM or H:MM:SS (minutes and seconds 00-59)")
	}
	return float64(h)*3600 + float64(m)*60 + sec, nil
}

// formatSpan renders a curve's real-time span for messages: 24h0m0s.
func formatSpan(t float64) string {
	return time.Duration(t * float64(time.Second)).String()
}
