package result

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
)

// GateCapacityDropPct limits how far the sustainable load of a capacity
// search may fall, in percent of base (CompareCapacity only). A drop is
// at most 100 %, so Max 100 never breaks it.
const GateCapacityDropPct = "capacity_drop_pct"

// CapacityDropGate is the default capacity gate for base and new: the
// larger of the two searches' --precision. A bisection only knows the
// limit within its precision, so two searches of one build can differ by
// that much; a smaller drop is no evidence of a regression.
func CapacityDropGate(base, new *Capacity) Gate {
	p := 0.0
	for _, c := range []*Capacity{base, new} {
		if c != nil {
			p = math.Max(p, c.Settings.Precision)
		}
	}
	return Gate{Metric: GateCapacityDropPct, Max: p * 100}
}

// LoadChange is a load tried by both searches whose step verdict changed.
// A load tried twice by one search counts with its last step.
type LoadChange struct {
	Load        float64 `json:"load"`
	BaseVerdict string  `json:"base_verdict"`
	NewVerdict  string  `json:"new_verdict"`
	// NewBroke is what broke at that load in new, or why it was not
	// judged (the step's Broke, or its Why).
	NewBroke string `json:"new_broke,omitempty"`
}

// CapacityComparison is the result of CompareCapacity.
type CapacityComparison struct {
	Model           string  `json:"model"`
	BaseSustainable float64 `json:"base_sustainable"`
	NewSustainable  float64 `json:"new_sustainable"`
	// ChangePct is new's sustainable load in percent of base's, minus
	// 100: negative is a drop (0 when base held no load).
	ChangePct float64 `json:"change_pct"`
	// BasePrecision and NewPrecision are the searches' --precision
	// (fractions): how well each knows its limit.
	BasePrecision float64 `json:"base_precision"`
	NewPrecision  float64 `json:"new_precision"`
	// Changed are the loads both searches tried whose verdict differs,
	// by load. Loads tried by one side only (a bisection probes
	// different loads) are not compared.
	Changed []LoadChange `json:"changed"`
	// Incomplete says which side is partial (one sentence each, led by
	// its status: TARGET DOWN, INCONCLUSIVE for a harness-bound search,
	// INTERRUPTED); such a comparison also breaks GateComplete.
	Incomplete []string `json:"incomplete,omitempty"`
	Breaches   []Breach `json:"breaches"`
}

// OK reports whether no gate broke.
func (c *CapacityComparison) OK() bool { return len(c.Breaches) == 0 }

// CompareCapacity compares new's sustainable load against base's and lists
// the per-load verdict changes. It checks GateCapacityDropPct (only when
// given: CapacityDropGate is the default) and always GateComplete: a
// search that ended TARGET DOWN, harness-bound or interrupted did not find
// the server's limit, so no drop or rise can be read from it. Other gates
// are ignored.
func CompareCapacity(base, new *Capacity, gates []Gate) (*CapacityComparison, error) {
	if base == nil || new == nil {
		return nil, fmt.Errorf("reports: compare needs two capacity results")
	}
	if base.Model != new.Model {
		return nil, fmt.Errorf("reports: base is a search of the %s model, new of the %s model: their loads are not comparable", words.OrDash(base.Model), words.OrDash(new.Model))
	}
	for _, side := range []struct {
		name string
		doc  *Capacity
	}{{"base", base}, {"new", new}} {
		if side.doc.Shard != "" {
			return nil, fmt.Errorf("reports: %s is shard %s of a sharded ladder, its share of each load: merge every shard's document first (lobbybench report merge)", side.name, side.doc.Shard)
		}
	}
	c := &CapacityComparison{Model: new.Model, BaseSustainable: base.Sustainable, NewSustainable: new.Sustainable,
		BasePrecision: base.Settings.Precision, NewPrecision: new.Settings.Precision,
		Changed: []LoadChange{}, Breaches: []Breach{}}
	if base.Sustainable > 0 {
		c.ChangePct = (new.Sustainable - base.Sustainable) / base.Sustainable * 100
	}
	last := func(caps *Capacity) map[float64]CapacityStep {
		m := map[float64]CapacityStep{}
		for _, s := range caps.Steps {
			m[s.Load] = s
		}
		return m
	}
	bs, ns := last(base), last(new)
	for load, n := range ns {
		b, ok := bs[load]
		if !ok || b.Verdict == n.Verdict {
			continue
		}
		why := words.JoinMax(n.Broke, 3)
		if why == "" {
			why = n.Why
		}
		c.Changed = append(c.Changed, LoadChange{Load: load, BaseVerdict: b.Verdict, NewVerdict: n.Verdict, NewBroke: why})
	}
	sort.Slice(c.Changed, func(i, j int) bool { return c.Changed[i].Load < c.Changed[j].Load })
	for _, side := range []struct {
		name string
		doc  *Capacity
	}{{"base", base}, {"new", new}} {
		hl := side.doc.Headline()
		if !hl.Partial() && side.doc.Stop != StopHarness {
			continue
		}
		subject := side.name + " search"
		status, text, _ := strings.Cut(hl.Text, " · ")
		c.Incomplete = append(c.Incomplete, status+" "+subject+": "+text)
		c.Breaches = append(c.Breaches, Breach{Gate: Gate{Metric: GateComplete}, Subject: subject, Value: 1})
	}
	for _, g := range gates {
		switch g.Metric {
		case GateCapacityDropPct:
			if drop := -c.ChangePct; drop > g.Max {
				c.Breaches = append(c.Breaches, Breach{Gate: g, Subject: "sustainable load", Value: drop})
			}
		case GateP50IncreasePct, GateP99IncreasePct, GateErrorRateIncreasePP, GateNewViolations, GateNewlyFailingCases:
		default:
			return nil, fmt.Errorf("reports: unknown gate metric %q", g.Metric)
		}
	}
	return c, nil
}
