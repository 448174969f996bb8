package scenario

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lobbybench/lobbybench/result"
)

// Unit is the kind of quantity a metric holds. Values are canonical:
// seconds for latencies, fractions (0.01 = 1%) for ratios, plain numbers
// for counts, events per second for rates.
type Unit string

// Metric units.
const (
	Latency Unit = "latency" // seconds; thresholds must say "20ms"
	Ratio   Unit = "ratio"   // fraction; thresholds say "1%" (or a plain 0..1 fraction)
	Count   Unit = "count"   // plain number
	Rate    Unit = "rate"    // per second; thresholds say "500/s"
)

// StepStats are the per-step metric suffixes: "<label>.<suffix>".
var StepStats = map[string]Unit{
	"p50": Latency, "p90": Latency, "p99": Latency, "p999": Latency, "max": Latency, "min": Latency, "mean": Latency,
	"count": Count, "errors": Count, "error_rate": Ratio, "timeouts": Count, "retries": Count,
	// the harness's own lateness: actual first send minus intended send
	"send_lag.p50": Latency, "send_lag.p99": Latency, "send_lag.max": Latency,
	// payload bytes the step sent and received
	result.MeasureDataSent: Count, result.MeasureDataReceived: Count,
}

// GlobalMetrics are the run-wide metrics every engine reports.
var GlobalMetrics = map[string]Unit{
	"requests":           Count, // requests sent (first sends, not retries)
	"retries":            Count, // re-sends after a timeout
	"timeouts":           Count, // requests that got no reply after every retry
	"errors.count":       Count, // failed steps of any kind
	"errors.rate":        Ratio, // errors.count / requests
	"cut_silent.count":   Count, // requests the end cut after 1 s or their timeout unanswered
	"cut_silent.rate":    Ratio, // cut_silent.count / (completed requests + cut_silent.count)
	"violations":         Count, // protocol violations (conformance rules broken)
	"dropped_starts":     Count, // open model: arrivals not started (max_clients reached or engine behind)
	"sessions.started":   Count,
	"sessions.completed": Count, // sessions that ran every step without error
	"sessions.failed":    Count, // sessions that ended in an error (or could not be set up)
	"clients.max":        Count, // peak sessions live at once (merged: sum of the shards' peaks)
	"throughput":         Rate,  // successful requests per second over the run
	// the lobby's own measures (result/lobby.go)
	result.MeasureDataSent:     Count, // payload bytes the simulated clients sent
	result.MeasureDataReceived: Count, // and received
}

// MeasureStats are the statistics of the lobby's duration measures
// (result.MeasureTimeToGame, result.MeasureRoomFill):
// "time_to_game.p99", "room_fill.count".
var MeasureStats = map[string]Unit{
	"p50": Latency, "p90": Latency, "p99": Latency, "p999": Latency, "max": Latency, "min": Latency, "mean": Latency,
	"count": Count,
}

// Extra per-step metrics for some step kinds.
var kindStats = map[StepKind]map[string]Unit{
	RateProbe: {"limit": Rate},                   // first rate where loss exceeded the step's loss
	Malformed: {"replies": Count, "sent": Count}, // replies to malformed packets (should be 0 on UDP)
}

// KnownMetrics returns every metric name a threshold on p may use, with
// its unit: the global metrics, the lobby measures' statistics, and for
// each step label in the flows the step statistics.
func KnownMetrics(p *Plan) map[string]Unit {
	m := make(map[string]Unit, len(GlobalMetrics))
	for k, u := range GlobalMetrics {
		m[k] = u
	}
	for _, name := range []string{result.MeasureTimeToGame, result.MeasureRoomFill} {
		for suf, u := range MeasureStats {
			m[name+"."+suf] = u
		}
	}
	for _, f := range p.Flows {
		for _, s := range f.Steps {
			for suf, u := range StepStats {
				m[s.Label+"."+suf] = u
			}
			for suf, u := range kindStats[s.Kind] {
				m[s.Label+"."+suf] = u
			}
		}
	}
	return m
}

// Op is a threshold comparison, one of result.Ops.
type Op string

// Threshold is a parsed "metric op value" pass condition, e.g.
// "join.p99 < 20ms" is {Metric: "join.p99", Op: "<", Value: 0.020, Unit: Latency}.
type Threshold struct {
	Source string // as written
	Metric string
	Op     Op
	Value  float64 // canonical units (see Unit)
	Unit   Unit
	Line   int
}

