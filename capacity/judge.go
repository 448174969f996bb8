package capacity

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// Judgement bounds what Judge calls the harness's fault.
type Judgement struct {
	// Warmup is left out of the step's figures (its time series from
	// that second on); 0 when the warm-up ran apart (EngineRunner).
	Warmup time.Duration
	// LagBound: a send lag p99 above it means the harness could not
	// keep the schedule (harness-bound), whatever the thresholds say.
	LagBound time.Duration
	// Length is the step's planned length, warm-up included: the
	// throughput's time base (0: the run's own duration, which ends at its
	// last sample).
	Length time.Duration
	// Embedded: the server runs in this process, so the harness's CPU
	// figure is the server's too and saturation is not judged from it.
	Embedded bool
	// CPUShare: the harness's own CPU over the step at or above this
	// share of its cores is saturated (not judged when the server is
	// embedded: its CPU is then the server's too).
	CPUShare float64
	// Workers: the run's shard runs are local worker processes
	// (`--workers`) on this machine, none of which holds the embedded
	// server: each one's CPU is judged even when the server is embedded,
	// and so is their sum against the machine's cores, which they share.
	Workers bool
}

// DefaultJudgement is `capacity`'s defaults.
var DefaultJudgement = Judgement{Warmup: 2 * time.Second, LagBound: 100 * time.Millisecond, CPUShare: 0.95}

// Judge turns one step's run into its CapacityStep: the figures after the
// warm-up, and the verdict, in this order: TARGET DOWN (the target went
// down: that is the finding), HARNESS-BOUND (sessions could not open
// their socket or were dropped late, a worker or shard left no result,
// the send lag p99 is over LagBound, the harness's CPU saturated, or
// every breach is one the send lag explains: result.Run.HarnessBound),
// FAIL (a threshold breached, a protocol violation, a step that never
// succeeded), else PASS.
//
// When r merges the runs of several processes (`--workers`, or the
// shards of a sharded ladder), parts are those runs: the harness-bound
// judgement then also sees each one alone, so one late worker is not
// averaged away by the others (its send lag p99 over LagBound, its CPU
// over its own run's length).
func (j Judgement) Judge(r *result.Run, load float64, parts ...*result.Run) result.CapacityStep {
	st := result.CapacityStep{Load: load}
	from := int64(math.Ceil(j.Warmup.Seconds()))
	w := r.After(from)
	st.Requests = w.Requests
	// Answered requests a second, over the time the step ran after its
	// warm-up (the last second of its series is a part of one).
	length := j.Length
	if length <= 0 {
		length = r.DurationNS
	}
	if judged := length - time.Duration(from)*time.Second; judged > 0 && w.Seconds > 0 {
		st.Throughput = math.Round(float64(w.Requests-w.Errors)/math.Min(judged.Seconds(), float64(w.Seconds))*10) / 10
	}
	if w.Requests > 0 {
		st.ErrorRate = float64(w.Errors) / float64(w.Requests)
	}
	st.P50US, st.P99US = w.P50US, w.P99US
	for _, s := range r.Steps {
		st.SendLagP99US = max(st.SendLagP99US, s.SendLag.P99US)
	}
	for _, v := range r.Violations {
		if v.Count > 0 {
			if st.Violations == nil {
				st.Violations = map[string]int64{}
			}
			st.Violations[v.Rule] += v.Count
		}
	}
	if tp := r.TargetProcess; tp != nil {
		st.ServerCPUSeconds = tp.CPUNS.Seconds()
		st.ServerPeakRSSBytes = tp.PeakRSSBytes
	}
	hl := r.Headline()
	st.Headline = hl.Text
	if len(r.DownOutages()) > 0 {
		st.Verdict, st.Why = result.CapTargetDown, strings.TrimPrefix(r.TargetDown, "TARGET DOWN · ")
		if st.Why == "" {
			st.Why = strings.TrimPrefix(hl.Text, "TARGET DOWN · ")
		}
		return st
	}
	if why := j.harnessBound(r, hl, parts); why != "" {
		st.Verdict, st.Why = result.CapHarnessBound, why
		return st
	}
	if broke := Broke(r); len(broke) > 0 {
		st.Verdict, st.Broke = result.CapFail, broke
		return st
	}
	st.Verdict = result.CapPass
	return st
}

