package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// richRun is a longer run with realistic shapes: three steps with
// log-normal latencies and a tail, 30 seconds of time series with a
// latency spike and an error burst, and violations. Deterministic.
func richRun(t testing.TB) *result.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	r := result.NewRun()
	r.Scenario = "scenarios/join-storm.yaml"
	r.Target = "127.0.0.1:7777"
	r.StartedAt = fixedStart
	r.DurationNS = 30 * time.Second
	type stepSpec struct {
		name     string
		medianUS float64
		n        int
		fails    map[string]int64
	}
	specs := []stepSpec{
		{"list_rooms", 180, 20000, map[string]int64{}},
		{"create_room", 450, 3000, map[string]int64{result.ReasonTimeout: 12}},
		{"join", 900, 9000, map[string]int64{result.ReasonTimeout: 30, result.ReasonJoinDeny: 41}},
	}
	ts := make([]struct {
		req, errs int64
		vals      []int64
	}, 30)
	for _, sp := range specs {
		lat, unc := result.NewLatencyHistogram(), result.NewLatencyHistogram()
		for i := 0; i < sp.n; i++ {
			v := sp.medianUS * math.Exp(rng.NormFloat64()*0.45)
			sec := rng.IntN(30)
			if sec >= 17 && sec <= 19 { // a stall: queueing delay
				v *= 6
			}
			if rng.IntN(1000) == 0 {
				v *= 40
			}
			u := v * (0.7 + 0.2*rng.Float64())
			if err := lat.RecordValue(int64(v)); err != nil {
				t.Fatal(err)
			}
			if err := unc.RecordValue(int64(u)); err != nil {
				t.Fatal(err)
			}
			ts[sec].req++
			ts[sec].vals = append(ts[sec].vals, int64(v))
		}
		var fails int64
		for k, n := range sp.fails {
			fails += n
			r.Totals.FailuresByReason[k] += n
			for j := int64(0); j < n; j++ {
				sec := 17 + rng.IntN(4)
				ts[sec].req++
				ts[sec].errs++
			}
		}
		l, err := result.NewLatency(lat)
		if err != nil {
			t.Fatal(err)
		}
		u, err := result.NewLatency(unc)
		if err != nil {
			t.Fatal(err)
		}
		s := result.Series{Name: sp.name, Requests: int64(sp.n) + fails, Successes: int64(sp.n), Failures: fails,
			FailuresByReason: sp.fails, Retries: fails / 2, Latency: l, Uncorrected: u}
		r.Steps = append(r.Steps, s)
		r.Totals.Requests += s.Requests
		r.Totals.Successes += s.Successes
		r.Totals.Failures += s.Failures
		r.Totals.Retries += s.Retries
	}
	for sec, p := range ts {
		r.TimeSeries = append(r.TimeSeries, pointOf(t, int64(sec), p.req, p.errs, p.vals...))
	}
	r.Messages = []result.Series{
		{Name: "LIST_ROOMS→ROOM_LIST", Requests: 20000, Successes: 20000, FailuresByReason: map[string]int64{},
			Latency: r.Steps[0].Uncorrected, Uncorrected: r.Steps[0].Uncorrected},
		{Name: "JOIN_ROOM→JOIN_SUCCESS", Requests: 9000, Successes: 9000, FailuresByReason: map[string]int64{},
			Latency: r.Steps[2].Uncorrected, Uncorrected: r.Steps[2].Uncorrected},
	}
	r.Totals.Violations = 7
	r.Totals.SessionsStarted, r.Totals.SessionsFinished = 3000, 2987
	r.Violations = []result.Violation{
		{Rule: "U-CRC", Count: 5, Samples: []result.ViolationSample{
			{OffsetNS: 17*time.Second + 250*time.Millisecond, Packet: "4c42010500000000000000000000000000000000aabbccdd", Request: "4c420104000000000000", Detail: "crc 0xaabbccdd != 0x1c2d3e4f"},
			{OffsetNS: 18 * time.Second, Packet: "4c420105ffff"},
		}},
		{Rule: "U-ROOMLIST-COUNT", Count: 2, Samples: []result.ViolationSample{
			{OffsetNS: 3 * time.Second, Packet: "4c4201060300476f626c696e2047616d6500", Request: "4c420104", Detail: "count 3 but 1 entry"},
		}},
	}
	r.RateLimits = []result.RateLimitFinding{{Source: "127.0.0.2", ObservedLimitPerSec: 200, Sent: 3000, Accepted: 2000, Limited: 1000,
		OtherSourcesP99BeforeUS: 1500, OtherSourcesP99AfterUS: 1650, OtherSourcesErrors: 0, Note: "limit per source address"}}
	r.Malformed = []result.MalformedFinding{
		{Kind: "bad_crc", Sent: 100, LivenessChecks: 100, LivenessKept: 100},
		{Kind: "truncated", Sent: 100, UnexpectedReplies: 3, LivenessChecks: 100, LivenessKept: 99},
	}
	r.Thresholds = []result.ThresholdResult{
		{Name: "join.p99 < 20ms", Metric: "p99", Step: "join", Op: "<", Limit: 0.02, Observed: float64(r.Steps[2].Latency.P99US) / 1e6, Pass: true},
		{Name: "errors.rate < 0.5%", Metric: "errors.rate", Op: "<", Limit: 0.005, Observed: r.Totals.ErrorRate(), Pass: false},
		{Name: "violations == 0", Metric: "violations", Op: "==", Limit: 0, Observed: 7, Pass: false},
	}
	return r
}

