package reports

import (
	"fmt"
	"html/template"
	"io"
	"strconv"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

func init() {
	registerCapacity("html", "write a self-contained HTML report of the search to `FILE`", WriteCapacityHTML)
}

// capacityTemplate is the search's page in the run report's shell: its
// head (the one stylesheet, html.css), banner and footer are html.tmpl's.
var capacityTemplate = template.Must(template.Must(htmlTemplate.Clone()).New("capacity").Parse(`{{template "head" .}}
<body>
<header class="top">
<h1>{{.Title}}</h1>
</header>
<main>
<p class="meta">Capacity search of <code>{{.C.Scenario}}</code> against <code>{{.C.Target}}</code>, {{.C.Protocol}}, {{.C.Model}} model; load in {{.Unit}}; figures after a {{.Warmup}} warm-up.</p>
{{template "banner" .Headline}}
{{- with .C.Coverage}}
<ul class="warnings">{{range .}}<li>COVERAGE: {{.}}</li>{{end}}</ul>
{{- end}}
{{- if .Summary}}
<p>{{.Summary}}</p>
{{- else}}
<p>Search stopped: {{.C.StopText}}.</p>
{{- end}}
<div class="charts">
{{- range .Charts}}
<figure>{{.}}</figure>
{{- end}}
</div>
<h3>Steps</h3>
<div class="scroll"><table class="grid">
<thead><tr><th>load</th><th>verdict</th><th class="n">achieved/s</th><th class="n">p50</th><th class="n">p99</th><th class="n">errors</th><th class="n">send lag p99</th><th class="n">violations</th><th>server</th><th>what broke</th></tr></thead>
<tbody>
{{- range .Steps}}
<tr><td>{{.Load}}</td><td>{{.Verdict}}</td><td class="n">{{.Achieved}}</td><td class="n">{{.P50}}</td><td class="n">{{.P99}}</td><td class="n">{{.Err}}</td><td class="n">{{.Lag}}</td><td class="n">{{.Viol}}</td><td>{{.Server}}</td><td>{{.What}}</td></tr>
{{- end}}
</tbody></table></div>
<h3>Conformance under load</h3>
{{- if .Matrix}}
<div class="scroll"><table class="grid">
<thead><tr><th>rule</th><th>first broken at</th>{{range .Loads}}<th class="n">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Matrix}}
<tr><td><code>{{.Rule}}</code></td><td>{{.First}}</td>{{range .Cells}}<td class="n">{{.}}</td>{{end}}</tr>
{{- end}}
</tbody></table></div>
{{- else}}
<p class="none good">No protocol rule was broken at any load.</p>
{{- end}}
</main>
{{template "foot"}}
</body>
</html>
`))

type capHTMLStep struct{ Load, Verdict, Achieved, P50, P99, Err, Lag, Viol, Server, What string }

type capHTMLRule struct {
	Rule, First string
	Cells       []string
}

// WriteCapacityHTML writes the search as one self-contained page: the
// headline, p99 against load and throughput against offered load (the
// knee marked), the steps and the rule × load matrix.
func WriteCapacityHTML(w io.Writer, c *result.Capacity) error {
	u := c.Unit()
	data := struct {
		C            *result.Capacity
		Title        string
		CSS          template.CSS
		Headline     result.Headline
		Unit, Warmup string
		Summary      string // a ladder's, a merge's or --workers' (a plain search says only why it stopped)
		Charts       []template.HTML
		Steps        []capHTMLStep
		Loads        []string
		Matrix       []capHTMLRule
	}{C: c, Title: "lobbybench capacity: " + c.Scenario, CSS: template.CSS(htmlCSS), Headline: c.Headline(), Unit: unitName(c), Warmup: c.Settings.WarmupNS.String()}
	if c.Ladder() || c.Shards > 0 || stepWorkers(c) > 0 {
		data.Summary = capacitySummary(c)
	}
	for _, s := range c.StepsByLoad() {
		data.Steps = append(data.Steps, capHTMLStep{result.FormatLoad(s.Load, u), verdictWord(s.Verdict), strconv.FormatFloat(s.Throughput, 'f', 1, 64),
			capUS(s.P50US), capUS(s.P99US), words.Pct(s.ErrorRate), words.US(s.SendLagP99US), violationsText(s.Violations), serverText(s), whatBroke(s)})
	}
	loads := c.Loads()
	for _, l := range loads {
		data.Loads = append(data.Loads, result.FormatLoad(l, u))
	}
	for _, r := range c.Rules {
		row := capHTMLRule{Rule: r.Rule, First: result.FormatLoad(r.FirstLoad, u)}
		for _, l := range loads {
			var n int64
			for _, s := range c.Steps {
				if s.Load == l {
					n += s.Violations[r.Rule]
				}
			}
			cell := "-"
			if n > 0 {
				cell = strconv.FormatInt(n, 10)
			}
			row.Cells = append(row.Cells, cell)
		}
		data.Matrix = append(data.Matrix, row)
	}
	data.Charts = capacityCharts(c, 560)
	return capacityTemplate.Execute(w, data)
}

// capacityCharts are p99 against load and achieved throughput against
// offered load, each with the knee (the sustainable load) as a labelled
// vertical line. None without a step.
func capacityCharts(c *result.Capacity, width float64) []template.HTML {
	steps := c.StepsByLoad()
	if len(steps) == 0 {
		return nil
	}
	maxLoad, maxP99, maxTput := 0.0, 0.0, 0.0
	for _, s := range steps {
		maxLoad = max(maxLoad, s.Load)
		maxP99 = max(maxP99, float64(s.P99US))
		maxTput = max(maxTput, s.Throughput)
	}
	u := c.Unit()
	xTicks := niceTicks(maxLoad, 6)
	xt := make([]tick, len(xTicks))
	for i, v := range xTicks {
		xt[i] = tick{V: v, Label: fmtAxisCount(v)}
	}
	var knee []vline
	if c.Sustainable > 0 {
		knee = []vline{{X: c.Sustainable, Label: "held " + result.FormatLoad(c.Sustainable, u), Title: "sustainable load"}}
	}
	chart := func(title, yTitle string, ymax float64, ylabel func(float64) string, pick func(result.CapacityStep) float64, name string) template.HTML {
		yTicks := niceTicks(ymax, 5)
		yt := make([]tick, len(yTicks))
		for i, v := range yTicks {
			yt[i] = tick{V: v, Label: ylabel(v)}
		}
		p := &plot{x0: 0, x1: xTicks[len(xTicks)-1], y0: 0, y1: yTicks[len(yTicks)-1], faults: knee, faultLegend: "the sustainable load (dotted line)"}
		ls := lineSeries{Name: name, Colour: colour(0)}
		for _, s := range steps {
			pt := xy{s.Load, pick(s)}
			ls.Points = append(ls.Points, pt)
			ls.Marks = append(ls.Marks, mark{P: pt, Title: fmt.Sprintf("%s: %s (%s)", result.FormatLoad(s.Load, u), ylabel(pt.Y), verdictWord(s.Verdict))})
		}
		return drawChart(title, "offered load ("+unitName(c)+")", yTitle, p, xt, yt, []lineSeries{ls}, []string{name}, width, 300)
	}
	return []template.HTML{
		chart("p99 latency against load", "p99", maxP99, fmtAxisUS, func(s result.CapacityStep) float64 { return float64(s.P99US) }, "p99 (corrected, after warm-up)"),
		chart("answered throughput against offered load", "requests/s", maxTput, fmtAxisCount, func(s result.CapacityStep) float64 { return s.Throughput }, "answered requests/s (after warm-up)"),
	}
}
