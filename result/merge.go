package result

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/internal/words"
)

// Merge combines the results of the shards of one sharded run exactly:
// histograms are merged with hdrhistogram's Merge and their percentiles
// recomputed, counters summed, time-series points aligned by their second
// offset, violations merged per rule (samples kept in shard order up to
// MaxViolationSamples), malformed findings summed per kind and rate-limit
// findings concatenated, the lobby measures merged (histograms merged,
// players summed per second, bytes summed). Steps and messages are matched by name, keeping the
// first shard's order. Sessions are summed when every run has them (nil
// otherwise, since a partial sum would undercount); ShardRuns and
// Incomplete are concatenated, and a run that measured nothing
// (NotStarted) adds only a sentence to Incomplete. Thresholds are dropped: evaluate them again on the merged
// result. Inputs are not modified.
func Merge(runs ...*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("reports: merge of no runs")
	}
	out := NewRun()
	out.Shards = 0
	m := newRunMerger()
	for i, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("reports: merge: run %d is nil", i)
		}
		if r.Kind != KindRun || r.SchemaVersion != SchemaVersion {
			return nil, fmt.Errorf("reports: merge: run %d is kind %q version %d, want %q version %d", i, r.Kind, r.SchemaVersion, KindRun, SchemaVersion)
		}
		if i == 0 {
			out.Scenario, out.Target = r.Scenario, r.Target
		}
		if r.NotStarted != nil {
			// Its load is missing: the merge says so first (INCOMPLETE).
			out.Incomplete = append(out.Incomplete, fmt.Sprintf("run %d of the merge measured nothing (%s)", i+1, r.NotStarted.headline().Text))
			continue
		}
		if err := m.add(out, i, r); err != nil {
			return nil, err
		}
	}
	if err := m.result(out); err != nil {
		return nil, err
	}
	return out, nil
}

// runMerger holds what Merge accumulates over the runs beside out itself.
type runMerger struct {
	end         time.Time // the latest end of a run
	steps, msgs *seriesMerger
	points      map[int64]*pointAcc
	viol        map[string]*Violation
	violOrder   []string
	mal         map[string]*MalformedFinding
	malOrder    []string
	sessions    *Sessions // nil once a run lacks them
	outages     []Outage
	lobby       *lobbyMerger
}

func newRunMerger() *runMerger {
	return &runMerger{
		steps: newSeriesMerger(), msgs: newSeriesMerger(),
		points:   map[int64]*pointAcc{},
		viol:     map[string]*Violation{},
		mal:      map[string]*MalformedFinding{},
		sessions: &Sessions{},
		lobby:    newLobbyMerger(),
	}
}

// add merges run i, r, into out and m.
func (m *runMerger) add(out *Run, i int, r *Run) error {
	if out.StartedAt.IsZero() || (!r.StartedAt.IsZero() && r.StartedAt.Before(out.StartedAt)) {
		out.StartedAt = r.StartedAt
	}
	if e := r.StartedAt.Add(r.DurationNS); e.After(m.end) {
		m.end = e
	}
	out.Shards += max(r.Shards, 1)
	addTotals(&out.Totals, &r.Totals)
	m.outages = append(m.outages, r.Outages...)
	if s := r.SilentAtEnd; s != nil && (out.SilentAtEnd == nil || s.SinceNS > out.SilentAtEnd.SinceNS) {
		// Each shard's watchdog probes the same target: the shortest
		// silence any saw is the one they all agree on.
		c := *s
		out.SilentAtEnd = &c
	}
	if out.Drill == nil && r.Drill != nil {
		out.Drill = r.Drill // made by the one process that owns the target
	}
	if err := m.steps.add(r.Steps); err != nil {
		return fmt.Errorf("reports: merge run %d: %w", i, err)
	}
	if err := m.msgs.add(r.Messages); err != nil {
		return fmt.Errorf("reports: merge run %d: %w", i, err)
	}
	if err := m.lobby.add(i, r); err != nil {
		return err
	}
	if err := m.addPoints(i, r.TimeSeries); err != nil {
		return err
	}
	m.addViolations(r.Violations)
	m.addMalformed(r.Malformed)
	out.RateLimits = append(out.RateLimits, r.RateLimits...)
	if r.Sessions == nil {
		m.sessions = nil
	} else if m.sessions != nil {
		m.sessions.Add(*r.Sessions)
	}
	out.ShardRuns = append(out.ShardRuns, r.ShardRuns...)
	out.Incomplete = append(out.Incomplete, r.Incomplete...)
	return nil
}

