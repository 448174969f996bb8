package result

import (
	"fmt"
	"math"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/internal/words"
)

// Gate metrics: what a Gate limits.
const (
	// GateP50IncreasePct limits a step's p50 increase, in percent of base.
	GateP50IncreasePct = "p50_increase_pct"
	// GateP99IncreasePct limits a step's p99 increase, in percent of base.
	GateP99IncreasePct = "p99_increase_pct"
	// GateErrorRateIncreasePP limits a step's (and the run's) error-rate
	// increase, in percentage points.
	GateErrorRateIncreasePP = "error_rate_increase_pp"
	// GateNewViolations limits how many rules may be violated in new that
	// were not in base.
	GateNewViolations = "new_violations"
	// GateNewlyFailingCases limits how many conform cases may fail in new
	// that did not fail in base (CompareConform only).
	GateNewlyFailingCases = "newly_failing_cases"
	// GateComplete is broken by each interrupted or incomplete side of a
	// comparison (Headline.Partial): a partial run cannot be judged
	// against a whole one. It is always
	// checked, whatever gates are given.
	GateComplete = "interrupted_runs"
)

// Gate is one regression limit: the comparison breaks it when a value of
// Metric is strictly greater than Max. A latency gate (p50/p99 increase)
// breaks only when, besides, the increase is above MinDeltaUS in absolute
// terms, beyond the runs' sampling noise (LatencyCI): two runs of one
// build differ by tens of percent at the tail, which is not a regression —
// and beyond what the harness's lateness explains: the new side's send lag
// at that percentile (LagExplains; the base's lag only inflates the base
// figure, so it can make no increase look larger).
type Gate struct {
	Metric string  `json:"metric"`
	Max    float64 `json:"max"`
	// MinDeltaUS is the absolute floor of a latency gate, in µs: smaller
	// increases never break it, whatever their percentage.
	MinDeltaUS int64 `json:"min_delta_us,omitempty"`
}

// DefaultGates are the limits used when the user gives none: p99 may grow by
// 10%, error rate by 0.5 percentage points, and no new violated rule.
func DefaultGates() []Gate {
	return []Gate{
		{Metric: GateP99IncreasePct, Max: 10},
		{Metric: GateErrorRateIncreasePP, Max: 0.5},
		{Metric: GateNewViolations, Max: 0},
		{Metric: GateNewlyFailingCases, Max: 0},
	}
}

// StepDelta is the change of one step between two runs. A step missing from
// one side, or without latency samples on one side, has zero figures there
// and zero latency changes (HasLatency false), and is not latency-gated.
type StepDelta struct {
	Name              string  `json:"name"`
	InBase            bool    `json:"in_base"`
	InNew             bool    `json:"in_new"`
	HasLatency        bool    `json:"has_latency"`
	BaseP50US         int64   `json:"base_p50_us"`
	NewP50US          int64   `json:"new_p50_us"`
	P50ChangePct      float64 `json:"p50_change_pct"`
	BaseP99US         int64   `json:"base_p99_us"`
	NewP99US          int64   `json:"new_p99_us"`
	P99ChangePct      float64 `json:"p99_change_pct"`
	BaseErrorRate     float64 `json:"base_error_rate"`
	NewErrorRate      float64 `json:"new_error_rate"`
	ErrorRateChangePP float64 `json:"error_rate_change_pp"`
	// P50CI and P99CI bound each side's percentile (LatencyCI), from the
	// histograms; nil when a side has no histogram (the figures alone are
	// then judged).
	P50CI *CIPair `json:"p50_ci,omitempty"`
	P99CI *CIPair `json:"p99_ci,omitempty"`
	// The harness's send lag at p50 and p99 on each side (0 when a side
	// recorded none): an increase it explains is not judged (LagExplains).
	BaseLagP50US int64 `json:"base_send_lag_p50_us,omitempty"`
	NewLagP50US  int64 `json:"new_send_lag_p50_us,omitempty"`
	BaseLagP99US int64 `json:"base_send_lag_p99_us,omitempty"`
	NewLagP99US  int64 `json:"new_send_lag_p99_us,omitempty"`
}

// CIPair holds a percentile's confidence interval on each side of a
// comparison, in µs.
type CIPair struct {
	BaseLoUS int64 `json:"base_lo_us"`
	BaseHiUS int64 `json:"base_hi_us"`
	NewLoUS  int64 `json:"new_lo_us"`
	NewHiUS  int64 `json:"new_hi_us"`
}

// Significant reports whether new is slower than base beyond the noise:
// its interval lies wholly above base's.
func (p *CIPair) Significant() bool { return p == nil || p.NewLoUS > p.BaseHiUS }

