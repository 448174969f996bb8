package result

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// KindCapacity is the kind of a `lobbybench capacity` document.
const KindCapacity = "capacity"

// Verdicts of one capacity step (CapacityStep.Verdict).
const (
	CapPass         = "pass"
	CapFail         = "fail"
	CapHarnessBound = "harness-bound"
	CapTargetDown   = "target-down"
)

// Why a capacity search ended (Capacity.Stop).
const (
	StopPrecision   = "precision"     // the gap between held and broke is within --precision
	StopMax         = "max"           // --max held
	StopBudget      = "budget"        // --budget ran out
	StopNoLoadHeld  = "no-load-held"  // even the lowest load tried broke
	StopHarness     = "harness-bound" // the harness could not offer the load
	StopNotMonotone = "not-monotone"  // a ladder's load broke and a higher one held
	StopTargetDown  = "target-down"   // the target died
	StopInterrupted = "interrupted"   // Ctrl-C
	// StopLadder: a fixed ladder (--loads, or a sharded run's) played
	// every load; it does not bisect.
	StopLadder = "ladder"
)

// StatusShard is the headline status of one shard's capacity document
// (`capacity --shard i/n`): its steps are its share of each load, judged
// alone; the verdict is the merge's (`report merge`).
const StatusShard = "shard"

// Capacity is the result of `lobbybench capacity`: a search for the
// highest load at which the scenario's thresholds hold.
type Capacity struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // always KindCapacity
	// Status and Verdict are the Headline, filled as the JSON is
	// written (Stamped), so the document says it first.
	Status  string `json:"status"`
	Verdict string `json:"verdict"`
	// NotStarted says why the command measured nothing at all, when it
	// ended before it began (result/notstarted.go); every format leads
	// with it. Nil for every document that measured.
	NotStarted *NotStarted      `json:"not_started,omitempty"`
	Scenario   string           `json:"scenario,omitempty"`
	Target     string           `json:"target,omitempty"`
	Protocol   string           `json:"protocol,omitempty"`
	Model      string           `json:"model"` // "open" (load: sessions/s) or "closed" (load: clients)
	StartedAt  time.Time        `json:"started_at"`
	DurationNS time.Duration    `json:"duration_ns"`
	Settings   CapacitySettings `json:"settings"`
	// Sustainable is the highest load that held (0: none did).
	Sustainable float64 `json:"sustainable"`
	// BrokeAt is the lowest load that broke (a FAIL step; 0: none did),
	// and BrokeFirst what broke first there.
	BrokeAt    float64 `json:"broke_at,omitempty"`
	BrokeFirst string  `json:"broke_first,omitempty"`
	// Stop is why the search ended (StopPrecision …), StopText in words.
	Stop     string `json:"stop"`
	StopText string `json:"stop_text"`
	// Steps are the loads tried, in the order they ran.
	Steps []CapacityStep `json:"steps"`
	// Rules is the conformance under load: for each protocol rule broken
	// at some step, the lowest load that broke it and how often.
	Rules []RuleOnset `json:"rules"`
	// Shard is "i/n" in the document of one shard of a sharded ladder
	// (`capacity --shard i/n`), whose steps keep their runs (Run) for
	// `report merge`; empty otherwise.
	Shard string `json:"shard,omitempty"`
	// Shards is how many shard documents a merge read (0: not a merge).
	Shards int `json:"shards,omitempty"`
	// Coverage says what a merge of shard documents lacks: a shard
	// missing, a step some shard did not play. Empty when complete.
	Coverage []string `json:"coverage,omitempty"`
}

// Ladder reports whether c played a fixed ladder of loads (--loads, or a
// sharded run's) rather than a search.
func (c *Capacity) Ladder() bool { return len(c.Settings.Loads) > 0 }

// CapacitySettings are the search's parameters as run.
type CapacitySettings struct {
	Start      float64       `json:"start"`
	Max        float64       `json:"max"`
	Precision  float64       `json:"precision"` // a fraction: 0.1 is 10 %
	StepNS     time.Duration `json:"step_ns"`   // the judged run of a step
	WarmupNS   time.Duration `json:"warmup_ns"` // the warm-up run before it
	DrainNS    time.Duration `json:"drain_ns"`
	BudgetNS   time.Duration `json:"budget_ns"`
	LagBoundNS time.Duration `json:"lag_bound_ns"`
	// Loads is the ladder a fixed ladder played in order (--loads, or
	// a sharded run's doubling from Start to Max); omitted for a search.
	Loads []float64 `json:"loads,omitempty"`
}

