package metrics

import (
	"fmt"
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/result"
)

// LiveState is a process's cumulative live figures in a form that travels
// as JSON: a `run --workers` worker sends its latest with its progress
// lines, and the parent merges every worker's latest into one live
// scrape (MergeLive). Cumulative, not deltas: a lost or late line loses
// nothing, and a worker that died keeps counting with its last state.
type LiveState struct {
	Live       Live           `json:"live"`
	Violations []RuleCount    `json:"violations,omitempty"`
	Keys       []LiveKeyState `json:"keys,omitempty"`
	// Outages are the target's outages its watchdog saw so far (set by
	// the engine, not by Collector.LiveState), for a live page's TARGET
	// DOWN.
	Outages []result.Outage `json:"outages,omitempty"`
	// Sessions are the sessions so far as the engine's scheduler counts
	// them (set by the engine; nil until it knows), for the thresholds
	// on them and a live INCOMPLETE (failed starts).
	Sessions *result.Sessions `json:"sessions,omitempty"`
}

// LiveKeyState is a LiveKey with its histograms encoded (HDR V2
// compressed, base64; "" when empty).
type LiveKeyState struct {
	Name                                  string
	Kind                                  Kind
	Successes, Failures, Retries, Dropped int64
	FailuresByReason                      map[string]int64 `json:",omitempty"`
	Corrected, Uncorrected, SendLag       string           `json:",omitempty"`
}

// LiveState reads c's live figures (Live, LiveViolations, LiveKeys) and
// encodes them.
func (c *Collector) LiveState() (*LiveState, error) {
	s := &LiveState{Live: c.Live(), Violations: c.LiveViolations()}
	for _, k := range c.LiveKeys() {
		ks := LiveKeyState{Name: k.Name, Kind: k.Kind, Successes: k.Successes, Failures: k.Failures, Retries: k.Retries, Dropped: k.Dropped}
		if len(k.FailuresByReason) > 0 {
			ks.FailuresByReason = k.FailuresByReason
		}
		for _, h := range []struct {
			dst *string
			h   *hdrhistogram.Histogram
		}{{&ks.Corrected, k.Corrected}, {&ks.Uncorrected, k.Uncorrected}, {&ks.SendLag, k.SendLag}} {
			if h.h.TotalCount() == 0 {
				continue
			}
			b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				return nil, fmt.Errorf("metrics: encode %s's histogram: %w", k.Name, err)
			}
			*h.dst = string(b)
		}
		s.Keys = append(s.Keys, ks)
	}
	return s, nil
}

// Decode turns the state back into live figures with fresh histograms.
func (s *LiveState) Decode() (LiveSet, error) {
	keys := make([]LiveKey, 0, len(s.Keys))
	for _, ks := range s.Keys {
		k := LiveKey{Name: ks.Name, Kind: ks.Kind, Successes: ks.Successes, Failures: ks.Failures, Retries: ks.Retries, Dropped: ks.Dropped,
			FailuresByReason: map[string]int64{}}
		for reason, n := range ks.FailuresByReason {
			k.FailuresByReason[reason] = n
		}
		for _, h := range []struct {
			dst **hdrhistogram.Histogram
			enc string
		}{{&k.Corrected, ks.Corrected}, {&k.Uncorrected, ks.Uncorrected}, {&k.SendLag, ks.SendLag}} {
			if h.enc == "" {
				*h.dst = result.NewLatencyHistogram()
				continue
			}
			d, err := hdrhistogram.Decode([]byte(h.enc))
			if err != nil {
				return LiveSet{}, fmt.Errorf("metrics: decode %s's histogram: %w", ks.Name, err)
			}
			*h.dst = d
		}
		keys = append(keys, k)
	}
	return LiveSet{Live: s.Live, Violations: append([]RuleCount(nil), s.Violations...), Keys: keys, Outages: append([]result.Outage(nil), s.Outages...), Sessions: s.Sessions}, nil
}

// LiveSet is the decoded live figures of one process, as MergeLive takes
// them.
type LiveSet struct {
	Live       Live
	Violations []RuleCount
	Keys       []LiveKey
	// Outages are the target's outages seen so far (LiveState.Outages).
	Outages []result.Outage
	// Sessions are the scheduler's session counts (LiveState.Sessions).
	Sessions *result.Sessions
}

