package result

import (
	"fmt"
	"math"
	"slices"
)

// Threshold is a pass condition on one metric of a run, "join.p99 < 20ms"
// as {Name: "join.p99 < 20ms", Metric: "join.p99", Op: "<", Limit: 0.020}:
// what Evaluate judges. A scenario's thresholds are parsed by package
// scenario (with their file:line errors; scenario.Threshold.Condition);
// a stored verdict gives back the one it was judged by (ThresholdOf).
type Threshold struct {
	Name   string // as written
	Metric string // whole: "join.p99", "errors.rate" (RunMetrics' names)
	Op     string // one of Ops
	// Limit is in the metric's canonical unit: seconds for latencies,
	// fractions for ratios, per second for rates, plain counts.
	Limit float64
	// Default: one of the run's default gates (DefaultErrorGate, DefaultSilentGate), not a
	// threshold the scenario wrote.
	Default bool
}

// DefaultErrorGate is the error gate every run is judged by unless its
// scenario gives its own overall error threshold (errors.rate or
// errors.count: WithDefaultGate) or turns the default gates off (the
// scenario's default_error_gate: false, `run --no-default-gate`): a run
// whose requests fail must not read PASS because its author wrote no
// error threshold. 1 % is the error budget k6's documentation gives its
// own failed-request rate (http_req_failed: rate<0.01). errors.rate is
// Totals.ErrorRate: every failed request over the completed ones, so a
// timeout (ReasonTimeout: no reply after every retry) counts, as k6 and
// vegeta count one; a request cut by the end of the run (Totals.Cut) does
// not: it has no outcome, and every run ends with requests in flight that
// a healthy server would have answered. A run whose every request was cut
// has no rate: the gate fails with no data, as any threshold does.
// Its name says it is the default in every format.
var DefaultErrorGate = Threshold{Name: "errors.rate < 1% (default)", Metric: "errors.rate", Op: "<", Limit: 0.01, Default: true}

// DefaultSilentGate judges what DefaultErrorGate cannot: the requests the
// end of the run cut after they had had no reply for SilentAfter or their
// whole timeout (Run.SilentCutRate). A server that drops requests leaves
// most of them so in a run not much longer than their timeout, where few
// time out: without it such a run read PASS. The same 1 %, and the same
// ways to replace it (a scenario's threshold on cut_silent.rate or
// cut_silent.count, or on errors.rate or errors.count: its author has said
// what error budget holds) or turn it off.
var DefaultSilentGate = Threshold{Name: "cut_silent.rate < 1% (default)", Metric: "cut_silent.rate", Op: "<", Limit: 0.01, Default: true}

// WithDefaultGate is ts and, last, the default gates a threshold of ts
// does not replace: DefaultErrorGate unless one of ts is an overall error
// threshold (errors.rate, errors.count), DefaultSilentGate unless one of
// ts is that or on cut_silent.rate or cut_silent.count.
func WithDefaultGate(ts []Threshold) []Threshold {
	errs, silent := false, false
	for _, t := range ts {
		switch t.Metric {
		case "errors.rate", "errors.count":
			errs, silent = true, true
		case "cut_silent.rate", "cut_silent.count":
			silent = true
		}
	}
	out := slices.Clip(ts)
	if !errs {
		out = append(out, DefaultErrorGate)
	}
	if !silent {
		out = append(out, DefaultSilentGate)
	}
	return out
}

// Ops are the comparisons a threshold may make, longest first for
// parsing.
var Ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// Lookup gives a metric's value in canonical units (see Threshold.Limit);
// false when the run produced none.
type Lookup func(metric string) (float64, bool)

// Holds reports whether v satisfies the threshold. NaN satisfies none.
func (t Threshold) Holds(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	switch t.Op {
	case "<":
		return v < t.Limit
	case "<=":
		return v <= t.Limit
	case ">":
		return v > t.Limit
	case ">=":
		return v >= t.Limit
	case "==":
		return v == t.Limit
	case "!=":
		return v != t.Limit
	}
	return false
}