// CapacityStep is one load held and judged.
type CapacityStep struct {
	Load    float64 `json:"load"`
	Verdict string  `json:"verdict"` // CapPass, CapFail, CapHarnessBound, CapTargetDown
	// Broke is what broke, first first (capacity.Broke): what can be
	// placed in time by when, then the other breached thresholds most
	// breached first, then steps that never succeeded. Empty unless
	// Verdict is CapFail.
	Broke []string `json:"broke,omitempty"`
	// Why says a harness-bound or target-down verdict in words.
	Why string `json:"why,omitempty"`
	// The figures after the warm-up (Run.TimeSeries): requests completed,
	// answered (successful) requests a second, error share, corrected
	// latency.
	Requests   int64   `json:"requests"`
	Throughput float64 `json:"throughput_per_sec"`
	ErrorRate  float64 `json:"error_rate"`
	P50US      int64   `json:"p50_us"`
	P99US      int64   `json:"p99_us"`
	// SendLagP99US is the worst step's send lag p99 over the whole step.
	SendLagP99US int64 `json:"send_lag_p99_us"`
	// Violations are protocol violations by rule over the whole step.
	Violations map[string]int64 `json:"violations_by_rule,omitempty"`
	// Drain says the server did not drain back to its baseline before
	// the step ("" it did, or a fresh embedded server ran it).
	Drain string `json:"drain,omitempty"`
	// ServerCPUSeconds and ServerPeakRSSBytes: what the step cost the
	// server when lobbybench embedded or started it (Run.TargetProcess).
	ServerCPUSeconds   float64 `json:"server_cpu_seconds,omitempty"`
	ServerPeakRSSBytes int64   `json:"server_peak_rss_bytes,omitempty"`
	// Headline is the step's own run headline.
	Headline string `json:"headline"`
	// Workers is how many local worker processes played the step
	// (`--workers`; 0: this process alone). Its figures are their
	// merge.
	Workers int `json:"workers,omitempty"`
	// Run is the step's whole judged run (histograms included), kept in
	// a shard's document so that `report merge` merges the shards' steps
	// exactly, as it merges runs; omitted otherwise.
	Run *Run `json:"run,omitempty"`
}

// RuleOnset is one row of the rule × load matrix.
type RuleOnset struct {
	Rule      string  `json:"rule"`
	FirstLoad float64 `json:"first_load"` // the lowest load at which it was broken
	Steps     int     `json:"steps"`      // how many steps broke it
	Count     int64   `json:"count"`      // violations over every step
}

// Headline judges the search: TARGET DOWN first, then INCONCLUSIVE
// (harness-bound: the limit found is the harness's; a ladder whose load
// broke below one that held), FAIL (no load held), PASS (a limit found,
// or everything held up to --max).
func (c *Capacity) Headline() Headline {
	if c.NotStarted != nil {
		return c.NotStarted.headline()
	}
	u := c.Unit()
	held := "no load held"
	if c.Sustainable > 0 {
		held = "held up to " + FormatLoad(c.Sustainable, u)
	}
	// The step a search ended on is its last; a ladder's (a merge of
	// shards' goes on past it) is the first of its verdict.
	at := func(verdict string) CapacityStep {
		for _, s := range c.Steps {
			if s.Verdict == verdict {
				return s
			}
		}
		return CapacityStep{}
	}
	what := "search"
	if c.Ladder() {
		what = "ladder"
	}
	if c.Shard != "" {
		// One shard's share of each load: no verdict alone, but a
		// target it saw go down is said first, as everywhere.
		played := fmt.Sprintf("its share of %d of the ladder's %s", len(c.Steps), words.Count(len(c.Settings.Loads), "load"))
		switch c.Stop {
		case StopTargetDown:
			s := at(CapTargetDown)
			return Headline{Status: StatusTargetDown, Text: fmt.Sprintf("TARGET DOWN · at %s (shard %s): %s; it played %s", FormatLoad(s.Load, u), c.Shard, s.Why, played)}
		case StopInterrupted:
			return Headline{Status: StatusInterrupted, Text: fmt.Sprintf("INTERRUPTED · shard %s was stopped after %s", c.Shard, played)}
		}
		return Headline{Status: StatusShard, Text: fmt.Sprintf("SHARD %s · played %s (%s): no verdict alone; merge every shard's document with lobbybench report merge", c.Shard, played, c.StopText)}
	}
	switch c.Stop {
	case StopTargetDown:
		s := at(CapTargetDown)
		return Headline{Status: StatusTargetDown, Text: fmt.Sprintf("TARGET DOWN · at %s: %s; %s", FormatLoad(s.Load, u), s.Why, held)}
	case StopHarness:
		s := at(CapHarnessBound)
		if len(c.Coverage) > 0 {
			// A merge that lacks a shard's share: more machines would
			// not help, the missing document would.
			return Headline{Status: StatusInconclusive, Text: fmt.Sprintf("INCONCLUSIVE · harness-bound at %s (%s): the limit found (%s) is not the server's: a share of the load is missing (coverage)", FormatLoad(s.Load, u), s.Why, held)}
		}
		return Headline{Status: StatusInconclusive, Text: fmt.Sprintf("INCONCLUSIVE · harness-bound at %s (%s): the limit found (%s) is the harness's, not the server's; add --workers or more machines", FormatLoad(s.Load, u), s.Why, held)}
	case StopNoLoadHeld:
		return Headline{Status: StatusFail, Text: fmt.Sprintf("FAIL · no load held: %s broke first on %s", FormatLoad(c.BrokeAt, u), c.BrokeFirst)}
	case StopNotMonotone:
		return Headline{Status: StatusInconclusive, Text: fmt.Sprintf("INCONCLUSIVE · %s broke first on %s, yet %s held: the verdicts do not rise with the load, no limit to find (a count floor?)",
			FormatLoad(c.BrokeAt, u), c.BrokeFirst, FormatLoad(c.HeldAbove(), u))}
	case StopInterrupted:
		return Headline{Status: StatusInterrupted, Text: "INTERRUPTED · the " + what + " was stopped: " + held}
	}
	if c.Sustainable == 0 && c.BrokeAt == 0 {
		return Headline{Text: "NO VERDICT · no step ran (" + c.StopText + ")"}
	}
	if c.Sustainable == 0 {
		// The search stopped (its budget, its step limit) before any
		// load held: no limit was found, and nothing reads PASS.
		return Headline{Status: StatusFail, Text: fmt.Sprintf("FAIL · no load held: %s broke first on %s, and the %s stopped before a lower load held (%s)", FormatLoad(c.BrokeAt, u), c.BrokeFirst, what, c.StopText)}
	}
	text := "PASS · sustainable " + FormatLoad(c.Sustainable, u)
	if c.BrokeAt > 0 {
		text += fmt.Sprintf("; %s broke first on %s", FormatLoad(c.BrokeAt, u), c.BrokeFirst)
	}
	return Headline{Status: StatusPass, Text: text + " (" + c.StopText + ")"}
}

