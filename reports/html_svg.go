package reports

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// This file draws the HTML report's charts as inline SVG, built as text so
// the page needs no script and no network. Every string that reaches the
// SVG goes through html.EscapeString.

// palette colours chart series in order; it repeats past its end.
var palette = []string{"#1f6fb5", "#d1495b", "#2a9d5c", "#e07b00", "#7b4fb0", "#8c564b", "#c2409c", "#138a9e"}

func colour(i int) string { return palette[i%len(palette)] }

// xy is one data point; a NaN Y breaks the line (no data there).
type xy struct{ X, Y float64 }

// lineSeries is one line of a chart.
type lineSeries struct {
	Name   string
	Colour string
	Dashed bool
	Points []xy
	// Marks are points drawn as dots with a hover title (e.g. p99 = 12ms).
	Marks []mark
}

type mark struct {
	P     xy
	Title string
}

// plot maps data coordinates to pixels inside a plot area.
type plot struct {
	x0, x1, y0, y1  float64 // data range (both axes linear)
	left, top, w, h float64 // plot area in px
	// bands are x intervals shaded across the plot (the target's
	// outages), with a legend entry after the lines'.
	bands []band
	// faults are x positions marked with a vertical line and a label (a
	// recovery drill's faults), with a legend entry after the bands'.
	faults []vline
	// faultLegend is that entry ("": "drill fault (dotted line)").
	faultLegend string
}

// vline is one labelled vertical line of a chart.
type vline struct {
	X     float64
	Label string
	Title string
}

// band is one shaded x interval of a chart.
type band struct {
	X0, X1 float64
	Title  string
}

// downBands are the outages of a run as chart bands in seconds since
// the start, an open one reaching to end.
func downBands(outs []result.Outage, end float64) []band {
	var bs []band
	for _, o := range outs {
		x1 := end
		title := fmt.Sprintf("target down (%s) from +%s, not back by the end", o.Kind, words.Seconds(o.StartNS))
		if o.Back {
			x1 = o.EndNS.Seconds()
			title = fmt.Sprintf("target down (%s) from +%s to +%s", o.Kind, words.Seconds(o.StartNS), words.Seconds(o.EndNS))
		}
		if o.Fault != "" {
			title += " (fault: " + o.Fault + ")"
		}
		bs = append(bs, band{X0: o.StartNS.Seconds(), X1: x1, Title: title})
	}
	return bs
}

func (p *plot) px(x float64) float64 {
	if p.x1 == p.x0 {
		return p.left
	}
	return p.left + (x-p.x0)/(p.x1-p.x0)*p.w
}

func (p *plot) py(y float64) float64 {
	if p.y1 == p.y0 {
		return p.top + p.h
	}
	return p.top + p.h - (y-p.y0)/(p.y1-p.y0)*p.h
}