// MergeLive sums processes' live figures: counters and gauges add up,
// violations add up per rule (sorted by rule), and each key's histograms
// merge into fresh ones, exactly (the same geometry in every process),
// keys in their first appearance's order, the outages merge as a merged
// result's do (result.MergeOutages) and the session counts add up
// (result.Sessions.Add; nil when no set has any). The sets are left as they are.
func MergeLive(sets []LiveSet) LiveSet {
	var out LiveSet
	var outs []result.Outage
	by := map[string]int64{}
	idx := map[[2]string]int{}
	for _, s := range sets {
		l := &out.Live
		l.Requests += s.Live.Requests
		l.Successes += s.Live.Successes
		l.Failures += s.Live.Failures
		l.Retries += s.Live.Retries
		l.Dropped += s.Live.Dropped
		l.Violations += s.Live.Violations
		l.SessionsStarted += s.Live.SessionsStarted
		l.SessionsFinished += s.Live.SessionsFinished
		l.DataSent += s.Live.DataSent
		l.DataReceived += s.Live.DataReceived
		l.InRoom += s.Live.InRoom
		l.InGame += s.Live.InGame
		for _, v := range s.Violations {
			by[v.Rule] += v.Count
		}
		outs = append(outs, s.Outages...)
		if s.Sessions != nil {
			if out.Sessions == nil {
				out.Sessions = &result.Sessions{}
			}
			out.Sessions.Add(*s.Sessions)
		}
		for _, k := range s.Keys {
			id := [2]string{fmt.Sprint(k.Kind), k.Name}
			i, ok := idx[id]
			if !ok {
				i = len(out.Keys)
				idx[id] = i
				out.Keys = append(out.Keys, LiveKey{Name: k.Name, Kind: k.Kind, FailuresByReason: map[string]int64{},
					Corrected: result.NewLatencyHistogram(), Uncorrected: result.NewLatencyHistogram(), SendLag: result.NewLatencyHistogram()})
			}
			m := &out.Keys[i]
			m.Successes += k.Successes
			m.Failures += k.Failures
			m.Retries += k.Retries
			m.Dropped += k.Dropped
			for reason, n := range k.FailuresByReason {
				m.FailuresByReason[reason] += n
			}
			m.Corrected.Merge(k.Corrected)
			m.Uncorrected.Merge(k.Uncorrected)
			m.SendLag.Merge(k.SendLag)
		}
	}
	out.Outages = result.MergeOutages(outs)
	for rule, n := range by {
		out.Violations = append(out.Violations, RuleCount{rule, n})
	}
	sort.Slice(out.Violations, func(i, j int) bool { return out.Violations[i].Rule < out.Violations[j].Rule })
	return out
}

// Merged reads as the merge of several processes' latest live figures (a
// prom.Source): a `run --workers` parent holds one slot per worker and
// sets it from each state the worker sends. A slot keeps its last figures
// when its process is gone. Safe for concurrent use; a set's histograms
// must not change once given to Set.
type Merged struct {
	start time.Time
	mu    sync.Mutex
	sets  []LiveSet
}

// NewMerged returns n empty slots whose counters started at start.
func NewMerged(start time.Time, n int) *Merged {
	return &Merged{start: start, sets: make([]LiveSet, n)}
}

// Set replaces slot i's figures.
func (m *Merged) Set(i int, s LiveSet) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sets[i] = s
}

func (m *Merged) all() []LiveSet {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]LiveSet(nil), m.sets...)
}

// Start is when the merged counters started.
func (m *Merged) Start() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.start
}

// SetStart moves the start, before any slot has counted: a --workers
// parent learns its workers' start instant only once they are ready
// (engine's start gate).
func (m *Merged) SetStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start = t
}

// Live sums the slots' counters.
func (m *Merged) Live() Live {
	sets := m.all()
	for i := range sets {
		sets[i].Keys = nil // the counters only: no histogram merge
	}
	return MergeLive(sets).Live
}

// LiveViolations sums the slots' breaches per rule, sorted by rule.
func (m *Merged) LiveViolations() []RuleCount {
	sets := m.all()
	for i := range sets {
		sets[i].Keys = nil
	}
	return MergeLive(sets).Violations
}

// LiveKeys merges the slots' keys into fresh histograms.
func (m *Merged) LiveKeys() []LiveKey { return MergeLive(m.all()).Keys }