// HeldAbove is the highest load that held above the first that broke
// (BrokeAt), 0 when none did: a ladder whose verdicts rise with the
// load has none.
func (c *Capacity) HeldAbove() float64 {
	var held float64
	for _, s := range c.Steps {
		if s.Verdict == CapPass && c.BrokeAt > 0 && s.Load > c.BrokeAt {
			held = max(held, s.Load)
		}
	}
	return held
}

func (c *Capacity) document() Doc { return c }

// Unit is the load's unit: "/s" (sessions a second, open model) or
// " clients" (closed).
func (c *Capacity) Unit() string {
	if c.Model == "closed" {
		return " clients"
	}
	return "/s"
}

// FormatLoad is a load with its unit: "200/s", "50 clients".
func FormatLoad(v float64, unit string) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + unit
}

// RuleOnsets is the rule × load matrix of steps: one row per rule broken
// at some step, by its lowest load, then name.
func RuleOnsets(steps []CapacityStep) []RuleOnset {
	by := map[string]*RuleOnset{}
	for _, s := range steps {
		for rule, n := range s.Violations {
			if n <= 0 {
				continue
			}
			r := by[rule]
			if r == nil {
				r = &RuleOnset{Rule: rule, FirstLoad: s.Load}
				by[rule] = r
			}
			r.FirstLoad = math.Min(r.FirstLoad, s.Load)
			r.Steps++
			r.Count += n
		}
	}
	out := make([]RuleOnset, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].FirstLoad < out[j].FirstLoad || out[i].FirstLoad == out[j].FirstLoad && out[i].Rule < out[j].Rule
	})
	return out
}

// Loads are the distinct loads of the steps, ascending.
func (c *Capacity) Loads() []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, s := range c.Steps {
		if !seen[s.Load] {
			seen[s.Load] = true
			out = append(out, s.Load)
		}
	}
	sort.Float64s(out)
	return out
}

// StepsByLoad are the steps sorted by load (stable: a load tried twice
// keeps its order).
func (c *Capacity) StepsByLoad() []CapacityStep {
	out := append([]CapacityStep(nil), c.Steps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Load < out[j].Load })
	return out
}

// Window is a run's figures over its time series from a second on: what
// a capacity step judges after its warm-up.
type Window struct {
	Requests, Errors int64
	Seconds          int64
	P50US, P99US     int64
}

// After is r's Window from second from on (its per-second histograms
// merged); the whole series when nothing is left after from.
func (r *Run) After(from int64) Window {
	pts := r.TimeSeries
	var kept []Point
	for _, p := range pts {
		if p.Second >= from {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		kept = pts
	}
	var w Window
	h := NewSecondHistogram()
	for _, p := range kept {
		w.Requests += p.Requests
		w.Errors += p.Errors
		if ph, err := p.Histogram(); err == nil && ph != nil {
			h.Merge(ph)
		}
	}
	if n := len(kept); n > 0 {
		w.Seconds = kept[n-1].Second - kept[0].Second + 1
	}
	if h.TotalCount() > 0 {
		w.P50US, w.P99US = h.ValueAtQuantile(50), h.ValueAtQuantile(99)
	}
	return w
}