// addTotals sums the counters of src into t.
func addTotals(t, src *Totals) {
	t.Requests += src.Requests
	t.Successes += src.Successes
	t.Failures += src.Failures
	t.Retries += src.Retries
	t.Dropped += src.Dropped
	t.Cut += src.Cut
	t.Violations += src.Violations
	t.SessionsStarted += src.SessionsStarted
	t.SessionsFinished += src.SessionsFinished
	t.DataSent += src.DataSent
	t.DataReceived += src.DataReceived
	addReasons(t.FailuresByReason, src.FailuresByReason)
	if len(src.FailuresWhileDown) > 0 {
		if t.FailuresWhileDown == nil {
			t.FailuresWhileDown = map[string]int64{}
		}
		addReasons(t.FailuresWhileDown, src.FailuresWhileDown)
	}
}

// addPoints merges the time series of run i by second offset.
func (m *runMerger) addPoints(i int, series []Point) error {
	for _, p := range series {
		acc := m.points[p.Second]
		if acc == nil {
			acc = &pointAcc{h: NewSecondHistogram()}
			m.points[p.Second] = acc
		}
		acc.requests += p.Requests
		acc.errors += p.Errors
		h, err := p.Histogram()
		if err != nil {
			return fmt.Errorf("reports: merge run %d second %d: %w", i, p.Second, err)
		}
		if d := acc.h.Merge(h); d != 0 {
			return fmt.Errorf("reports: merge run %d second %d: %d values out of range", i, p.Second, d)
		}
	}
	return nil
}

// addViolations merges violations per rule, keeping samples in shard
// order up to MaxViolationSamples.
func (m *runMerger) addViolations(vs []Violation) {
	for _, v := range vs {
		acc := m.viol[v.Rule]
		if acc == nil {
			acc = &Violation{Rule: v.Rule, Samples: []ViolationSample{}}
			m.viol[v.Rule] = acc
			m.violOrder = append(m.violOrder, v.Rule)
		}
		acc.Count += v.Count
		for _, s := range v.Samples {
			if len(acc.Samples) < MaxViolationSamples {
				acc.Samples = append(acc.Samples, s)
			}
		}
	}
}

// addMalformed sums malformed findings per kind.
func (m *runMerger) addMalformed(fs []MalformedFinding) {
	for _, f := range fs {
		acc := m.mal[f.Kind]
		if acc == nil {
			acc = &MalformedFinding{Kind: f.Kind}
			m.mal[f.Kind] = acc
			m.malOrder = append(m.malOrder, f.Kind)
		}
		acc.Sent += f.Sent
		acc.UnexpectedReplies += f.UnexpectedReplies
		acc.LivenessChecks += f.LivenessChecks
		acc.LivenessKept += f.LivenessKept
	}
}

// result writes what m accumulated into out.
func (m *runMerger) result(out *Run) error {
	out.Sessions = m.sessions
	out.Outages = MergeOutages(m.outages)
	if n := len(out.Outages); n > 0 && !out.Outages[n-1].Back {
		out.SilentAtEnd = nil // a shard found it down: the headline says so
	}
	out.NoteTargetDown()
	if !out.StartedAt.IsZero() {
		out.DurationNS = m.end.Sub(out.StartedAt)
	}
	var err error
	if out.Steps, err = m.steps.result(); err != nil {
		return err
	}
	if out.Messages, err = m.msgs.result(); err != nil {
		return err
	}
	if err := m.lobby.result(out); err != nil {
		return err
	}
	if out.TimeSeries, err = m.timeSeries(); err != nil {
		return err
	}
	out.Violations = make([]Violation, 0, len(m.violOrder))
	for _, k := range m.violOrder {
		out.Violations = append(out.Violations, *m.viol[k])
	}
	out.Malformed = make([]MalformedFinding, 0, len(m.malOrder))
	for _, k := range m.malOrder {
		out.Malformed = append(out.Malformed, *m.mal[k])
	}
	if out.RateLimits == nil {
		out.RateLimits = []RateLimitFinding{}
	}
	out.Thresholds = []ThresholdResult{}
	return nil
}