// verdict fills tr's Observed, Pass and NoData from lookup: a metric
// lookup cannot find fails its threshold (a threshold never passes
// silently) and is NoData with Observed 0 (JSON has no NaN).
func (t Threshold) verdict(tr *ThresholdResult, lookup Lookup) {
	v, found := lookup(t.Metric)
	if !found {
		tr.Observed, tr.Pass, tr.NoData = 0, false, true
		return
	}
	tr.Observed, tr.Pass, tr.NoData = v, t.Holds(v), false
}

// Evaluate judges every threshold against the metrics lookup returns and
// gives the verdicts as a run stores them: the threshold as written, its
// metric whole ("join.p99", Step empty), limit and observed value in
// canonical units. ok is true when all pass.
func Evaluate(ts []Threshold, lookup Lookup) (out []ThresholdResult, ok bool) {
	ok = true
	out = make([]ThresholdResult, 0, len(ts))
	for _, t := range ts {
		tr := ThresholdResult{Name: t.Name, Metric: t.Metric, Op: t.Op, Limit: t.Limit, Default: t.Default}
		t.verdict(&tr, lookup)
		ok = ok && tr.Pass
		out = append(out, tr)
	}
	return out, ok
}

// EvaluateThresholds judges ts against run's own figures (RunMetrics) and
// stores the verdicts in run.Thresholds. ok is true when all pass.
func EvaluateThresholds(run *Run, ts []Threshold) (ok bool) {
	run.Thresholds, ok = Evaluate(ts, RunMetrics(run))
	return ok
}

// ThresholdOf rebuilds the threshold a stored verdict was judged by: every
// field Evaluate needs is in the ThresholdResult, in canonical units,
// whether the metric is stored whole ("join.p99") or split (Step "join",
// Metric "p99", as older files have it).
func ThresholdOf(tr ThresholdResult) (Threshold, error) {
	if !slices.Contains(Ops, tr.Op) {
		return Threshold{}, fmt.Errorf("threshold %q has unknown comparison %q", tr.Name, tr.Op)
	}
	metric := tr.Metric
	if tr.Step != "" {
		metric = tr.Step + "." + tr.Metric
	}
	return Threshold{Name: tr.Name, Metric: metric, Op: tr.Op, Limit: tr.Limit, Default: tr.Default}, nil
}

// Reevaluate judges merged shards again by the thresholds their results
// carry (runs[i] named names[i] in messages): those of the first shard
// that has any, evaluated against lookup (the merged run's metrics). Each
// verdict keeps the shard's naming (metric whole or split) and gets the
// merged figure. warn is set when shards carry different thresholds; ok
// is false when one fails on the merge. A shard whose stored threshold
// cannot be read is an error naming it.
func Reevaluate(runs []*Run, names []string, lookup Lookup) (out []ThresholdResult, ok bool, warn string, err error) {
	first := slices.IndexFunc(runs, func(r *Run) bool { return len(r.Thresholds) > 0 })
	if first < 0 {
		return []ThresholdResult{}, true, "", nil
	}
	key := func(r *Run) []string {
		var k []string
		for _, t := range r.Thresholds {
			k = append(k, t.Name)
		}
		return k
	}
	for i, r := range runs {
		if len(r.Thresholds) > 0 && !slices.Equal(key(r), key(runs[first])) {
			warn = fmt.Sprintf("%s and %s carry different thresholds; evaluating those of %s", names[first], names[i], names[first])
			break
		}
	}
	src := runs[first].Thresholds
	ts := make([]Threshold, 0, len(src))
	for _, tr := range src {
		t, err := ThresholdOf(tr)
		if err != nil {
			return nil, false, "", fmt.Errorf("%s: %w", names[first], err)
		}
		ts = append(ts, t)
	}
	ok = true
	out = make([]ThresholdResult, 0, len(src))
	for i, t := range ts {
		tr := src[i]
		t.verdict(&tr, lookup)
		ok = ok && tr.Pass
		out = append(out, tr)
	}
	return out, ok, warn, nil
}
