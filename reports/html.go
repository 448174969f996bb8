package reports

import (
	_ "embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

//go:embed html.tmpl
var htmlTemplateText string

//go:embed html.css
var htmlCSS string

var htmlTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"us":         words.US,
	"lat":        fmtLat,
	"lag":        fmtLag,
	"pct":        words.Pct,
	"num":        itoa,
	"float":      words.Float,
	"dur":        fmtDur,
	"offset":     fmtOffset,
	"reasons":    fmtReasons,
	"inc":        func(n int) int { return n + 1 },
	"plural":     words.Plural[int],
	"secs":       words.Seconds,
	"drillDur":   words.Duration,
	"maxSamples": func() int { return result.MaxViolationSamples },
	"thv":        result.ThresholdResult.ValueText,
	"verdictOf": func(r *result.Run, t result.ThresholdResult) string {
		return thresholdVerdict(r, t, "pass", "fail", "bound")
	},
	"section": sectionTitle,
	"utc":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(htmlTemplateText))

// HTMLOptions tune WriteHTML.
type HTMLOptions struct {
	// Title is the page title; "lobbybench report" when empty.
	Title string
	// Labels name the documents (one per document, e.g. file names or
	// implementation names); a missing or empty label defaults to the
	// document's target, scenario or protocol.
	Labels []string
	// DocsBase is the URL (or file path) where the protocol documents of
	// the lobbybench repository (ProtocolDocsDir) can be read, e.g.
	// "https://git.example.com/lobbybench/blob/main/docs/protocols" or
	// "file:///src/lobbybench/docs/protocols". When set, each section a
	// conformance case cites links to DocsBase/<file>#s<section>. Empty
	// (the default), sections are shown as text with their path in the
	// repository: the page is opened from anywhere, so no relative link
	// would be right, and it names no site it was not told of.
	DocsBase string
}

// WriteHTML writes one self-contained HTML page (inline CSS and SVG, no
// script, nothing fetched) for docs. A run shows
// its summary, thresholds, per-step HDR percentile curves on a log "nines"
// axis, the per-second time series, step and message tables, violations
// with hex dumps of their samples, rate-limit and malformed findings. A
// conform result shows its cases grouped by spec section with each wire
// log in a <details> element. With several runs or several conform results
// the page opens with a side-by-side matrix of them (as Autobahn's
// implementation matrix), then each document in full.
func WriteHTML(w io.Writer, opts HTMLOptions, docs ...result.Doc) error {
	page, err := buildPage(opts, docs)
	if err != nil {
		return err
	}
	return htmlTemplate.Execute(w, page)
}

func init() {
	register(Format{
		Name: "html",
		Help: map[string]string{
			result.KindRun:     "write a self-contained HTML report to `FILE`",
			result.KindConform: "write a self-contained HTML report to `file`",
		},
		Write: func(w io.Writer, o Options, docs ...result.Doc) error {
			if o.TrimPassingWire {
				docs = slices.Clone(docs)
				for i, d := range docs {
					docs[i] = o.trimmed(d) // a nil stays nil: WriteHTML says so
				}
			}
			return WriteHTML(w, o.HTMLOptions, docs...)
		},
		Many: true,
		Report: &ReportHelp{
			Summary: "render results as one self-contained HTML page",
			Usage: `Usage: lobbybench report html RESULT.json... [-o FILE] [--title T] [--labels A,B]

Writes one self-contained HTML page (no scripts, nothing fetched): for a
run its thresholds, HDR latency percentile curves per step, the per-second
time series, violations with hex dumps, rate-limit and malformed findings;
for a conform result its cases by spec section with their wire logs. With
several results the page opens with a side-by-side matrix (as Autobahn's),
columns labelled by file name unless --labels says otherwise.`,
			List: `  html RESULT.json... [-o FILE]   one self-contained HTML page; several
                                  results are shown side by side
`,
		},
	})
}