// f1 formats a pixel coordinate: one decimal, no "-0.0".
func f1(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

// niceStep returns a round step (1, 2, 2.5 or 5 × 10^k) near span/n.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// niceTicks returns ticks 0, step, ... up to the first tick ≥ max (at least
// one step), for an axis starting at zero.
func niceTicks(max float64, n int) []float64 {
	if !(max > 0) {
		max = 1
	}
	step := niceStep(max, n)
	var ticks []float64
	for i := 0; ; i++ {
		v := float64(i) * step
		ticks = append(ticks, v)
		if v >= max || i > 100 {
			break
		}
	}
	return ticks
}

// fmtAxisUS formats a microsecond tick compactly: "250µs", "1.5ms", "2s".
func fmtAxisUS(us float64) string {
	trim := func(v float64, unit string) string {
		return strconv.FormatFloat(v, 'f', -1, 64) + unit
	}
	switch {
	case us == 0:
		return "0"
	case us < 1000:
		return trim(math.Round(us*100)/100, "µs")
	case us < 1e6:
		return trim(math.Round(us/10)/100, "ms")
	default:
		return trim(math.Round(us/1e4)/100, "s")
	}
}

// fmtAxisCount formats a count tick: "950", "1.2k", "3.5M".
func fmtAxisCount(v float64) string {
	trim := func(v float64, unit string) string {
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + unit
	}
	switch {
	case math.Abs(v) < 1000:
		return trim(v, "")
	case math.Abs(v) < 1e6:
		return trim(v/1e3, "k")
	default:
		return trim(v/1e6, "M")
	}
}

// nineLabel names the percentile at x nines: 0%, 90%, 99%, 99.9%, ...
func nineLabel(n int) string {
	if n <= 0 {
		return "0%"
	}
	if n == 1 {
		return "90%"
	}
	if n == 2 {
		return "99%"
	}
	return "99." + strings.Repeat("9", n-2) + "%"
}

// ninesX is the position of percentile q (0..100) on the nines axis:
// -log10(1 - q/100), so 90% is 1, 99% is 2, 99.9% is 3.
func ninesX(q float64) float64 {
	if q >= 100 {
		return math.Inf(1)
	}
	return -math.Log10(1 - q/100)
}

// ninesMax is how many nines a distribution of count values can show: one
// more than log10(count), so the last plateau (the maximum) is visible,
// kept within 2..6.
func ninesMax(count int64) int {
	if count <= 0 {
		return 2
	}
	n := int(math.Floor(math.Log10(float64(count)))) + 1
	return min(max(n, 2), 6)
}

// ninesStep is the x resolution of percentile curves (in nines).
const ninesStep = 0.025

// percentileCurve samples h along the nines axis from 0 to maxNines at
// ninesStep, with the value at each percentile exactly as
// Histogram.ValueAtPercentile reports it (one pass over the counts).
func percentileCurve(h *hdrhistogram.Histogram, maxNines int) []xy {
	n := int(math.Round(float64(maxNines)/ninesStep)) + 1
	qs := make([]float64, n)
	for i := range qs {
		x := float64(i) * ninesStep
		qs[i] = 100 * (1 - math.Pow(10, -x))
	}
	vals := h.ValueAtPercentilesSlice(qs)
	pts := make([]xy, n)
	for i := range pts {
		pts[i] = xy{X: float64(i) * ninesStep, Y: float64(vals[i])}
	}
	return pts
}

// histSeries is one distribution for a percentile chart.
type histSeries struct {
	Name   string
	Colour string
	Dashed bool
	Hist   *hdrhistogram.Histogram
}

// percentileChart draws the HDR percentile distribution of each series with
// a log-scaled "nines" x axis and a linear latency y axis, marking each
// whole nine with a hoverable dot. Empty series are listed in the legend as
// "no samples" and not drawn.
func percentileChart(title string, series []histSeries, width, height float64) template.HTML {
	return percentileChartY(title, series, width, height, false)
}

// percentileChartLog is percentileChart with a log latency axis (one
// decade per grid line), for series whose scales differ: on a linear axis
// a µs-scale step beside a ms-scale one is flattened to zero.
func percentileChartLog(title string, series []histSeries, width, height float64) template.HTML {
	return percentileChartY(title, series, width, height, true)
}

func percentileChartY(title string, series []histSeries, width, height float64, logY bool) template.HTML {
	maxN := 2
	maxY := 0.0
	for _, s := range series {
		if s.Hist != nil && s.Hist.TotalCount() > 0 {
			maxN = max(maxN, ninesMax(s.Hist.TotalCount()))
		}
	}
	var lines []lineSeries
	var legend []string
	for _, s := range series {
		if s.Hist == nil || s.Hist.TotalCount() == 0 {
			legend = append(legend, s.Name+": no samples")
			lines = append(lines, lineSeries{Name: s.Name, Colour: s.Colour, Dashed: s.Dashed})
			continue
		}
		pts := percentileCurve(s.Hist, maxN)
		var marks []mark
		for n := 0; n <= maxN; n++ {
			p := pts[int(math.Round(float64(n)/ninesStep))]
			marks = append(marks, mark{P: p, Title: fmt.Sprintf("%s %s = %s", s.Name, nineLabel(n), words.US(int64(p.Y)))})
		}
		for _, p := range pts {
			maxY = math.Max(maxY, p.Y)
		}
		lines = append(lines, lineSeries{Name: s.Name, Colour: s.Colour, Dashed: s.Dashed, Points: pts, Marks: marks})
		legend = append(legend, fmt.Sprintf("%s: p50 %s · p99 %s · max %s · n=%d", s.Name,
			words.US(s.Hist.ValueAtPercentile(50)), words.US(s.Hist.ValueAtPercentile(99)), words.US(s.Hist.Max()), s.Hist.TotalCount()))
	}
	var xt []tick
	for n := 0; n <= maxN; n++ {
		xt = append(xt, tick{float64(n), nineLabel(n)})
	}
	var ytk []tick
	var p *plot
	yTitle := "latency"
	if logY {
		// Plot log10 of the latency (below 1 µs drawn at 1 µs); the
		// dots' titles keep the real values.
		lg := func(v float64) float64 { return math.Log10(math.Max(v, 1)) }
		for i := range lines {
			for j := range lines[i].Points {
				lines[i].Points[j].Y = lg(lines[i].Points[j].Y)
			}
			for j := range lines[i].Marks {
				lines[i].Marks[j].P.Y = lg(lines[i].Marks[j].P.Y)
			}
		}
		top := math.Max(1, math.Ceil(lg(maxY)))
		for k := 0.0; k <= top; k++ {
			ytk = append(ytk, tick{k, fmtAxisUS(math.Pow(10, k))})
		}
		p = &plot{x0: 0, x1: float64(maxN), y0: 0, y1: top}
		yTitle = "latency (log)"
	} else {
		yt := niceTicks(maxY, 5)
		for _, v := range yt {
			ytk = append(ytk, tick{v, fmtAxisUS(v)})
		}
		p = &plot{x0: 0, x1: float64(maxN), y0: 0, y1: yt[len(yt)-1]}
	}
	return drawChart(title, "percentile", yTitle, p, xt, ytk, lines, legend, width, height)
}

type tick struct {
	V     float64
	Label string
}

// drawChart lays out one chart: its title and legend (one line per entry,
// each with its series' key) as HTML above the SVG, where they wrap as
// the page's text does instead of being cut at the SVG's edge, then the
// plot area with grid, axes and lines. height is the whole chart's,
// title and legend included, as laid out at width.
func drawChart(title, xTitle, yTitle string, p *plot, xt, yt []tick, lines []lineSeries, legend []string, width, height float64) template.HTML {
	const lineH = 16.0
	if len(p.bands) > 0 {
		legend = append(legend[:len(legend):len(legend)], "target down (shaded)")
	}
	faultLegend := -1
	if len(p.faults) > 0 {
		faultLegend = len(legend)
		name := p.faultLegend
		if name == "" {
			name = "drill fault (dotted line)"
		}
		legend = append(legend[:len(legend):len(legend)], name)
	}
	// The title and legend took 30 px and a line per entry of height.
	svgH := height - 30 - lineH*float64(len(legend)) + 10
	p.left, p.top = 62, 10
	p.w, p.h = width-p.left-34, svgH-p.top-38
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="cbox" style="--inset: %s%%"><div class="ct">%s</div><ul class="lg">`, f1(100*p.left/width), html.EscapeString(title))
	for i, l := range legend {
		key := `<span class="key" style="border-top-color: #999"></span>`
		switch {
		case i == faultLegend:
			key = `<span class="key fault"></span>`
		case len(p.bands) > 0 && i == len(legend)-1-min(len(p.faults), 1):
			key = `<span class="key band"></span>`
		case i < len(lines):
			style := "solid"
			if lines[i].Dashed {
				style = "dashed"
			}
			key = fmt.Sprintf(`<span class="key" style="border-top: 2.5px %s %s"></span>`, style, lines[i].Colour)
		}
		fmt.Fprintf(&b, `<li>%s%s</li>`, key, html.EscapeString(l))
	}
	b.WriteString(`</ul>`)
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`, f1(width), f1(svgH), html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	// Grid and tick labels.
	for _, t := range yt {
		y := p.py(t.V)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(p.left), f1(y), f1(p.left+p.w), f1(y))
		fmt.Fprintf(&b, `<text class="yt" x="%s" y="%s">%s</text>`, f1(p.left-6), f1(y+4), html.EscapeString(t.Label))
	}
	for _, t := range xt {
		x := p.px(t.V)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x), f1(p.top), f1(x), f1(p.top+p.h))
		fmt.Fprintf(&b, `<text class="xt" x="%s" y="%s">%s</text>`, f1(x), f1(p.top+p.h+15), html.EscapeString(t.Label))
	}
	for _, bd := range p.bands {
		x0, x1 := max(bd.X0, p.x0), min(bd.X1, p.x1)
		if x1 <= x0 {
			continue
		}
		fmt.Fprintf(&b, `<rect class="down" x="%s" y="%s" width="%s" height="%s"><title>%s</title></rect>`,
			f1(p.px(x0)), f1(p.top), f1(p.px(x1)-p.px(x0)), f1(p.h), html.EscapeString(bd.Title))
	}
	for _, fl := range p.faults {
		if fl.X < p.x0 || fl.X > p.x1 {
			continue
		}
		x := p.px(fl.X)
		fmt.Fprintf(&b, `<line class="fault" x1="%s" y1="%s" x2="%s" y2="%s"><title>%s</title></line>`,
			f1(x), f1(p.top), f1(x), f1(p.top+p.h), html.EscapeString(fl.Title))
		fmt.Fprintf(&b, `<text class="fl" x="%s" y="%s">%s</text>`, f1(x+3), f1(p.top+11), html.EscapeString(fl.Label))
	}
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(p.left), f1(p.top), f1(p.w), f1(p.h))
	fmt.Fprintf(&b, `<text class="at" x="%s" y="%s">%s</text>`, f1(p.left+p.w/2), f1(svgH-4), html.EscapeString(xTitle))
	fmt.Fprintf(&b, `<text class="at" transform="translate(13 %s) rotate(-90)">%s</text>`, f1(p.top+p.h/2), html.EscapeString(yTitle))
	for _, l := range lines {
		d := pathData(p, l.Points)
		if d == "" {
			continue
		}
		dash := ""
		if l.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.8" stroke-linejoin="round"%s><title>%s</title></path>`, d, l.Colour, dash, html.EscapeString(l.Name))
		for _, m := range l.Marks {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`, f1(p.px(m.P.X)), f1(p.py(m.P.Y)), l.Colour, html.EscapeString(m.Title))
		}
	}
	b.WriteString(`</svg></div>`)
	return template.HTML(b.String())
}

// pathData turns points into an SVG path, starting a new subpath after each
// NaN (a gap). Points falling in one pixel column are thinned to that
// column's first, lowest, highest and last points, so a long run (one
// point per second for hours) draws the same shape, spikes included, with
// a few points per pixel instead of thousands.
func pathData(p *plot, pts []xy) string {
	var b strings.Builder
	pen := false
	last := ""
	emit := func(px, py float64) {
		c := f1(px) + " " + f1(py)
		if pen && c == last {
			return
		}
		if !pen {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("M" + c)
			pen = true
		} else {
			b.WriteString(" L" + c)
		}
		last = c
	}
	// col accumulates the points of one pixel column.
	var col []xy
	flush := func() {
		if len(col) == 0 {
			return
		}
		lo, hi := 0, 0
		for i, c := range col {
			if c.Y > col[hi].Y { // larger y is lower on screen
				hi = i
			}
			if c.Y < col[lo].Y {
				lo = i
			}
		}
		keep := []int{0, lo, hi, len(col) - 1}
		sort.Ints(keep)
		for i, k := range keep {
			if i == 0 || k != keep[i-1] {
				emit(col[k].X, col[k].Y)
			}
		}
		col = col[:0]
	}
	for _, pt := range pts {
		if math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) {
			flush()
			pen = false
			continue
		}
		x, y := p.px(pt.X), p.py(pt.Y)
		if len(col) > 0 && math.Floor(x) != math.Floor(col[0].X) {
			flush()
		}
		col = append(col, xy{x, y})
	}
	flush()
	return b.String()
}

// timeSeriesCharts draws the run's time series as three charts sharing the
// x axis (seconds since start): completions per second, corrected latency
// p50/p99 of each second, and errors per second. Seconds without any
// completion count as zero requests and have no latency (a gap). runEnd
// (the run's length; 0 if unknown) ends the x axis, and the last second,
// when the run ended inside it, is scaled to a per-second rate and said so:
// drawn as a whole second it made a false cliff.
//
// The outages (the target down) are shaded on each chart.
//
// Each fault of a recovery drill is a labelled vertical line on each chart.
func timeSeriesCharts(in []result.Point, runEnd time.Duration, sp span, outs []result.Outage, width float64, faults ...result.FaultResult) []template.HTML {
	if len(in) == 0 {
		return nil
	}
	d := timeSeriesData(in, runEnd)
	first, end := sp.cover(d.first, d.end)
	req, errs, p50, p99 := d.req, d.errs, d.p50, d.p99
	maxReq, maxErr, meanRate := d.maxReq, d.maxErr, d.meanRate
	xt := secondTicks(first, end)
	mk := func(vals []float64, f func(float64) string) []tick {
		var t []tick
		for _, v := range vals {
			t = append(t, tick{v, f(v)})
		}
		return t
	}
	partial := ""
	if d.lastFrac > 0 {
		partial = fmt.Sprintf("; the last second ran %.2f s, its count scaled to a per-second rate", d.lastFrac)
	}
	yr := niceTicks(maxReq, 4)
	ye := niceTicks(maxErr, 3)
	// Latency on a log axis, as HdrHistogram plots it: on a linear one
	// a p50 of 200µs under a p99 of 400ms lies flat on zero.
	lo, hi := math.Inf(1), 0.0
	for _, l := range [][]xy{p50, p99} {
		for _, p := range l {
			if !math.IsNaN(p.Y) {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
			}
		}
	}
	l0, l1, yl := logTicks(lo, hi)
	p50, p99 = logY(p50), logY(p99)
	x1 := end
	bands := downBands(outs, end)
	fls := faultLines(faults)
	return []template.HTML{
		drawChart("Completions per second", "seconds since start", "per second",
			&plot{x0: first, x1: x1, y1: yr[len(yr)-1], bands: bands, faults: fls}, xt, mk(yr, fmtAxisCount),
			[]lineSeries{{Name: "completions/s", Colour: colour(0), Points: req}},
			[]string{fmt.Sprintf("completions/s (mean %s, peak %s)%s", fmtAxisCount(meanRate), fmtAxisCount(maxReq), partial)}, width, 190),
		drawChart("Latency per second (from intended send)", "seconds since start", "latency (log)",
			&plot{x0: first, x1: x1, y0: l0, y1: l1, bands: bands, faults: fls}, xt, yl,
			[]lineSeries{{Name: "p50", Colour: colour(2), Points: p50}, {Name: "p99", Colour: colour(3), Points: p99}},
			[]string{"p50 of each second", "p99 of each second"}, width, 220),
		drawChart("Errors per second", "seconds since start", "per second",
			&plot{x0: first, x1: x1, y1: ye[len(ye)-1], bands: bands, faults: fls}, xt, mk(ye, fmtAxisCount),
			[]lineSeries{{Name: "errors/s", Colour: colour(1), Points: errs}},
			[]string{fmt.Sprintf("errors/s (peak %s)%s", fmtAxisCount(maxErr), partial)}, width, 170),
	}
}

// span is the x range, in seconds since the start, every per-second
// chart of a run shares (runSpan), so their axes line up; the zero span
// leaves each chart its own data's range.
type span struct{ first, end float64 }

// cover is the range of data from first to end widened to sp.
func (sp span) cover(first, end float64) (float64, float64) {
	if sp == (span{}) {
		return first, end
	}
	return math.Min(first, sp.first), math.Max(end, sp.end)
}

// runSpan is the time the run's per-second charts cover: from the start
// (or the earliest point before it) to the run's end, or the latest point
// of its time series, players or server samples past it.
func runSpan(r *result.Run) span {
	sp := span{0, r.DurationNS.Seconds()}
	if len(r.TimeSeries) > 0 {
		d := timeSeriesData(r.TimeSeries, r.DurationNS)
		sp.first, sp.end = math.Min(sp.first, d.first), math.Max(sp.end, d.end)
	}
	for _, p := range r.Players {
		sp.first, sp.end = math.Min(sp.first, float64(p.Second)), math.Max(sp.end, float64(p.Second+1))
	}
	if tp := r.TargetProcess; tp != nil {
		for _, s := range tp.Samples {
			sp.first, sp.end = math.Min(sp.first, s.OffsetNS.Seconds()), math.Max(sp.end, s.OffsetNS.Seconds())
		}
	}
	return sp
}

// secondTicks are the x ticks of a chart over seconds: round steps from
// first to end, about eight.
func secondTicks(first, end float64) []tick {
	xs := niceStep(end-first, 8)
	var xt []tick
	for i := 0; i <= 100; i++ {
		v := first + float64(i)*xs
		if v > end+1e-9 {
			break
		}
		xt = append(xt, tick{v, strconv.FormatFloat(v, 'f', -1, 64) + "s"})
	}
	return xt
}

// logTicks is a log latency axis from lo to hi µs (below 1 µs counts as
// 1): its range in log10 units, whole decades around the data, and a tick
// per decade, with the 2 and 5 of each when it spans fewer than three.
func logTicks(lo, hi float64) (y0, y1 float64, ticks []tick) {
	lg := func(v float64) float64 { return math.Log10(math.Max(v, 1)) }
	if !(hi > 0) || math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	y0, y1 = math.Floor(lg(lo)), math.Ceil(lg(hi))
	if y1 <= y0 {
		y1 = y0 + 1
	}
	for k := y0; k <= y1; k++ {
		ticks = append(ticks, tick{k, fmtAxisUS(math.Pow(10, k))})
		if y1-y0 < 3 && k < y1 {
			for _, m := range []float64{2, 5} {
				ticks = append(ticks, tick{k + math.Log10(m), fmtAxisUS(m * math.Pow(10, k))})
			}
		}
	}
	return y0, y1, ticks
}

// logY is pts with each y replaced by its log10 (below 1 drawn at 1; a
// NaN, a gap, stays one).
func logY(pts []xy) []xy {
	out := make([]xy, len(pts))
	for i, p := range pts {
		out[i] = xy{p.X, math.Log10(math.Max(p.Y, 1))}
		if math.IsNaN(p.Y) {
			out[i].Y = math.NaN()
		}
	}
	return out
}

// tsData is the time series laid out for charts.
type tsData struct {
	first, end                       float64 // x range in seconds
	req, errs, p50, p99              []xy
	maxReq, maxErr, maxLat, meanRate float64
	// lastFrac is the share of its second the last point covers when the
	// run ended inside it (0: a whole second, or unknown).
	lastFrac float64
}

// timeSeriesData sorts the points (a copy) by second and turns them into
// chart lines: a point per recorded second at its middle, and for each run
// of missing seconds two points of zero rate and a break in the latency
// lines.
func timeSeriesData(in []result.Point, runEnd time.Duration) tsData {
	ts := append([]result.Point(nil), in...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Second < ts[j].Second })
	first := math.Min(float64(ts[0].Second), 0)
	last := float64(ts[len(ts)-1].Second)
	// The run ended inside its last second: that second's counts cover
	// only frac of it. Very short tails (under a tenth) are left as they
	// are rather than scaled tenfold and more.
	frac := 0.0
	if end := runEnd.Seconds(); end > last && end < last+1 {
		if f := end - last; f >= 0.1 {
			frac = f
		}
	}
	var req, errs, p50, p99 []xy
	maxReq, maxErr, maxLat := 0.0, 0.0, 0.0
	// A run of seconds without completions is drawn as zero rate and no
	// latency, with two points per gap (not one per second: the input is
	// untrusted and its seconds may be far apart).
	gap := func(from, to float64) { // seconds from+1 … to-1 are missing
		if to-from <= 1 {
			return
		}
		req = append(req, xy{from + 1.5, 0}, xy{to - 0.5, 0})
		errs = append(errs, xy{from + 1.5, 0}, xy{to - 0.5, 0})
		p50 = append(p50, xy{from + 1.5, math.NaN()})
		p99 = append(p99, xy{from + 1.5, math.NaN()})
	}
	gap(first-1, float64(ts[0].Second))
	for i, p := range ts {
		sec := float64(p.Second)
		if i > 0 {
			gap(float64(ts[i-1].Second), sec)
		}
		x := sec + 0.5
		nreq, nerr := float64(p.Requests), float64(p.Errors)
		if frac > 0 && i == len(ts)-1 {
			x = sec + frac/2
			nreq, nerr = nreq/frac, nerr/frac
		}
		req = append(req, xy{x, nreq})
		errs = append(errs, xy{x, nerr})
		maxReq = math.Max(maxReq, nreq)
		maxErr = math.Max(maxErr, nerr)
		if p.Requests-p.Errors > 0 && p.Hist != "" {
			p50 = append(p50, xy{x, float64(p.P50US)})
			p99 = append(p99, xy{x, float64(p.P99US)})
			maxLat = math.Max(maxLat, float64(p.P99US))
		} else {
			p50 = append(p50, xy{x, math.NaN()})
			p99 = append(p99, xy{x, math.NaN()})
		}
	}
	var total float64
	for _, p := range ts {
		total += float64(p.Requests)
	}
	span := last - float64(ts[0].Second) + 1 // gaps count as seconds of zero
	end := last + 1
	if frac > 0 {
		span, end = span-1+frac, last+frac
	}
	return tsData{first: first, end: end, req: req, errs: errs, p50: p50, p99: p99,
		maxReq: maxReq, maxErr: maxErr, maxLat: maxLat, lastFrac: frac,
		meanRate: total / span}
}

// targetCharts draws the server process's samples (TargetProcess) as two
// charts over the run: its CPU, in % of one core over each interval
// between two samples, and its resident memory. A restart breaks both
// lines; the outages are shaded as on the time-series charts.
func targetCharts(tp *result.TargetProcess, runEnd time.Duration, sp span, outs []result.Outage, width float64) []template.HTML {
	if tp == nil || len(tp.Samples) == 0 {
		return nil
	}
	var cpu, rss []xy
	maxCPU, maxRSS, end := 0.0, 0.0, runEnd.Seconds()
	for i, s := range tp.Samples {
		x := s.OffsetNS.Seconds()
		end = math.Max(end, x)
		mib := float64(s.RSSBytes) / (1 << 20)
		if s.Restarted {
			cpu = append(cpu, xy{x, math.NaN()})
			rss = append(rss, xy{x, math.NaN()})
		}
		rss = append(rss, xy{x, mib})
		maxRSS = math.Max(maxRSS, mib)
		if i == 0 || s.Restarted {
			continue
		}
		p := tp.Samples[i-1]
		dt := (s.OffsetNS - p.OffsetNS).Seconds()
		if dt <= 0 {
			continue
		}
		pct := (s.UserNS + s.SystemNS - p.UserNS - p.SystemNS).Seconds() / dt * 100
		cpu = append(cpu, xy{x, pct})
		maxCPU = math.Max(maxCPU, pct)
	}
	first, end := sp.cover(math.Min(tp.Samples[0].OffsetNS.Seconds(), 0), end)
	xt := secondTicks(first, end)
	mk := func(vals []float64, unit string) []tick {
		var t []tick
		for _, v := range vals {
			t = append(t, tick{v, strconv.FormatFloat(v, 'f', -1, 64) + unit})
		}
		return t
	}
	yc, yr := niceTicks(maxCPU, 4), niceTicks(maxRSS, 4)
	bands := downBands(outs, end)
	return []template.HTML{
		drawChart("Server CPU", "seconds since start", "% of a core",
			&plot{x0: first, x1: end, y1: yc[len(yc)-1], bands: bands}, xt, mk(yc, "%"),
			[]lineSeries{{Name: "CPU (user+system), % of one core", Colour: colour(4), Points: cpu}},
			[]string{fmt.Sprintf("CPU (user+system) between two samples, %% of one core (peak %s%%)", strconv.FormatFloat(maxCPU, 'f', 1, 64))}, width, 190),
		drawChart("Server memory (RSS)", "seconds since start", "MiB",
			&plot{x0: first, x1: end, y1: yr[len(yr)-1], bands: bands}, xt, mk(yr, " MiB"),
			[]lineSeries{{Name: "resident memory", Colour: colour(5), Points: rss}},
			[]string{fmt.Sprintf("resident memory (peak %s)", words.MiB(tp.PeakRSSBytes))}, width, 190),
	}
}