// LatencyCIZ is the normal quantile of the intervals LatencyCI gives:
// 2.576, two-sided 99 %.
const LatencyCIZ = 2.576

// LatencyCI bounds the q-th quantile (0 < q < 1) of the distribution h was
// sampled from, with the order-statistic (binomial) interval: of n samples
// the number below the true quantile is Binomial(n, q), so the ranks
// n·q ± z·√(n·q·(1−q)) (normal approximation, z = LatencyCIZ) bracket it.
// The bounds are the histogram's values at those ranks. Few samples give a
// wide interval (at the tail, up to the maximum): a p99 of 45 requests is
// no evidence of anything.
func LatencyCI(h *hdrhistogram.Histogram, q float64) (lo, hi int64) {
	n := float64(h.TotalCount())
	if n == 0 {
		return 0, 0
	}
	half := LatencyCIZ * math.Sqrt(n*q*(1-q))
	rlo := math.Max(1, math.Floor(n*q-half))
	rhi := math.Min(n, math.Ceil(n*q+half)+1)
	return h.ValueAtPercentile(100 * rlo / n), h.ValueAtPercentile(100 * rhi / n)
}

func ciPair(b, n Latency, q float64) *CIPair {
	bh, err1 := b.Histogram()
	nh, err2 := n.Histogram()
	if err1 != nil || err2 != nil || b.Hist == "" || n.Hist == "" {
		return nil
	}
	var p CIPair
	p.BaseLoUS, p.BaseHiUS = LatencyCI(bh, q)
	p.NewLoUS, p.NewHiUS = LatencyCI(nh, q)
	return &p
}

// Breach is one gate broken by one subject (a step name, "run", a rule or a
// case id).
type Breach struct {
	Gate    Gate    `json:"gate"`
	Subject string  `json:"subject"`
	Value   float64 `json:"value"`
}

// String describes the breach for humans.
func (b Breach) String() string {
	return fmt.Sprintf("%s: %s = %.4g > %.4g", b.Subject, b.Gate.Metric, b.Value, b.Gate.Max)
}

// Comparison is the result of Compare.
type Comparison struct {
	Steps []StepDelta `json:"steps"`
	// Run is the run-wide error-rate delta (Name "run"; latency fields zero).
	Run StepDelta `json:"run"`
	// NewViolations are rules violated in new and not in base.
	NewViolations []string `json:"new_violations"`
	// Spared lists latency increases over a gate's percentage that did not
	// break it: under its MinDeltaUS floor, within the noise, or not judged
	// because the harness's send lag explains them (harness-bound).
	Spared []string `json:"spared,omitempty"`
	// Incomplete says which side was interrupted or incomplete (one
	// sentence each, led by "INTERRUPTED" or "INCOMPLETE": partialSides);
	// such a comparison also breaks GateComplete.
	Incomplete []string `json:"incomplete,omitempty"`
	Breaches   []Breach `json:"breaches"`
}

// OK reports whether no gate broke.
func (c *Comparison) OK() bool { return len(c.Breaches) == 0 }

// pctChange returns the change from base to new in percent of base. A base
// below the histogram resolution (0 µs) is taken as LowestUS, so the result
// stays finite (JSON cannot hold Inf).
func pctChange(base, new int64) float64 {
	return float64(new-base) / float64(max(base, LowestUS)) * 100
}