// Page model: everything the template prints is computed here, so the
// template only lays it out.

type htmlPage struct {
	Title      string
	CSS        template.CSS
	Docs       []*htmlDoc
	RunMatrix  *runMatrix
	ConfMatrix *confMatrix
}

type htmlDoc struct {
	Anchor  string
	Label   string
	Run     *runView
	Conform *confView
}

type card struct {
	Label, Value, Class string
}

type runView struct {
	R *result.Run
	// Headline is the banner (the "banner" template); no banner when its
	// Status is "" (nothing to judge).
	Headline result.Headline
	// Warnings are Run.Warnings (the harness's send lag, dropped starts),
	// said under the banner as the terminal and the Markdown say them.
	Warnings   []string
	Cards      []card
	Thresholds []result.ThresholdResult
	Combined   template.HTML   // every step's corrected curve (several steps)
	StepCharts []template.HTML // per step: corrected and uncorrected
	MsgChart   template.HTML
	TimeCharts []template.HTML
	Lobby      *lobbyView // the lobby measures (lobby_render.go)
	Steps      []seriesRow
	Messages   []seriesRow
	Reasons    []reasonRow
	// SplitDown: the target was down during the run; Reasons are split
	// into while down and while up. Outages are its OutageLines.
	SplitDown bool
	Outages   []outageView
	// Target and TargetCharts are the server's process (TargetLines,
	// targetCharts), when lobbybench owned or embedded it.
	Target       []string
	TargetCharts []template.HTML
	// Drill is the recovery drill, when the run had one.
	Drill       *result.Drill
	Violations  []violView
	RateLimits  []result.RateLimitFinding
	Malformed   []result.MalformedFinding
	ShardsMerge bool
}

// outageView is one outage of a run: its OutageLines line and the owned
// process's last output.
type outageView struct {
	Line   string
	Output []string
}

type seriesRow struct {
	S      result.Series
	Colour string
}

type reasonRow struct {
	Reason   string
	Count    int64
	Down, Up int64 // split by the target's state, when SplitDown
}

type violView struct {
	V       result.Violation
	Samples []sampleView
}

type sampleView struct {
	S       result.ViolationSample
	Packet  string // hex dump
	Request string
}

type confView struct {
	C        *result.Conform
	Summary  result.Summary
	Headline result.Headline
	Bar      []barPart
	Sections []confSection
	// DocsNote says where the cited sections are, when some are DocRefs.
	DocsNote string
}

type barPart struct {
	Verdict string
	Count   int
	Pct     string
}

type confSection struct {
	Name string
	// Path is where the cited document lives in the repository
	// (ProtocolDocsDir), "" when Name is not a DocRef; Link its URL under
	// HTMLOptions.DocsBase, "" when none was given.
	Path    string
	Link    template.URL
	Summary result.Summary
	Cases   []caseView
}

type caseView struct {
	K          result.Case
	Anchor     string
	Wire       []wireView
	WireHidden int  // entries beyond maxWireShown
	Routes     bool // some entry has addresses or a note: show that column
}

// maxWireShown bounds the wire entries drawn per case: a flood case can log
// thousands of datagrams, and the JSON keeps them all.
const maxWireShown = 64

type wireView struct {
	Arrow, Dir, Offset string
	Len                int
	Dump               string
	// Route is "from → to" when the addresses are known; Note says what
	// the entry is.
	Route, Note string
}

type runMatrix struct {
	Labels  []matrixHead
	Rows    []matrixRow
	Charts  []template.HTML
	Colours []string
}

type matrixHead struct {
	Label, Anchor, Colour string
}

type matrixRow struct {
	Name   string
	Group  bool // a step header row
	Cells  []matrixCell
	Anchor string
}

type matrixCell struct {
	Text, Class, Link, Title string
}

type confMatrix struct {
	Labels   []matrixHead
	Summary  []result.Summary
	Sections []confMatrixSection
}