// otherConform is a second implementation's results over an overlapping
// set of cases, for the matrix.
func otherConform() *result.Conform {
	c := sampleConform()
	c.Target = "10.0.0.9:7777"
	c.Protocol = "udplobby"
	c.Cases = append([]result.Case(nil), c.Cases...)
	c.Cases[1].Verdict, c.Cases[1].Actual = result.VerdictPass, "no reply"
	c.Cases[0].Verdict, c.Cases[0].Actual = result.VerdictFail, "Error 7"
	c.Cases = append(c.Cases[:4], result.Case{ID: "udp-lobby/9/1", Section: "9", Description: "Only here", Level: result.LevelMust, Verdict: result.VerdictPass})
	return c
}

func htmlOf(t *testing.T, opts HTMLOptions, docs ...result.Doc) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, opts, docs...); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func htmlCases(t *testing.T) map[string][]byte {
	run, rich := sampleRun(t), richRun(t)
	empty := result.NewRun()
	empty.StartedAt = fixedStart
	worse := sampleRun(t)
	worse.Target = "127.0.0.1:8888"
	worse.Steps[1].Latency = latencyOf(t, ramp(1000, 1300, 45)...)
	return map[string][]byte{
		"run.html":           htmlOf(t, HTMLOptions{}, run),
		"run_rich.html":      htmlOf(t, HTMLOptions{Title: "join storm"}, rich),
		"run_empty.html":     htmlOf(t, HTMLOptions{}, empty),
		"conform.html":       htmlOf(t, HTMLOptions{}, sampleConform()),
		"conform_empty.html": htmlOf(t, HTMLOptions{}, result.NewConform()),
		"matrix.html": htmlOf(t, HTMLOptions{Title: "lobby implementations", Labels: []string{"reference", "", "lobbyd"}},
			sampleConform(), otherConform(), run, worse),
	}
}

func TestHTMLGolden(t *testing.T) {
	for name, got := range htmlCases(t) {
		t.Run(name, func(t *testing.T) { checkHTMLGolden(t, name, got) })
	}
}

// TestHTMLSelfContained checks nothing in a page can make a browser fetch
// or run anything, and that html/template never had to censor a value.
//
// The one link allowed is the empty inline icon, and every page has it:
// without it a browser asks the page's server for /favicon.ico (a 404 on
// the live page).
func TestHTMLSelfContained(t *testing.T) {
	forbidden := []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "src=", "@import", "url(", "http://", "https://", "ZgotmplZ"}
	pages := htmlCases(t)
	caps, err := filepath.Glob("testdata/capacity*.html")
	if err != nil || len(caps) == 0 {
		t.Fatalf("no capacity pages in testdata (%v)", err)
	}
	for _, f := range caps {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(f)] = b
	}
	const icon = `<link rel="icon" href="data:,">`
	for name, page := range pages {
		if bytes.Count(page, []byte(icon)) != 1 {
			t.Errorf("%s: want one %s in its head, so no icon is fetched", name, icon)
		}
		page = bytes.Replace(page, []byte(icon), nil, 1)
		for _, f := range forbidden {
			if i := bytes.Index(bytes.ToLower(page), []byte(f)); i >= 0 {
				t.Errorf("%s contains %q near %q", name, f, page[max(i-40, 0):min(i+40, len(page))])
			}
		}
	}
}