// harnessBound says why the harness could not offer the step's load, or
// "" when it could.
func (j Judgement) harnessBound(r *result.Run, hl result.Headline, parts []*result.Run) string {
	var why []string
	for _, in := range r.Incomplete {
		// A worker or shard that left no result: its stderr tail is in
		// the run's own reports, not in a step's one line.
		in, _, _ = strings.Cut(in, "; its stderr ended")
		why = append(why, in)
	}
	if s := r.Sessions; s != nil {
		if s.FailedStarts > 0 {
			why = append(why, words.Count(s.FailedStarts, "session")+" could not open a socket")
		}
		if s.DroppedLate > 0 {
			why = append(why, words.Count(s.DroppedLate, "start")+" dropped late (the generator fell behind)")
		}
	}
	// A closed-model step whose clients did not all come up.
	why = append(why, r.ClientsShort()...)
	if j.LagBound > 0 {
		if lag := sendLagP99(r); lag > j.LagBound {
			why = append(why, fmt.Sprintf("send lag p99 %v over %v", lag, j.LagBound))
		} else {
			for _, p := range parts {
				if lag := sendLagP99(p); lag > j.LagBound {
					why = append(why, fmt.Sprintf("%s's send lag p99 %v over %v", j.partName(p), lag, j.LagBound))
				}
			}
		}
	}
	if j.CPUShare > 0 && (!j.Embedded || j.Workers) {
		why = append(why, j.cpuBound(r, parts)...)
	}
	if hl.Status == result.StatusInconclusive {
		// Every breach harness-bound. (An incomplete run's reasons,
		// failed starts and missing results, are listed above.)
		_, rest, ok := strings.Cut(hl.Text, " · ")
		if !ok {
			rest = hl.Text
		}
		why = append(why, strings.TrimPrefix(rest, "harness-bound: "))
	}
	return strings.Join(why, "; ")
}

// cpuBound says which of the run's processes saturated their cores: each
// process over the time it ran (a part's own length when parts are given,
// else the run's), and with local workers their sum against the cores of
// the machine they share.
func (j Judgement) cpuBound(r *result.Run, parts []*result.Run) []string {
	type proc struct {
		shard string
		h     result.Harness
		d     time.Duration
	}
	var procs []proc
	if len(parts) > 0 {
		for _, p := range parts {
			for _, sr := range p.ShardRuns {
				if !sr.Embedded {
					procs = append(procs, proc{sr.Shard, sr.Harness, p.DurationNS})
				}
			}
		}
	} else {
		for _, sr := range r.ShardRuns {
			if !sr.Embedded {
				procs = append(procs, proc{sr.Shard, sr.Harness, r.DurationNS})
			}
		}
	}
	var why []string
	var sum float64
	cores := 0
	for _, p := range procs {
		if p.h.GOMAXPROCS == 0 || p.d <= 0 {
			continue
		}
		share := p.h.CPUSeconds / p.d.Seconds() / float64(p.h.GOMAXPROCS)
		who := "the harness's"
		if len(procs) > 1 {
			who = "worker " + p.shard + "'s"
			if !j.Workers {
				who = "shard " + p.shard + "'s"
			}
		}
		if share >= j.CPUShare {
			why = append(why, fmt.Sprintf("%s CPU at %.0f%% of %d cores", who, share*100, p.h.GOMAXPROCS))
		}
		sum += p.h.CPUSeconds / p.d.Seconds()
		cores = max(cores, p.h.GOMAXPROCS)
	}
	if j.Workers && len(procs) > 1 && len(why) == 0 && cores > 0 && sum/float64(cores) >= j.CPUShare {
		why = append(why, fmt.Sprintf("the %d workers' CPU together at %.0f%% of this machine's %d cores", len(procs), sum/float64(cores)*100, cores))
	}
	return why
}

// sendLagP99 is the worst step's send lag p99 of r.
func sendLagP99(r *result.Run) time.Duration {
	lag := int64(0)
	for _, s := range r.Steps {
		lag = max(lag, s.SendLag.P99US)
	}
	return time.Duration(lag) * time.Microsecond
}