type confMatrixSection struct {
	Name string
	Path string       // as in confSection
	Link template.URL // as in confSection
	Rows []confMatrixRow
}

type confMatrixRow struct {
	ID, Description, Level string
	Cells                  []matrixCell
}

func buildPage(opts HTMLOptions, docs []result.Doc) (*htmlPage, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("reports: html: no documents")
	}
	if err := CheckDocsBase(opts.DocsBase); err != nil {
		return nil, fmt.Errorf("reports: html: docs base: %w", err)
	}
	page := &htmlPage{Title: opts.Title, CSS: template.CSS(htmlCSS)}
	if page.Title == "" {
		page.Title = "lobbybench report"
	}
	var runs []*htmlDoc
	var confs []*htmlDoc
	for i, d := range docs {
		hd := &htmlDoc{Anchor: "d" + strconv.Itoa(i)}
		if i < len(opts.Labels) {
			hd.Label = opts.Labels[i]
		}
		if d == nil {
			return nil, fmt.Errorf("reports: html: document %d is nil", i)
		}
		switch v := result.Document(d).(type) {
		case *result.Run:
			if v == nil {
				return nil, fmt.Errorf("reports: html: document %d is a nil run", i)
			}
			rv, err := buildRun(v)
			if err != nil {
				return nil, fmt.Errorf("reports: html: document %d: %w", i, err)
			}
			hd.Run = rv
			if hd.Label == "" {
				hd.Label = runLabel(v, i)
			}
			runs = append(runs, hd)
		case *result.Conform:
			if v == nil {
				return nil, fmt.Errorf("reports: html: document %d is a nil conform result", i)
			}
			hd.Conform = buildConform(v, hd.Anchor, opts.DocsBase)
			if hd.Label == "" {
				hd.Label = strings.TrimSpace(firstNonEmpty(v.Protocol, "conform") + " " + v.Target)
			}
			confs = append(confs, hd)
		}
		page.Docs = append(page.Docs, hd)
	}
	if len(runs) > 1 {
		m, err := buildRunMatrix(runs)
		if err != nil {
			return nil, err
		}
		page.RunMatrix = m
	}
	if len(confs) > 1 {
		page.ConfMatrix = buildConfMatrix(confs, opts.DocsBase)
	}
	return page, nil
}