var svgRE = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// TestHTMLSVGWellFormed parses every inline chart as XML and checks the
// page has the charts its documents call for.
func TestHTMLSVGWellFormed(t *testing.T) {
	wantCharts := map[string]int{
		"run.html":           1 + 2 + 3 + 1, // combined, 2 steps, 3 time series, messages
		"run_rich.html":      1 + 3 + 3 + 1,
		"run_empty.html":     0,
		"conform.html":       0,
		"conform_empty.html": 0,
		"matrix.html":        2 /* matrix per step */ + 2*7,
	}
	for name, page := range htmlCases(t) {
		svgs := svgRE.FindAll(page, -1)
		if len(svgs) != wantCharts[name] {
			t.Errorf("%s: %d charts, want %d", name, len(svgs), wantCharts[name])
		}
		for i, s := range svgs {
			d := xml.NewDecoder(bytes.NewReader(s))
			d.Strict = true
			for {
				_, err := d.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Errorf("%s chart %d is not well-formed XML: %v", name, i, err)
					break
				}
			}
		}
	}
}

var hrefRE = regexp.MustCompile(`href="#([^"]+)"`)

// TestHTMLLinksResolve checks every in-page link (matrix cells, contents)
// points at an element of the page.
func TestHTMLLinksResolve(t *testing.T) {
	for name, page := range htmlCases(t) {
		links := hrefRE.FindAllSubmatch(page, -1)
		for _, l := range links {
			if !bytes.Contains(page, []byte(`id="`+string(l[1])+`"`)) {
				t.Errorf("%s: link #%s has no target", name, l[1])
			}
		}
		if name == "matrix.html" && len(links) < 10 {
			t.Errorf("matrix.html has only %d links", len(links))
		}
	}
}

func TestHTMLEscapesUserText(t *testing.T) {
	r := sampleRun(t)
	r.Scenario = `<script>alert("s")</script>`
	r.Steps[0].Name = `<b onmouseover="x">join</b>`
	r.Violations[0].Samples[0].Detail = `</pre><script>`
	c := sampleConform()
	c.Cases[0].Actual = `<img src=x>`
	c.Notes = []string{`<u>run note</u>`}
	c.Cases[0].Notes = []string{`<u>case note</u>`}
	c.Cases[0].Rule = `<u>R</u>`
	c.Cases[0].Wire[0].Note, c.Cases[0].Wire[0].Local = `<u>wire note</u>`, `<u>addr</u>`
	page := string(htmlOf(t, HTMLOptions{Title: `T<i>`, Labels: []string{`<L>`}}, r, c))
	for _, bad := range []string{`<script`, `<b onmouseover`, `<img`, `<i>`, `<L>`, `<u>`} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains unescaped %q", bad)
		}
	}
	for _, good := range []string{`&lt;b onmouseover=`, `&lt;script&gt;`, `&lt;img src=x&gt;`} {
		if !strings.Contains(page, good) {
			t.Errorf("page lacks escaped %q", good)
		}
	}
}

