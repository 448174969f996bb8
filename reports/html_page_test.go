package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// TestThresholdCardFollowsVerdict: the "N / M passed" card is coloured as
// the thresholds were judged, so it never reads redder or greener than the
// banner: amber beside INCONCLUSIVE (only harness-bound misses), red
// beside a breach, green when all passed.
func TestThresholdCardFollowsVerdict(t *testing.T) {
	tests := []struct {
		name          string
		run           *result.Run
		status, class string
		value, label  string
	}{
		{"pass", passingRun(t), result.StatusPass, "good", "2 / 2 passed", "thresholds"},
		{"breach", sampleRun(t), result.StatusFail, "bad", "1 / 2 passed", "thresholds"},
		{"harness-bound only", laggedRun(t), result.StatusInconclusive, "warn", "1 / 2 passed", "thresholds (1 harness-bound)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if hl := tt.run.Headline(); hl.Status != tt.status {
				t.Fatalf("fixture's headline %+v, want status %s", hl, tt.status)
			}
			v, err := buildRun(tt.run)
			if err != nil {
				t.Fatal(err)
			}
			var got *card
			for i := range v.Cards {
				if strings.HasPrefix(v.Cards[i].Label, "thresholds") {
					got = &v.Cards[i]
				}
			}
			if got == nil {
				t.Fatalf("no thresholds card in %+v", v.Cards)
			}
			if got.Class != tt.class || got.Value != tt.value || got.Label != tt.label {
				t.Errorf("card %+v, want class %q value %q label %q beside a %s banner", *got, tt.class, tt.value, tt.label, tt.status)
			}
			// The side-by-side matrix's cell says it alike.
			m, err := buildRunMatrix([]*htmlDoc{{Label: "a", Run: v}, {Label: "b", Run: v}})
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range m.Rows {
				if row.Name == "thresholds" && (row.Cells[0].Class != tt.class || row.Cells[0].Text != strings.TrimSuffix(tt.value, " passed")) {
					t.Errorf("matrix cell %+v, want class %q", row.Cells[0], tt.class)
				}
			}
		})
	}
}

var (
	headRE   = regexp.MustCompile(`(?s)^(.*)<title>.*?</title>(.*</head>)`)
	bannerRE = regexp.MustCompile(`<p class="status ([a-z_]*)">([^<]*)</p>`)
)

// TestCapacityHTMLSharesRunShell: the capacity page is laid out as the run
// report is: the same head (the one stylesheet, the inline icon), the
// same header, main and footer, the same banner for its headline.
func TestCapacityHTMLSharesRunShell(t *testing.T) {
	var run, capPage bytes.Buffer
	if err := WriteHTML(&run, HTMLOptions{}, passingRun(t)); err != nil {
		t.Fatal(err)
	}
	c := capacityFixture()
	if err := WriteCapacityHTML(&capPage, c); err != nil {
		t.Fatal(err)
	}
	rh, ch := headRE.FindStringSubmatch(run.String()), headRE.FindStringSubmatch(capPage.String())
	if rh == nil || ch == nil {
		t.Fatalf("no head with a title: run %v, capacity %v", rh != nil, ch != nil)
	}
	if rh[1] != ch[1] || rh[2] != ch[2] {
		t.Errorf("the capacity page's head differs from the run report's (title aside)")
	}
	if !strings.Contains(ch[2], htmlCSS) {
		t.Errorf("the capacity page does not embed html.css")
	}
	for _, part := range []string{`<header class="top">`, "<main>", "</main>\n<footer>"} {
		if !strings.Contains(capPage.String(), part) {
			t.Errorf("the capacity page has no %q", part)
		}
	}
	m := bannerRE.FindStringSubmatch(capPage.String())
	hl := c.Headline()
	if m == nil || m[1] != hl.Status || m[2] != strings.ReplaceAll(strings.ReplaceAll(hl.Text, "<", "&lt;"), "'", "&#39;") {
		t.Errorf("capacity banner %q, want the run report's banner of %+v", m, hl)
	}
}

var legendRE = regexp.MustCompile(`<ul class="lg">(.*?)</ul><svg `)
var liRE = regexp.MustCompile(`<li><span class="key[^"]*"( style="[^"]*")?></span>([^<]*)</li>`)

// TestChartLegendWhole: a chart's legend is HTML above its SVG, each entry
// the whole label (an SVG text at a fixed size was cut at the chart's
// edge: "… n=13" for n=138), and the SVG draws no legend text of its own.
func TestChartLegendWhole(t *testing.T) {
	h := result.NewLatencyHistogram()
	for i := range 138 {
		if err := h.RecordValue(int64(100_000 + 1000*i)); err != nil {
			t.Fatal(err)
		}
	}
	chart := string(percentileChart("Step create_room", []histSeries{
		{Name: "corrected", Colour: colour(0), Hist: h},
		{Name: "uncorrected", Colour: colour(0), Dashed: true, Hist: h},
	}, 470, 300))
	m := legendRE.FindStringSubmatch(chart)
	if m == nil {
		t.Fatalf("no HTML legend before the SVG: %.300s", chart)
	}
	items := liRE.FindAllStringSubmatch(m[1], -1)
	figures := fmt.Sprintf("p50 %s · p99 %s · max %s · n=138", words.US(h.ValueAtPercentile(50)), words.US(h.ValueAtPercentile(99)), words.US(h.Max()))
	want := []string{"corrected: " + figures, "uncorrected: " + figures}
	if len(items) != len(want) {
		t.Fatalf("legend %q, want %d entries", m[1], len(want))
	}
	for i, it := range items {
		if it[2] != want[i] {
			t.Errorf("legend entry %d %q, want %q", i, it[2], want[i])
		}
	}
	if !strings.Contains(items[1][1], "dashed") || strings.Contains(items[0][1], "dashed") {
		t.Errorf("the keys do not say which line is dashed: %q, %q", items[0][1], items[1][1])
	}
	if strings.Contains(chart, `class="lg" x=`) {
		t.Errorf("the SVG still draws legend text")
	}
}