// runLabel names a run in headings: its scenario, and the target when it is
// a real one (an embedded server's free port says nothing; it is in the
// line under the heading).
func runLabel(r *result.Run, i int) string {
	target := r.Target
	if strings.HasPrefix(target, "embedded") {
		target = ""
	}
	switch {
	case r.Scenario != "" && target != "":
		return r.Scenario + " against " + target
	case r.Scenario != "":
		return r.Scenario
	}
	return firstNonEmpty(r.Target, "run "+strconv.Itoa(i+1))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func buildRun(r *result.Run) (*runView, error) {
	v := &runView{R: r, Thresholds: r.Thresholds, RateLimits: r.RateLimits, Malformed: r.Malformed, ShardsMerge: r.Shards > 1}
	t := r.Totals
	secs := r.DurationNS.Seconds()
	tput := "-"
	if secs > 0 {
		tput = strconv.FormatFloat(float64(t.Requests)/secs, 'f', 1, 64) + "/s"
	}
	errClass := ""
	if t.Failures > 0 {
		errClass = "bad"
	}
	violClass := ""
	if t.Violations > 0 {
		violClass = "bad"
	}
	v.Cards = []card{
		{"requests", itoa(t.Requests), ""},
		{"throughput", tput, ""},
		{"error rate", words.Pct(t.ErrorRate()), errClass},
		// Failures no latency percentile shows: said apart.
		{"timeouts", itoa(t.Timeouts()), map[bool]string{true: "bad", false: ""}[t.Timeouts() > 0]},
		{"violations", itoa(t.Violations), violClass},
		{"retries", itoa(t.Retries), ""},
		{"dropped starts", itoa(t.Dropped), map[bool]string{true: "warn", false: ""}[t.Dropped > 0]},
		{"sessions started / finished", itoa(t.SessionsStarted) + " / " + itoa(t.SessionsFinished), ""},
	}
	v.Headline = r.Headline()
	v.Warnings = r.Warnings()
	if len(r.Thresholds) > 0 {
		v.Cards = append(v.Cards, thresholdCard(r))
	}

	var combined []histSeries
	for i, s := range r.Steps {
		c := colour(i)
		v.Steps = append(v.Steps, seriesRow{S: s, Colour: c})
		h, err := s.Latency.Histogram()
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", s.Name, err)
		}
		u, err := s.Uncorrected.Histogram()
		if err != nil {
			return nil, fmt.Errorf("step %s uncorrected: %w", s.Name, err)
		}
		combined = append(combined, histSeries{Name: s.Name, Colour: c, Hist: h})
		v.StepCharts = append(v.StepCharts, percentileChart("Step "+s.Name, []histSeries{
			{Name: "corrected", Colour: c, Hist: h},
			{Name: "uncorrected", Colour: c, Dashed: true, Hist: u},
		}, 470, 300))
	}
	if len(combined) > 1 {
		v.Combined = percentileChartLog("All steps: latency by percentile (from intended send)", combined, 960, 300+16*float64(len(combined)-1))
	}
	var msgs []histSeries
	for i, s := range r.Messages {
		c := colour(i + len(r.Steps))
		v.Messages = append(v.Messages, seriesRow{S: s, Colour: c})
		h, err := s.Latency.Histogram()
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", s.Name, err)
		}
		msgs = append(msgs, histSeries{Name: s.Name, Colour: c, Hist: h})
	}
	if len(msgs) > 0 {
		v.MsgChart = percentileChart("Messages: request to reply by percentile", msgs, 960, 284+16*float64(len(msgs)))
	}
	var faults []result.FaultResult
	if r.Drill != nil {
		faults = r.Drill.Faults
	}
	sp := runSpan(r)
	v.TimeCharts = timeSeriesCharts(r.TimeSeries, r.DurationNS, sp, r.Outages, 960, faults...)
	v.Lobby = buildLobby(r)
	v.Drill = r.Drill
	v.SplitDown = t.FailuresWhileDown != nil
	for i, line := range OutageLines(r) {
		v.Outages = append(v.Outages, outageView{Line: line, Output: r.Outages[i].Output})
	}
	v.Target = TargetLines(r)
	v.TargetCharts = targetCharts(r.TargetProcess, r.DurationNS, sp, r.Outages, 960)
	for _, k := range sortedReasons(t.FailuresByReason) {
		d := t.FailuresWhileDown[k]
		v.Reasons = append(v.Reasons, reasonRow{k, t.FailuresByReason[k], d, max(t.FailuresByReason[k]-d, 0)})
	}
	for _, vi := range r.Violations {
		vv := violView{V: vi}
		for _, s := range vi.Samples {
			vv.Samples = append(vv.Samples, sampleView{S: s, Packet: hexDump(s.Packet), Request: hexDump(s.Request)})
		}
		v.Violations = append(v.Violations, vv)
	}
	return v, nil
}

// thresholdCard is the "N / M passed" card, coloured as the thresholds
// were judged (thresholdVerdict, the table's badges): red for a breach the
// server is charged with, amber when the only misses are harness-bound
// (the banner then says INCONCLUSIVE, not FAIL), green when all passed.
func thresholdCard(r *result.Run) card {
	passed, bound, failed := 0, 0, 0
	for _, th := range r.Thresholds {
		switch thresholdVerdict(r, th, "pass", "fail", "bound") {
		case "pass":
			passed++
		case "bound":
			bound++
		default:
			failed++
		}
	}
	c := card{Label: "thresholds", Value: fmt.Sprintf("%d / %d passed", passed, len(r.Thresholds)), Class: "good"}
	switch {
	case failed > 0:
		c.Class = "bad"
	case bound > 0:
		c.Class = "warn"
	}
	if bound > 0 {
		c.Label = fmt.Sprintf("thresholds (%d harness-bound)", bound)
	}
	return c
}