// TestPercentileCurve checks the plotted curve is the histogram's own
// percentile function: exact at every sample point, non-decreasing, and
// reaching the maximum on its last plateau.
func TestPercentileCurve(t *testing.T) {
	tests := []struct {
		name  string
		vals  []int64
		nines int
	}{
		{"one value", []int64{500}, 2},
		{"45 values", ramp(1000, 1000, 45), 2},
		{"1000 values", ramp(100, 7, 1000), 4},
		{"tail", append(ramp(100, 1, 9999), 250_000), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := histOf(t, tt.vals...)
			if got := ninesMax(h.TotalCount()); got != tt.nines {
				t.Fatalf("ninesMax(%d) = %d, want %d", h.TotalCount(), got, tt.nines)
			}
			pts := percentileCurve(h, tt.nines)
			if len(pts) != int(float64(tt.nines)/ninesStep)+1 {
				t.Fatalf("%d points", len(pts))
			}
			for i, p := range pts {
				q := 100 * (1 - math.Pow(10, -p.X))
				if want := h.ValueAtPercentile(q); int64(p.Y) != want {
					t.Errorf("x=%.3f (p%.4f): %v, want %d", p.X, q, p.Y, want)
				}
				if i > 0 && p.Y < pts[i-1].Y {
					t.Errorf("curve decreases at x=%.3f", p.X)
				}
			}
			if last := pts[len(pts)-1].Y; int64(last) != h.Max() {
				t.Errorf("curve ends at %v, want max %d", last, h.Max())
			}
			if math.Abs(ninesX(99)-2) > 1e-12 || math.Abs(ninesX(99.9)-3) > 1e-9 {
				t.Errorf("ninesX(99) = %v, ninesX(99.9) = %v", ninesX(99), ninesX(99.9))
			}
		})
	}
}

func TestNineLabels(t *testing.T) {
	want := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}
	for n, w := range want {
		if got := nineLabel(n); got != w {
			t.Errorf("nineLabel(%d) = %q, want %q", n, got, w)
		}
	}
}

func TestAxisFormats(t *testing.T) {
	tests := []struct {
		f    func(float64) string
		in   float64
		want string
	}{
		{fmtAxisUS, 0, "0"},
		{fmtAxisUS, 250, "250µs"},
		{fmtAxisUS, 1500, "1.5ms"},
		{fmtAxisUS, 20000, "20ms"},
		{fmtAxisUS, 2_500_000, "2.5s"},
		{fmtAxisCount, 950, "950"},
		{fmtAxisCount, 1200, "1.2k"},
		{fmtAxisCount, 3_500_000, "3.5M"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%v → %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		max  float64
		n    int
		last float64
	}{{0, 4, 1}, {7, 4, 8}, {95, 5, 100}, {1234, 4, 1500}, {0.3, 3, 0.3}} {
		ticks := niceTicks(tt.max, tt.n)
		if got := ticks[len(ticks)-1]; math.Abs(got-tt.last) > 1e-9 || ticks[0] != 0 {
			t.Errorf("niceTicks(%v, %d) = %v, want 0 … %v", tt.max, tt.n, ticks, tt.last)
		}
	}
}

func TestHexDump(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"4c42", "0000  4c 42                                             |LB|"},
		{"000102030405060708090a0b0c0d0e0f41", "0000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n" +
			"0010  41                                                |A|"},
		{"zz", "zz  (not valid hex)"},
		{"abc", "abc  (not valid hex)"},
	}
	for _, tt := range tests {
		if got := hexDump(tt.in); got != tt.want {
			t.Errorf("hexDump(%q) =\n%q\nwant\n%q", tt.in, got, tt.want)
		}
	}
}