// timeSeries returns the merged points in second order.
func (m *runMerger) timeSeries() ([]Point, error) {
	secs := make([]int64, 0, len(m.points))
	for s := range m.points {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	ts := make([]Point, 0, len(secs))
	for _, s := range secs {
		acc := m.points[s]
		p, err := NewPoint(s, acc.requests, acc.errors, acc.h)
		if err != nil {
			return nil, err
		}
		ts = append(ts, p)
	}
	return ts, nil
}

// MergeOutages combines the outages several watchdogs saw of one target
// (the shards of a run, each with its own) into their union: overlapping
// intervals (an open one reaches to the end) become one, with the
// earliest start and its last-up time, kind and detail, the latest end
// (open if any was), the steps and failures of all, and the answered
// requests summed. An interval is a recovery drill's (Fault) only if all
// it merged were. Offsets are taken as they are, as the time series'
// seconds are: the shards started together. The input is not modified.
func MergeOutages(in []Outage) []Outage {
	if len(in) == 0 {
		return nil
	}
	all := append([]Outage(nil), in...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].StartNS < all[j].StartNS })
	var out []Outage
	for _, o := range all {
		if n := len(out); n > 0 && (!out[n-1].Back || o.StartNS <= out[n-1].EndNS) {
			m := &out[n-1]
			switch {
			case !o.Back:
				m.Back, m.EndNS = false, 0
			case m.Back && o.EndNS > m.EndNS:
				m.EndNS = o.EndNS
			}
			for _, d := range o.During {
				if !containsString(m.During, d) {
					m.During = append(m.During, d)
				}
			}
			if len(o.Failures) > 0 {
				if m.Failures == nil {
					m.Failures = map[string]int64{}
				}
				addReasons(m.Failures, o.Failures)
			}
			m.AnsweredBefore += o.AnsweredBefore
			if o.Fault == "" {
				m.Fault = ""
			}
			if m.Exit == "" {
				m.Exit, m.Output = o.Exit, o.Output
			}
			continue
		}
		o.During = append([]string(nil), o.During...)
		if o.Failures != nil {
			f := map[string]int64{}
			addReasons(f, o.Failures)
			o.Failures = f
		}
		out = append(out, o)
	}
	return out
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

type pointAcc struct {
	requests, errors int64
	h                *hdrhistogram.Histogram
}