var verdictOrder = []string{result.VerdictPass, result.VerdictFail, result.VerdictWarn, result.VerdictInfo, result.VerdictSkip, result.VerdictNotRun}

func buildConform(c *result.Conform, docAnchor, docsBase string) *confView {
	v := &confView{C: c, Summary: c.Summary(), Headline: c.Headline()}
	counts := map[string]int{result.VerdictPass: v.Summary.Pass, result.VerdictFail: v.Summary.Fail, result.VerdictWarn: v.Summary.Warn, result.VerdictInfo: v.Summary.Info, result.VerdictSkip: v.Summary.Skip, result.VerdictNotRun: v.Summary.NotRun}
	for _, k := range verdictOrder {
		if n := counts[k]; n > 0 {
			v.Bar = append(v.Bar, barPart{Verdict: k, Count: n, Pct: strconv.FormatFloat(100*float64(n)/float64(v.Summary.Total), 'f', 3, 64)})
		}
	}
	idx := map[string]int{}
	for _, k := range c.Cases {
		i, ok := idx[k.Section]
		if !ok {
			i = len(v.Sections)
			idx[k.Section] = i
			path, link := sectionDoc(k.Section, docsBase)
			v.Sections = append(v.Sections, confSection{Name: k.Section, Path: path, Link: link})
		}
		sec := &v.Sections[i]
		if sec.Path != "" && v.DocsNote == "" {
			v.DocsNote = "Sections cite the protocol documents in " + result.ProtocolDocsDir + "/ of the lobbybench repository."
			if docsBase != "" {
				v.DocsNote = "Sections cite the protocol documents in " + result.ProtocolDocsDir + "/ of the lobbybench repository, linked at " + docsBase + "."
			}
		}
		cv := caseView{K: k, Anchor: caseAnchor(docAnchor, k.ID)}
		wire := k.Wire
		if len(wire) > maxWireShown {
			cv.WireHidden = len(wire) - maxWireShown
			wire = wire[:maxWireShown]
		}
		for _, e := range wire {
			wv := wireView{Dir: e.Dir, Offset: fmtOffset(e.OffsetNS), Dump: hexDump(e.Hex), Len: len(e.Hex) / 2, Note: e.Note}
			from, to := e.Local, e.Peer
			switch e.Dir {
			case result.DirSent:
				wv.Arrow = "→"
			case result.DirRecv:
				wv.Arrow = "←"
				from, to = e.Peer, e.Local
			default:
				wv.Arrow = "?"
			}
			if from != "" || to != "" {
				wv.Route = firstNonEmpty(from, "?") + " → " + firstNonEmpty(to, "?")
			}
			cv.Routes = cv.Routes || wv.Route != "" || wv.Note != ""
			cv.Wire = append(cv.Wire, wv)
		}
		sec.Cases = append(sec.Cases, cv)
		one := result.Conform{Cases: []result.Case{k}}
		s1 := one.Summary()
		sec.Summary.Total += s1.Total
		sec.Summary.Pass += s1.Pass
		sec.Summary.Fail += s1.Fail
		sec.Summary.Warn += s1.Warn
		sec.Summary.Info += s1.Info
		sec.Summary.Skip += s1.Skip
		sec.Summary.NotRun += s1.NotRun
	}
	return v
}