func TestWriteHTMLErrors(t *testing.T) {
	bad := sampleRun(t)
	bad.Steps[0].Latency.Hist = "not base64!"
	tests := []struct {
		name string
		docs []result.Doc
		want string
	}{
		{"none", nil, "no documents"},
		{"nil run", []result.Doc{(*result.Run)(nil)}, "nil run"},
		{"nil conform", []result.Doc{(*result.Conform)(nil)}, "nil conform"},
		{"nil", []result.Doc{nil}, "document 0 is nil"},
		{"bad histogram", []result.Doc{bad}, "list_rooms"},
		{"bad histogram in matrix", []result.Doc{sampleRun(t), bad}, "list_rooms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteHTML(io.Discard, HTMLOptions{}, tt.docs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func BenchmarkWriteHTMLRich(b *testing.B) {
	r := richRun(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteHTML(io.Discard, HTMLOptions{}, r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTimeSeriesData checks the per-second lines: missing seconds become
// zero rate and a latency gap, input order does not matter, and far-apart
// seconds (untrusted input) cost two points, not one per second.
func TestTimeSeriesData(t *testing.T) {
	pts := []result.Point{pointOf(t, 3, 10, 1, 500), pointOf(t, 0, 10, 0, 400)} // unsorted, seconds 1-2 missing
	d := timeSeriesData(pts, 0)
	wantReq := []xy{{0.5, 10}, {1.5, 0}, {2.5, 0}, {3.5, 10}}
	if len(d.req) != len(wantReq) {
		t.Fatalf("req = %v, want %v", d.req, wantReq)
	}
	for i, p := range wantReq {
		if d.req[i] != p {
			t.Errorf("req[%d] = %v, want %v", i, d.req[i], p)
		}
	}
	if !math.IsNaN(d.p99[1].Y) || d.p99[0].Y != float64(pts[1].P99US) || d.p99[2].Y != float64(pts[0].P99US) {
		t.Errorf("p99 = %v, want %d, gap, %d", d.p99, pts[1].P99US, pts[0].P99US)
	}
	if d.meanRate != 5 || d.maxReq != 10 || d.maxErr != 1 || d.first != 0 || d.end != 4 {
		t.Errorf("mean %v max %v/%v range %v-%v", d.meanRate, d.maxReq, d.maxErr, d.first, d.end)
	}
	// Starting late: zero from 0 up to the first second.
	if d := timeSeriesData([]result.Point{{Second: 5, Requests: 2}}, 0); len(d.req) != 3 || d.req[0] != (xy{0.5, 0}) || d.req[1] != (xy{4.5, 0}) {
		t.Errorf("late start: %v", d.req)
	}
	// Far-apart seconds must not be drawn second by second (a 2^40-point
	// series would never finish): the point counts show it, not a timer.
	far := []result.Point{{Second: -3, Requests: 1}, {Second: 1 << 40, Requests: 1}, {Second: math.MaxInt64 - 1, Requests: 1}}
	if d := timeSeriesData(far, 0); len(d.req) > 10 {
		t.Errorf("far-apart seconds gave %d points", len(d.req))
	}
	if charts := timeSeriesCharts(far, 0, span{}, nil, 960); len(charts) != 3 {
		t.Errorf("%d charts, want 3", len(charts))
	}
}

// FuzzWriteHTML feeds arbitrary result documents through Read and the
// HTML renderer: bad input may be rejected, never panic or hang.
func FuzzWriteHTML(f *testing.F) {
	for _, name := range []string{"run.json", "conform.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema_version":1,"kind":"run","time_series":[{"second":-9223372036854775808,"requests":-1},{"second":9223372036854775807}],"steps":[{"name":"<x>","latency":{"count":1,"hist":"AAAA"}}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"conform","cases":[{"id":"a/b","section":"","verdict":"weird","wire":[{"dir":"x","hex":"zz"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := result.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		_ = WriteHTML(io.Discard, HTMLOptions{}, doc, doc)
	})
}

func TestFmtThresholdValue(t *testing.T) {
	tests := []struct {
		metric string
		v      float64
		want   string
	}{
		{"join.p99", 0.004287, "4.29ms"},
		{"p99", 0.05, "50.00ms"},
		{"list_rooms.mean", 0.000250, "250µs"},
		{"p99_us", 50000, "50.00ms"},
		{"errors.rate", 0.737057, "73.71%"},
		{"join.error_rate", 0.01, "1.00%"},
		{"throughput", 195.8, "195.8/s"},
		{"probe.limit", 200, "200/s"},
		{"violations", 0, "0"},
		{"join.count", 1912, "1912"},
	}
	for _, tt := range tests {
		if got := (result.ThresholdResult{Metric: tt.metric}).ValueText(tt.v); got != tt.want {
			t.Errorf("%s %v: %q, want %q", tt.metric, tt.v, got, tt.want)
		}
	}
}

func TestWireLogBounded(t *testing.T) {
	c := sampleConform()
	for i := range 100 {
		c.Cases[0].Wire = append(c.Cases[0].Wire, result.WireEntry{Dir: result.DirSent, OffsetNS: time.Duration(i), Hex: "abcd"})
	}
	page := string(htmlOf(t, HTMLOptions{}, c))
	if n := strings.Count(page, `<tr class="w-`); n != maxWireShown+2 /* udp-lobby/5/2 has 2 */ {
		t.Errorf("%d wire rows drawn, want %d", n, maxWireShown+2)
	}
	if !strings.Contains(page, "… and 38 more entries, not shown") {
		t.Error("hidden wire entries are not announced")
	}
}

func TestSectionTitle(t *testing.T) {
	for in, want := range map[string]string{"5": "Section 5", "3.2": "Section 3.2", "": "No section",
		"udp-lobby.md §12 Sequence numbers": "udp-lobby.md §12 Sequence numbers"} {
		if got := sectionTitle(in); got != want {
			t.Errorf("sectionTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPathDataThinsKeepingSpikes draws 100k points across 400 px: the path
// keeps at most 4 points per pixel column, and the one spike survives.
func TestPathDataThinsKeepingSpikes(t *testing.T) {
	p := &plot{x0: 0, x1: 100_000, y0: 0, y1: 1000, left: 0, top: 0, w: 400, h: 100}
	pts := make([]xy, 100_000)
	for i := range pts {
		pts[i] = xy{float64(i), 10}
	}
	pts[54_321].Y = 1000 // spike: y pixel 0
	pts[70_000].Y = math.NaN()
	d := pathData(p, pts)
	if n := strings.Count(d, "L") + strings.Count(d, "M"); n > 4*401 {
		t.Errorf("%d path points for 400 px", n)
	}
	if !strings.Contains(d, f1(p.px(54_321))+" 0.0") {
		t.Error("the spike was thinned away")
	}
	if strings.Count(d, "M") != 2 {
		t.Errorf("want 2 subpaths (one gap), got %d", strings.Count(d, "M"))
	}
	// Few points: every one is kept, in order.
	if got := pathData(p, []xy{{0, 0}, {50_000, 500}, {100_000, 1000}}); got != "M0.0 100.0 L200.0 50.0 L400.0 0.0" {
		t.Errorf("short path %q", got)
	}
}

// TestPartialLastSecond: a run that ended 0.4 s into its last second draws
// that second as a per-second rate (4 in 0.4 s is 10/s, not a cliff to 4),
// says so in the legend, and ends the axis at the run's end.
func TestPartialLastSecond(t *testing.T) {
	pts := []result.Point{{Second: 0, Requests: 10}, {Second: 1, Requests: 10, Errors: 2}, {Second: 2, Requests: 4, Errors: 2}}
	d := timeSeriesData(pts, 2400*time.Millisecond)
	if d.lastFrac < 0.399 || d.lastFrac > 0.401 || math.Abs(d.end-2.4) > 1e-9 {
		t.Fatalf("lastFrac %v end %v, want 0.4 and 2.4", d.lastFrac, d.end)
	}
	last := d.req[len(d.req)-1]
	if math.Abs(last.Y-10) > 1e-9 || math.Abs(last.X-2.2) > 1e-9 || math.Abs(d.errs[len(d.errs)-1].Y-5) > 1e-9 {
		t.Errorf("last point %v (errors %v), want 10/s at 2.2 s (5 errors/s)", last, d.errs[len(d.errs)-1])
	}
	if math.Abs(d.meanRate-24/2.4) > 1e-9 {
		t.Errorf("mean %v, want 10", d.meanRate)
	}
	whole := timeSeriesData(pts, 3*time.Second)
	if whole.lastFrac != 0 || whole.req[len(whole.req)-1].Y != 4 {
		t.Errorf("a whole last second was scaled: %+v", whole)
	}
	charts := timeSeriesCharts(pts, 2400*time.Millisecond, span{}, nil, 960)
	if !strings.Contains(string(charts[0]), "the last second ran 0.40 s") {
		t.Error("the completions chart does not say the last second was partial")
	}
}

// TestCombinedLogAxis: the all-steps chart has a log latency axis, so a
// µs-scale step and a ms-scale one are both readable.
func TestCombinedLogAxis(t *testing.T) {
	svg := string(percentileChartLog("all", []histSeries{
		{Name: "fast", Colour: "#000", Hist: histOf(t, ramp(5, 1, 100)...)},
		{Name: "slow", Colour: "#111", Hist: histOf(t, ramp(5000, 100, 100)...)},
	}, 960, 300))
	for _, want := range []string{"latency (log)", ">1µs<", ">10µs<", ">100µs<", ">1ms<", ">10ms<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("log chart lacks %q", want)
		}
	}
}
