package metrics

import (
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/result"
)

// LiveKey is a point-in-time copy of one step's or message type's figures,
// merged over every recorder: what a live exporter (Prometheus) needs
// without the cost of a Snapshot.
type LiveKey struct {
	Name                                  string
	Kind                                  Kind
	Successes, Failures, Retries, Dropped int64
	FailuresByReason                      map[string]int64
	// Corrected, Uncorrected and SendLag are fresh merged histograms
	// owned by the caller (geometry of result.NewLatencyHistogram,
	// microseconds).
	Corrected, Uncorrected, SendLag *hdrhistogram.Histogram
}

// LiveKeys merges each registered key's figures over every recorder into
// fresh histograms, in registration order, skipping keys nothing was
// recorded for yet. Unlike Snapshot it encodes nothing and leaves the time
// series alone, so its cost is the histogram merges (a few tens of µs per
// key and recorder); it takes each recorder's lock only while merging it.
func (c *Collector) LiveKeys() []LiveKey {
	c.mu.Lock()
	rs := append([]*Recorder(nil), c.recorders...)
	names := append([]string(nil), c.names...)
	kinds := append([]Kind(nil), c.kinds...)
	c.mu.Unlock()

	keys := make([]LiveKey, len(names))
	used := make([]bool, len(names))
	for _, r := range rs {
		r.mu.Lock()
		for k := range r.keys {
			s := &r.keys[k]
			if !s.used || k >= len(keys) {
				continue
			}
			lk := &keys[k]
			if !used[k] {
				used[k] = true
				*lk = LiveKey{Name: names[k], Kind: kinds[k], FailuresByReason: map[string]int64{},
					Corrected: result.NewLatencyHistogram(), Uncorrected: result.NewLatencyHistogram(), SendLag: result.NewLatencyHistogram()}
			}
			lk.Successes += s.successes
			lk.Failures += s.failures
			lk.Retries += s.retries
			lk.Dropped += s.dropped
			for reason, n := range s.reasons {
				lk.FailuresByReason[reason] += n
			}
			lk.Corrected.Merge(s.corrected)
			lk.Uncorrected.Merge(s.uncorr)
			lk.SendLag.Merge(s.lag)
		}
		r.mu.Unlock()
	}
	out := make([]LiveKey, 0, len(keys))
	for k := range keys {
		if used[k] {
			out = append(out, keys[k])
		}
	}
	return out
}

// RuleCount is the number of breaches of one protocol rule so far.
type RuleCount struct {
	Rule  string
	Count int64
}

// LiveViolations returns the breaches per rule so far, sorted by rule.
func (c *Collector) LiveViolations() []RuleCount {
	c.mu.Lock()
	rs := append([]*Recorder(nil), c.recorders...)
	c.mu.Unlock()
	by := map[string]int64{}
	for _, r := range rs {
		r.mu.Lock()
		for rule, v := range r.violations {
			by[rule] += v.Count
		}
		r.mu.Unlock()
	}
	out := make([]RuleCount, 0, len(by))
	for rule, n := range by {
		out = append(out, RuleCount{rule, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	return out
}