// caseAnchor makes an id attribute for a case of one document: letters and
// digits kept, everything else "-".
func caseAnchor(doc, id string) string {
	var b strings.Builder
	b.WriteString(doc + "-c-")
	for _, r := range id {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func buildRunMatrix(docs []*htmlDoc) (*runMatrix, error) {
	m := &runMatrix{}
	for i, d := range docs {
		m.Labels = append(m.Labels, matrixHead{Label: d.Label, Anchor: d.Anchor, Colour: colour(i)})
	}
	row := func(name string, f func(r *result.Run) matrixCell) {
		mr := matrixRow{Name: name}
		for _, d := range docs {
			mr.Cells = append(mr.Cells, f(d.Run.R))
		}
		m.Rows = append(m.Rows, mr)
	}
	row("requests", func(r *result.Run) matrixCell { return matrixCell{Text: itoa(r.Totals.Requests)} })
	row("throughput", func(r *result.Run) matrixCell {
		if r.DurationNS <= 0 {
			return matrixCell{Text: "-"}
		}
		return matrixCell{Text: strconv.FormatFloat(float64(r.Totals.Requests)/r.DurationNS.Seconds(), 'f', 1, 64) + "/s"}
	})
	row("error rate", func(r *result.Run) matrixCell { return rateCell(r.Totals.ErrorRate()) })
	row("violations", func(r *result.Run) matrixCell {
		c := matrixCell{Text: itoa(r.Totals.Violations), Class: "good"}
		if r.Totals.Violations > 0 {
			c.Class = "bad"
		}
		return c
	})
	row("thresholds", func(r *result.Run) matrixCell {
		if len(r.Thresholds) == 0 {
			return matrixCell{Text: "-"}
		}
		c := thresholdCard(r)
		return matrixCell{Text: strings.TrimSuffix(c.Value, " passed"), Class: c.Class}
	})
	// Steps: the union in first-seen order.
	var names []string
	seen := map[string]bool{}
	for _, d := range docs {
		for _, s := range d.Run.R.Steps {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	for _, name := range names {
		m.Rows = append(m.Rows, matrixRow{Name: "step " + name, Group: true})
		find := func(r *result.Run) (result.Series, bool) {
			for _, s := range r.Steps {
				if s.Name == name {
					return s, true
				}
			}
			return result.Series{}, false
		}
		lat := func(f func(result.Latency) int64) func(r *result.Run) matrixCell {
			return func(r *result.Run) matrixCell {
				s, ok := find(r)
				if !ok || s.Latency.Count == 0 {
					return matrixCell{Text: "-"}
				}
				return matrixCell{Text: words.US(f(s.Latency))}
			}
		}
		row("p50", lat(func(l result.Latency) int64 { return l.P50US }))
		row("p99", lat(func(l result.Latency) int64 { return l.P99US }))
		row("p99.9", lat(func(l result.Latency) int64 { return l.P999US }))
		row("error rate", func(r *result.Run) matrixCell {
			s, ok := find(r)
			if !ok {
				return matrixCell{Text: "-"}
			}
			return rateCell(s.ErrorRate())
		})
		var hs []histSeries
		for i, d := range docs {
			s, _ := find(d.Run.R)
			h, err := s.Latency.Histogram()
			if err != nil {
				return nil, fmt.Errorf("reports: html: %s step %s: %w", d.Label, name, err)
			}
			hs = append(hs, histSeries{Name: d.Label, Colour: colour(i), Hist: h})
		}
		m.Charts = append(m.Charts, percentileChart("Step "+name+" across runs (from intended send)", hs, 960, 284+16*float64(len(hs))))
	}
	return m, nil
}

func rateCell(r float64) matrixCell {
	c := matrixCell{Text: words.Pct(r), Class: "good"}
	if r > 0 {
		c.Class = "bad"
	}
	return c
}

func buildConfMatrix(docs []*htmlDoc, docsBase string) *confMatrix {
	m := &confMatrix{}
	byID := map[string][]*result.Case{}
	var ids []string
	secOf := map[string]string{}
	first := map[string]result.Case{}
	for i, d := range docs {
		m.Labels = append(m.Labels, matrixHead{Label: d.Label, Anchor: d.Anchor, Colour: colour(i)})
		m.Summary = append(m.Summary, d.Conform.Summary)
		for j := range d.Conform.C.Cases {
			k := &d.Conform.C.Cases[j]
			if _, ok := byID[k.ID]; !ok {
				byID[k.ID] = make([]*result.Case, len(docs))
				ids = append(ids, k.ID)
				secOf[k.ID] = k.Section
				first[k.ID] = *k
			}
			if byID[k.ID][i] == nil {
				byID[k.ID][i] = k
			}
		}
	}
	secIdx := map[string]int{}
	for _, id := range ids {
		s := secOf[id]
		i, ok := secIdx[s]
		if !ok {
			i = len(m.Sections)
			secIdx[s] = i
			path, link := sectionDoc(s, docsBase)
			m.Sections = append(m.Sections, confMatrixSection{Name: s, Path: path, Link: link})
		}
		k := first[id]
		row := confMatrixRow{ID: id, Description: k.Description, Level: k.Level}
		for di, d := range docs {
			c := byID[id][di]
			if c == nil {
				row.Cells = append(row.Cells, matrixCell{Text: "-", Class: "none", Title: "not run"})
				continue
			}
			title := c.Verdict
			if c.Actual != "" {
				title += ": " + c.Actual
			}
			row.Cells = append(row.Cells, matrixCell{Text: c.Verdict, Class: "v-" + c.Verdict, Link: "#" + caseAnchor(d.Anchor, c.ID), Title: title})
		}
		m.Sections[i].Rows = append(m.Sections[i].Rows, row)
	}
	return m
}

// hexDump formats a hex string as a classic dump: offset, 16 bytes in hex,
// and their printable ASCII. A string that is not valid hex is shown as is,
// with a note, rather than failing the report.
func hexDump(h string) string {
	if h == "" {
		return ""
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return h + "  (not valid hex)"
	}
	var sb strings.Builder
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(&sb, "%04x  ", off)
		for i := 0; i < 16; i++ {
			if i < len(line) {
				fmt.Fprintf(&sb, "%02x ", line[i])
			} else {
				sb.WriteString("   ")
			}
			if i == 7 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(" |")
		for _, c := range line {
			if c >= 0x20 && c < 0x7f {
				sb.WriteByte(c)
			} else {
				sb.WriteByte('.')
			}
		}
		sb.WriteString("|")
		if off+16 < len(b) {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// fmtDur rounds a duration for display.
func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.String()
	}
}

// fmtOffset formats an offset from a start as "+1.5ms".
func fmtOffset(d time.Duration) string { return "+" + fmtDur(d) }

// sectionDoc returns the repository path of the document a case section
// cites and its link under docsBase ("" without one); both "" when the
// section is not a DocRef.
//
// The link is a template.URL, so html/template keeps a file: URL: docsBase
// comes from the user (HTMLOptions.DocsBase) and was checked by
// CheckDocsBase in buildPage.
func sectionDoc(section, docsBase string) (path string, link template.URL) {
	r, ok := result.ParseDocRef(section)
	if !ok {
		return "", ""
	}
	return r.Path() + " §" + r.Section, template.URL(r.Link(docsBase))
}

// sectionTitle heads a group of cases: "Section 5" for a bare number, the
// section text itself when it says more ("udp-lobby.md §12 Sequence numbers").
func sectionTitle(s string) string {
	if s == "" {
		return "No section"
	}
	if strings.Trim(s, "0123456789.") == "" {
		return "Section " + s
	}
	return s
}

func fmtReasons(m map[string]int64) string {
	var parts []string
	for _, k := range sortedReasons(m) {
		parts = append(parts, k+" "+itoa(m[k]))
	}
	return strings.Join(parts, ", ")
}