// partName names one process's run of a merge: "worker 1/2" (a
// --workers worker) or "shard 1/2", from the shard its ShardRuns name.
func (j Judgement) partName(p *result.Run) string {
	who := "shard"
	if j.Workers {
		who = "worker"
	}
	if len(p.ShardRuns) == 1 {
		return who + " " + p.ShardRuns[0].Shard
	}
	return "a " + who
}

// Broke is what broke in a run, first first: what can be placed in time
// (a rule's first sample; an error-rate threshold's first second over
// its limit, a latency threshold's first second whose p50 or p99 is, in
// the run's time series) by when it broke, then the rest of the breached
// thresholds the harness's lag does not explain, most breached first
// (observed over limit), then the steps that never succeeded.
func Broke(r *result.Run) []string {
	type item struct {
		text  string
		at    time.Duration // -1: cannot tell
		ratio float64
	}
	var items []item
	for _, t := range r.Thresholds {
		if t.Pass {
			continue
		}
		if _, ok := r.HarnessBound(t); ok {
			continue
		}
		text := fmt.Sprintf("%s (measured %s)", t.Name, t.ObservedText())
		at := onset(r, t)
		if at >= 0 {
			text = fmt.Sprintf("%s (measured %s, over from +%ds)", t.Name, t.ObservedText(), int64(at.Seconds()))
		}
		items = append(items, item{text, at, breachRatio(t)})
	}
	for _, v := range r.Violations {
		if v.Count <= 0 {
			continue
		}
		at := time.Duration(-1)
		for _, s := range v.Samples {
			if at < 0 || s.OffsetNS < at {
				at = s.OffsetNS
			}
		}
		items = append(items, item{fmt.Sprintf("rule %s (%s)", v.Rule, words.Count(v.Count, "violation")), at, math.Inf(1)})
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		switch {
		case a.at >= 0 && b.at >= 0:
			return a.at < b.at
		case a.at >= 0 || b.at >= 0:
			return a.at >= 0
		}
		return a.ratio > b.ratio
	})
	var out []string
	for _, it := range items {
		out = append(out, it.text)
	}
	for _, s := range r.StepsNeverSucceeded() {
		out = append(out, "step "+s.Name+" never succeeded")
	}
	return out
}

// onset is the start of the first second of r's time series in which t's
// limit was already broken, when the series can tell: an upper bound on
// an error rate (errors.rate, STEP.error_rate: that second's errors over
// its requests) or on a latency (STEP.p50 against the second's p50; p90,
// p99, p999, max against its p99: a lower bound of them). -1 otherwise.
func onset(r *result.Run, t result.ThresholdResult) time.Duration {
	if t.Op != "<" && t.Op != "<=" || t.NoData {
		return -1
	}
	over := func(v float64) bool { return v > t.Limit || t.Op == "<" && v == t.Limit }
	var value func(p result.Point) (float64, bool)
	stat := t.Metric[strings.LastIndex(t.Metric, ".")+1:]
	switch {
	case t.Metric == "errors.rate" || stat == "error_rate":
		value = func(p result.Point) (float64, bool) {
			return float64(p.Errors) / float64(p.Requests), p.Requests > 0
		}
	case stat == "p50":
		value = func(p result.Point) (float64, bool) { return float64(p.P50US) / 1e6, p.Requests > 0 }
	case stat == "p90" || stat == "p99" || stat == "p999" || stat == "max":
		value = func(p result.Point) (float64, bool) { return float64(p.P99US) / 1e6, p.Requests > 0 }
	default:
		return -1
	}
	for _, p := range r.TimeSeries {
		if v, ok := value(p); ok && over(v) {
			return time.Duration(p.Second) * time.Second
		}
	}
	return -1
}

// breachRatio is how far a breached threshold is past its limit, as a
// ratio (no data: infinitely).
func breachRatio(t result.ThresholdResult) float64 {
	if t.NoData {
		return math.Inf(1)
	}
	a, b := t.Observed, t.Limit
	if t.Op == ">" || t.Op == ">=" {
		a, b = b, a
	}
	if b <= 0 {
		return math.Abs(a-b) + 1
	}
	return a / b
}