// Compare computes per-step regression deltas of new against base (steps
// matched by name; latency of steps absent from either side is not gated)
// and checks gates. Gates on conform-only metrics are ignored.
func Compare(base, new *Run, gates []Gate) (*Comparison, error) {
	if base == nil || new == nil {
		return nil, fmt.Errorf("reports: compare needs two runs")
	}
	c := &Comparison{Steps: compareSteps(base.Steps, new.Steps), NewViolations: newViolations(base, new), Breaches: []Breach{}}
	c.Run = StepDelta{Name: "run", InBase: true, InNew: true,
		BaseErrorRate: base.Totals.ErrorRate(), NewErrorRate: new.Totals.ErrorRate()}
	c.Run.ErrorRateChangePP = (c.Run.NewErrorRate - c.Run.BaseErrorRate) * 100
	c.Incomplete, c.Breaches = partialSides(c.Incomplete, c.Breaches, base.Headline(), new.Headline(), "run")
	for _, g := range gates {
		if err := c.checkGate(g); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// compareSteps returns the deltas of the steps matched by name: new's
// order, then the steps only base has.
func compareSteps(base, new []Series) []StepDelta {
	out := []StepDelta{}
	baseSteps := map[string]Series{}
	for _, s := range base {
		baseSteps[s.Name] = s
	}
	seen := map[string]bool{}
	for _, n := range new {
		b, ok := baseSteps[n.Name]
		seen[n.Name] = true
		out = append(out, stepDelta(b, n, ok, true))
	}
	for _, b := range base {
		if !seen[b.Name] {
			out = append(out, stepDelta(b, Series{}, true, false))
		}
	}
	return out
}

// stepDelta compares step b of the base with step n of the new run; the
// latency is compared only when both sides have the step and recorded it.
func stepDelta(b, n Series, inBase, inNew bool) StepDelta {
	d := StepDelta{
		Name: n.Name, InBase: inBase, InNew: inNew,
		BaseP50US: b.Latency.P50US, NewP50US: n.Latency.P50US,
		BaseP99US: b.Latency.P99US, NewP99US: n.Latency.P99US,
		BaseErrorRate: b.ErrorRate(), NewErrorRate: n.ErrorRate(),
	}
	if d.Name == "" {
		d.Name = b.Name
	}
	if inBase && inNew && b.Latency.Count > 0 && n.Latency.Count > 0 {
		d.HasLatency = true
		d.P50ChangePct = pctChange(d.BaseP50US, d.NewP50US)
		d.P99ChangePct = pctChange(d.BaseP99US, d.NewP99US)
		d.P50CI = ciPair(b.Latency, n.Latency, 0.50)
		d.P99CI = ciPair(b.Latency, n.Latency, 0.99)
		d.BaseLagP50US, d.NewLagP50US = b.SendLag.P50US, n.SendLag.P50US
		d.BaseLagP99US, d.NewLagP99US = b.SendLag.P99US, n.SendLag.P99US
	}
	d.ErrorRateChangePP = (d.NewErrorRate - d.BaseErrorRate) * 100
	return d
}

// newViolations returns, sorted, the rules violated in new and not in base.
func newViolations(base, new *Run) []string {
	out := []string{}
	baseRules := map[string]bool{}
	for _, v := range base.Violations {
		if v.Count > 0 {
			baseRules[v.Rule] = true
		}
	}
	for _, v := range new.Violations {
		if v.Count > 0 && !baseRules[v.Rule] {
			out = append(out, v.Rule)
		}
	}
	sort.Strings(out)
	return out
}

// breach records a breach of g by subject when v is over g's maximum.
func (c *Comparison) breach(g Gate, subject string, v float64) {
	if v > g.Max {
		c.Breaches = append(c.Breaches, Breach{Gate: g, Subject: subject, Value: v})
	}
}

// checkGate checks gate g against the deltas of c.
func (c *Comparison) checkGate(g Gate) error {
	switch g.Metric {
	case GateP50IncreasePct, GateP99IncreasePct:
		for _, d := range c.Steps {
			if d.HasLatency {
				c.checkLatency(g, d)
			}
		}
	case GateErrorRateIncreasePP:
		for _, d := range c.Steps {
			c.breach(g, d.Name, d.ErrorRateChangePP)
		}
		c.breach(g, "run", c.Run.ErrorRateChangePP)
	case GateNewViolations:
		if float64(len(c.NewViolations)) > g.Max {
			for _, r := range c.NewViolations {
				c.Breaches = append(c.Breaches, Breach{Gate: g, Subject: r, Value: float64(len(c.NewViolations))})
			}
		}
	case GateNewlyFailingCases:
	default:
		return fmt.Errorf("reports: unknown gate metric %q", g.Metric)
	}
	return nil
}

// checkLatency checks latency gate g (p50 or p99 increase) on step delta
// d: an increase over the gate is spared when under its MinDeltaUS floor,
// within the noise or explained by the harness's send lag.
func (c *Comparison) checkLatency(g Gate, d StepDelta) {
	pct, b, n, ci, name := d.P99ChangePct, d.BaseP99US, d.NewP99US, d.P99CI, "p99"
	bl, nl := d.BaseLagP99US, d.NewLagP99US
	if g.Metric == GateP50IncreasePct {
		pct, b, n, ci, name = d.P50ChangePct, d.BaseP50US, d.NewP50US, d.P50CI, "p50"
		bl, nl = d.BaseLagP50US, d.NewLagP50US
	}
	if pct <= g.Max {
		return
	}
	switch {
	case n-b <= g.MinDeltaUS:
		c.Spared = append(c.Spared, fmt.Sprintf("%s %s %s -> %s (%s): under the %s floor", d.Name, name, words.US(b), words.US(n), words.Signed(pct, "%"), words.US(g.MinDeltaUS)))
	case !ci.Significant():
		c.Spared = append(c.Spared, fmt.Sprintf("%s %s %s -> %s (%s): within the noise (99%% intervals %s-%s and %s-%s overlap)",
			d.Name, name, words.US(b), words.US(n), words.Signed(pct, "%"), words.US(ci.BaseLoUS), words.US(ci.BaseHiUS), words.US(ci.NewLoUS), words.US(ci.NewHiUS)))
	case LagExplains(n-b, nl):
		// Without its send lag the new figure would be
		// within the base's: no evidence against the server.
		// (The base's lag is not taken off its figure: that
		// would lower the base and judge more, not less.)
		c.Spared = append(c.Spared, fmt.Sprintf("%s %s %s -> %s (%s): not judged: harness-bound (send lag %s %s on the new side, %s on the base)",
			d.Name, name, words.US(b), words.US(n), words.Signed(pct, "%"), name, words.US(nl), words.US(bl)))
	default:
		c.breach(g, d.Name, pct)
	}
}

// CaseChange is a conform case whose verdict changed.
type CaseChange struct {
	ID          string `json:"id"`
	BaseVerdict string `json:"base_verdict"` // "" when the case is new
	NewVerdict  string `json:"new_verdict"`
}

// ConformComparison is the result of CompareConform.
type ConformComparison struct {
	// NewlyFailing are cases failing in new that were absent or not
	// failing in base; Fixed the reverse; Changed every verdict change.
	NewlyFailing []CaseChange `json:"newly_failing"`
	Fixed        []CaseChange `json:"fixed"`
	Changed      []CaseChange `json:"changed"`
	// Incomplete says which side was interrupted, as Comparison's does;
	// such a comparison also breaks GateComplete.
	Incomplete []string `json:"incomplete,omitempty"`
	Breaches   []Breach `json:"breaches"`
}

// OK reports whether no gate broke.
func (c *ConformComparison) OK() bool { return len(c.Breaches) == 0 }

// CompareConform lists verdict changes of new against base (cases matched by
// id, in new's order) and checks GateNewlyFailingCases; other gates are
// ignored.
func CompareConform(base, new *Conform, gates []Gate) (*ConformComparison, error) {
	if base == nil || new == nil {
		return nil, fmt.Errorf("reports: compare needs two conform results")
	}
	c := &ConformComparison{NewlyFailing: []CaseChange{}, Fixed: []CaseChange{}, Changed: []CaseChange{}, Breaches: []Breach{}}
	bv := map[string]string{}
	for _, k := range base.Cases {
		bv[k.ID] = k.Verdict
	}
	for _, k := range new.Cases {
		old, ok := bv[k.ID]
		if ok && old == k.Verdict {
			continue
		}
		ch := CaseChange{ID: k.ID, BaseVerdict: old, NewVerdict: k.Verdict}
		c.Changed = append(c.Changed, ch)
		switch {
		case k.Verdict == VerdictFail:
			c.NewlyFailing = append(c.NewlyFailing, ch)
		case old == VerdictFail:
			c.Fixed = append(c.Fixed, ch)
		}
	}
	for _, g := range gates {
		switch g.Metric {
		case GateNewlyFailingCases:
			if n := float64(len(c.NewlyFailing)); n > g.Max {
				for _, ch := range c.NewlyFailing {
					c.Breaches = append(c.Breaches, Breach{Gate: g, Subject: ch.ID, Value: n})
				}
			}
		case GateP50IncreasePct, GateP99IncreasePct, GateErrorRateIncreasePP, GateNewViolations:
		default:
			return nil, fmt.Errorf("reports: unknown gate metric %q", g.Metric)
		}
	}
	c.Incomplete, c.Breaches = partialSides(c.Incomplete, c.Breaches, base.Headline(), new.Headline(), "suite")
	return c, nil
}

// partialSides appends, for each side (base, then new) whose headline is
// partial, the line a comparison leads with — its headline with the side
// named, "INTERRUPTED new run: the run was stopped after …" — and a
// GateComplete breach. what names the document: "run" or "suite".
func partialSides(lines []string, breaches []Breach, base, new Headline, what string) ([]string, []Breach) {
	for _, side := range []struct {
		name string
		hl   Headline
	}{{"base", base}, {"new", new}} {
		if !side.hl.Partial() {
			continue
		}
		subject := side.name + " " + what
		status, text, _ := strings.Cut(side.hl.Text, " · ")
		lines = append(lines, status+" "+subject+": "+text)
		breaches = append(breaches, Breach{Gate: Gate{Metric: GateComplete}, Subject: subject, Value: 1})
	}
	return lines, breaches
}