// secondsRun is a run of 7.2 s whose completions stop after second 4 (the
// rest is the grace: sessions waiting, nothing answered) while its players
// are counted to second 6: p50 200µs, p99 400ms each second.
func secondsRun(t *testing.T) *result.Run {
	t.Helper()
	r := result.NewRun()
	r.DurationNS = 7200 * time.Millisecond
	for sec := range int64(5) {
		h := result.NewSecondHistogram()
		for i := range 100 {
			v := int64(200)
			if i >= 98 {
				v = 400_000
			}
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		p, err := result.NewPoint(sec, 100, 0, h)
		if err != nil {
			t.Fatal(err)
		}
		r.TimeSeries = append(r.TimeSeries, p)
	}
	for sec := range int64(7) {
		r.Players = append(r.Players, result.PlayersPoint{Second: sec, InRoom: 4, InGame: 4})
	}
	return r
}

var (
	xTickRE = regexp.MustCompile(`<text class="xt" x="([0-9.]+)" y="[0-9.]+">([^<]*)</text>`)
)

// TestPerSecondChartsShareRunSpan: every per-second chart of a run spans
// the run's time (the players chart ran to 7 s while the others stopped
// at 5 s, where the completions did), with the same ticks at the same
// places.
func TestPerSecondChartsShareRunSpan(t *testing.T) {
	v, err := buildRun(secondsRun(t))
	if err != nil {
		t.Fatal(err)
	}
	charts := append(append([]template.HTML(nil), v.TimeCharts...), v.Lobby.Chart)
	if len(charts) != 4 {
		t.Fatalf("%d per-second charts, want 3 time series and the players'", len(charts))
	}
	var want string
	for i, c := range charts {
		var got []string
		for _, m := range xTickRE.FindAllStringSubmatch(string(c), -1) {
			got = append(got, m[2]+"@"+m[1])
		}
		ticks := strings.Join(got, " ")
		if i == 0 {
			want = ticks
			if !strings.HasSuffix(ticks, "7s@"+xTickRE.FindAllStringSubmatch(string(c), -1)[len(got)-1][1]) {
				t.Errorf("chart 0's axis %s does not reach the run's 7.2 s", ticks)
			}
			continue
		}
		if ticks != want {
			t.Errorf("chart %d's x axis %s, want chart 0's %s", i, ticks, want)
		}
	}
}

var (
	p50PathRE = regexp.MustCompile(`<path d="([^"]*)"[^>]*><title>p50</title>`)
	yTickRE   = regexp.MustCompile(`<text class="yt" x="[0-9.]+" y="([0-9.]+)">([^<]*)</text>`)
)

// TestLatencyPerSecondShowsP50: on the per-second latency chart the p50
// line (200µs under a p99 of 400ms) is drawn where the axis says 200µs,
// between its 100µs and 1ms ticks: the axis is logarithmic, as
// HdrHistogram's plots are. On the old linear axis (0, 100ms, … 400ms) it
// lay flat on 0.
func TestLatencyPerSecondShowsP50(t *testing.T) {
	v, err := buildRun(secondsRun(t))
	if err != nil {
		t.Fatal(err)
	}
	c := string(v.TimeCharts[1])
	if !strings.Contains(c, "Latency per second") {
		t.Fatalf("chart 1 is not the per-second latency: %.200s", c)
	}
	tickY := map[string]float64{}
	for _, m := range yTickRE.FindAllStringSubmatch(c, -1) {
		y, _ := strconv.ParseFloat(m[1], 64)
		tickY[m[2]] = y - 4 // the label sits 4 below its grid line
	}
	lo, okLo := tickY["100µs"]
	hi, okHi := tickY["1ms"]
	m := p50PathRE.FindStringSubmatch(c)
	if !okLo || !okHi || m == nil {
		t.Fatalf("no 100µs and 1ms ticks (%v) or no p50 line (%v)", tickY, m != nil)
	}
	coords := strings.Fields(strings.NewReplacer("M", " ", "L", " ").Replace(m[1]))
	for i := 1; i < len(coords); i += 2 {
		y, err := strconv.ParseFloat(coords[i], 64)
		if err != nil {
			t.Fatalf("path %q: %v", m[1], err)
		}
		if y >= lo || y <= hi {
			t.Errorf("p50 (200µs) at y=%.1f, not between the 100µs tick (y=%.1f) and the 1ms tick (y=%.1f)", y, lo, hi)
		}
	}
}