func addReasons(dst, src map[string]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

type seriesAcc struct {
	s             Series
	lat, unc, lag *hdrhistogram.Histogram
}

type seriesMerger struct {
	byName map[string]*seriesAcc
	order  []string
}

func newSeriesMerger() *seriesMerger { return &seriesMerger{byName: map[string]*seriesAcc{}} }

func (m *seriesMerger) add(in []Series) error {
	for _, s := range in {
		acc := m.byName[s.Name]
		if acc == nil {
			acc = &seriesAcc{
				s:   Series{Name: s.Name, FailuresByReason: map[string]int64{}, Wait: s.Wait},
				lat: NewLatencyHistogram(), unc: NewLatencyHistogram(), lag: NewLatencyHistogram(),
			}
			m.byName[s.Name] = acc
			m.order = append(m.order, s.Name)
		}
		acc.s.Wait = acc.s.Wait && s.Wait // a wait only if every shard says so
		acc.s.Requests += s.Requests
		acc.s.Successes += s.Successes
		acc.s.Failures += s.Failures
		acc.s.Retries += s.Retries
		acc.s.Dropped += s.Dropped
		acc.s.Cut += s.Cut
		acc.s.CutSilent += s.CutSilent
		acc.s.DataSent += s.DataSent
		acc.s.DataReceived += s.DataReceived
		addReasons(acc.s.FailuresByReason, s.FailuresByReason)
		for _, p := range []struct {
			dst *hdrhistogram.Histogram
			src Latency
		}{{acc.lat, s.Latency}, {acc.unc, s.Uncorrected}, {acc.lag, s.SendLag}} {
			h, err := p.src.Histogram()
			if err != nil {
				return fmt.Errorf("%s: %w", s.Name, err)
			}
			if d := p.dst.Merge(h); d != 0 {
				return fmt.Errorf("%s: %d values out of range", s.Name, d)
			}
		}
	}
	return nil
}

func (m *seriesMerger) result() ([]Series, error) {
	out := make([]Series, 0, len(m.order))
	for _, name := range m.order {
		acc := m.byName[name]
		var err error
		if acc.s.Latency, err = NewLatency(acc.lat); err != nil {
			return nil, err
		}
		if acc.s.Uncorrected, err = NewLatency(acc.unc); err != nil {
			return nil, err
		}
		if acc.s.SendLag, err = NewLatency(acc.lag); err != nil {
			return nil, err
		}
		out = append(out, acc.s)
	}
	return out, nil
}

// shardOf parses a shard run's id "i/n".
func shardOf(s ShardRun) (i, n int, ok bool) {
	_, err := fmt.Sscanf(s.Shard, "%d/%d", &i, &n)
	return i, n, err == nil
}

// MissingShards returns the shards ("i/n") of a sharded run that none of
// runs holds, in order; none when the runs are not all shards of one
// count n > 1 (unsharded runs, "0/1", are not checked).
func MissingShards(runs []*Run) []string {
	seen := map[string]bool{}
	count := 0 // the n shared by every sharded run; -1 when they differ
	for _, r := range runs {
		for _, s := range r.ShardRuns {
			_, n, ok := shardOf(s)
			if !ok || n <= 1 {
				continue
			}
			switch {
			case count == 0:
				count = n
			case count != n:
				count = -1
			}
			seen[s.Shard] = true
		}
	}
	var missing []string
	for k := 0; k < count; k++ {
		if id := fmt.Sprintf("%d/%d", k, count); !seen[id] {
			missing = append(missing, id)
		}
	}
	return missing
}

// ShardCoverage checks the shard ids ("i/n") of the runs to merge: a shard
// of a sharded run given twice would count its load twice, and a missing
// one leaves the merge covering part of the run. Unsharded runs ("0/1")
// are not checked. It also checks the shards' start: a shard that came
// up after the run's start instant (`run --start-at`) and joined late
// missed the arrivals due before (the merge is INCOMPLETE: MissingLoad),
// and shards with different start instants, or some with one and some
// without, did not start together: their time series, merged by offset,
// do not line up in time. It returns one warning per problem.
func ShardCoverage(runs []*Run, names []string) []string {
	var warns []string
	var starts []string // distinct start instants ("" for none), in order
	for i, r := range runs {
		for _, s := range r.ShardRuns {
			if s.LateStartNS > 0 {
				w := fmt.Sprintf("shard %s (%s) started %s after the start instant %s and joined late", s.Shard, names[i], words.Seconds(s.LateStartNS), s.StartAt.UTC().Format(time.RFC3339Nano))
				if n := s.Sessions.DroppedLateStart; n > 0 {
					w += fmt.Sprintf(": the %s due before it joined are counted as dropped starts (late_start), not run", words.Count(n, "arrival"))
				}
				warns = append(warns, w)
			}
			at := ""
			if !s.StartAt.IsZero() {
				at = s.StartAt.UTC().Format(time.RFC3339Nano)
			}
			if !containsString(starts, at) {
				starts = append(starts, at)
			}
		}
	}
	if len(starts) > 1 {
		for i, at := range starts {
			if at == "" {
				starts[i] = "none (each at its own start)"
			}
		}
		warns = append(warns, fmt.Sprintf("the shards did not share one start instant (%s): their schedules did not start together, and their time series, merged second by second from each shard's own start, do not line up in time", strings.Join(starts, ", ")))
	}
	seen := map[string]string{}
	for i, r := range runs {
		for _, s := range r.ShardRuns {
			if _, n, ok := shardOf(s); !ok || n <= 1 {
				continue
			}
			if prev, ok := seen[s.Shard]; ok {
				warns = append(warns, fmt.Sprintf("shard %s is in both %s and %s: its load is counted twice", s.Shard, prev, names[i]))
				continue
			}
			seen[s.Shard] = names[i]
		}
	}
	if missing := MissingShards(runs); len(missing) > 0 {
		warns = append(warns, fmt.Sprintf("%s %s missing: the merge covers part of the run", words.Plural(len(missing), "shard"), strings.Join(missing, ", ")))
	}
	return warns
}