// String returns the threshold as written.
func (t Threshold) String() string { return t.Source }

// Condition is t as package result evaluates it (result.Evaluate): its
// name as written, its metric, comparison and value in canonical units.
func (t Threshold) Condition() result.Threshold {
	return result.Threshold{Name: t.Source, Metric: t.Metric, Op: string(t.Op), Limit: t.Value}
}

// Conditions are the plan's thresholds as package result evaluates them,
// in order (Threshold.Condition), then the default gates none of them
// replaces (result.WithDefaultGate), unless the plan turns them off
// (NoDefaultGate).
func (p *Plan) Conditions() []result.Threshold {
	out := make([]result.Threshold, 0, len(p.Thresholds)+2)
	for _, t := range p.Thresholds {
		out = append(out, t.Condition())
	}
	if p.NoDefaultGate {
		return out
	}
	return result.WithDefaultGate(out)
}

// noDefaultGate reads default_error_gate (n nil: not given): true or
// false, the latter turning the default gates off.
func (d *decoder) noDefaultGate(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	v, ok := d.oneOf(n, "default_error_gate", []string{"true", "false"})
	return ok && v == "false"
}

var metricWordRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
var metricRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`)

// ParseThreshold parses "metric op value" and checks the metric against
// known (name → unit) and the value's unit against the metric's.
func ParseThreshold(s string, known map[string]Unit) (Threshold, error) {
	t := Threshold{Source: strings.TrimSpace(s)}
	idx, op := -1, Op("")
	for _, o := range result.Ops {
		if i := strings.Index(s, o); i >= 0 && (idx < 0 || i < idx) {
			idx, op = i, Op(o)
		}
	}
	if idx < 0 {
		return t, fmt.Errorf("threshold %q has no comparison (want e.g. \"join.p99 < 20ms\"; ops: < <= > >= == !=)", t.Source)
	}
	t.Op = op
	t.Metric = strings.TrimSpace(s[:idx])
	val := strings.TrimSpace(s[idx+len(op):])
	if !metricRE.MatchString(t.Metric) {
		return t, fmt.Errorf("threshold %q: %q is not a metric name", t.Source, t.Metric)
	}
	unit, ok := known[t.Metric]
	if !ok {
		names := make([]string, 0, len(known))
		for k := range known {
			names = append(names, k)
		}
		slices.Sort(names)
		return t, fmt.Errorf("threshold %q: unknown metric %q%s", t.Source, t.Metric, suggest(t.Metric, names))
	}
	t.Unit = unit
	if val == "" {
		return t, fmt.Errorf("threshold %q has no value after %s", t.Source, op)
	}
	v, err := parseValue(val, unit)
	if err != nil {
		return t, fmt.Errorf("threshold %q: %s is a %s: %v", t.Source, t.Metric, unit, err)
	}
	t.Value = v
	return t, nil
}

func parseValue(s string, u Unit) (float64, error) {
	switch u {
	case Latency:
		if _, err := strconv.ParseFloat(s, 64); err == nil && s != "0" {
			return 0, fmt.Errorf("give a unit, e.g. %sms", s)
		}
		d, err := parseSignedDuration(s)
		return d.Seconds(), err
	case Ratio:
		if strings.HasSuffix(s, "%") {
			return ParsePercent(s)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, fmt.Errorf("want a percentage like 1%% (or a fraction 0-1), got %q", s)
		}
		return f, nil
	case Rate:
		return ParseRate(s)
	default:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("want a plain number, got %q", s)
		}
		return f, nil
	}
}

func parseSignedDuration(s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return d, nil
}

func (d *decoder) thresholds(n *yaml.Node, known map[string]Unit) []Threshold {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.errf(n, "thresholds must be a list of \"metric op value\" strings, got %s", describe(n))
		return nil
	}
	var out []Threshold
	for _, it := range n.Content {
		s, ok := d.scalar(it, "threshold")
		if !ok {
			continue
		}
		t, err := ParseThreshold(s, known)
		if _, isKnown := known[t.Metric]; err != nil && !isKnown && d.rejected[strings.SplitN(t.Metric, ".", 2)[0]] {
			continue // its step was rejected and reported already
		}
		if err != nil {
			d.errf(it, "%v", err)
			continue
		}
		t.Line = it.Line
		out = append(out, t)
	}
	return out
}
