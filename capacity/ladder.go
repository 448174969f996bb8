package capacity

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// LadderSettings bound a fixed ladder: every load in order, no search.
type LadderSettings struct {
	Loads    []float64     // whole loads ≥ 1, ascending (ParseLoads, DoublingLoads)
	Budget   time.Duration // no step starts that could not end within it
	StepCost time.Duration // how long a step takes: the budget check's estimate
	// Shard is "i/n" when this process plays one shard's share of each
	// load (`capacity --shard`): its document then has no verdict of its
	// own (the merge of every shard's has: Merge).
	Shard string
}

// ParseLoads reads --loads: whole loads of at least 1, comma-separated, in
// increasing order, at most maxSteps of them.
func ParseLoads(v string) ([]float64, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("--loads is empty: want loads in increasing order, e.g. 50,100,200")
	}
	parts := strings.Split(v, ",")
	if len(parts) > maxSteps {
		return nil, fmt.Errorf("--loads names %d loads: at most %d", len(parts), maxSteps)
	}
	out := make([]float64, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		f, err := strconv.ParseFloat(p, 64)
		switch {
		case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
			return nil, fmt.Errorf("--loads: %q (load %d) is not a number", p, i+1)
		case f < 1 || f != math.Trunc(f) || f > MaxLoad:
			return nil, fmt.Errorf("--loads: %s (load %d) is not a whole load from 1 to %d", p, i+1, MaxLoad)
		case i > 0 && f <= out[i-1]:
			return nil, fmt.Errorf("--loads: %s after %s: loads must increase (a ladder is played in order, lowest first)", p, result.FormatLoad(out[i-1], ""))
		}
		out = append(out, f)
	}
	return out, nil
}

// DoublingLoads is the ladder a search's doubling would climb: start,
// twice it, and so on, and max last (whole loads).
func DoublingLoads(start, max float64) []float64 {
	var out []float64
	for l := whole(start); l < max && len(out) < maxSteps-1; l = whole(l * 2) {
		out = append(out, l)
	}
	return append(out, math.Floor(max))
}

// Check reports the first setting out of range, naming its flag.
func (s LadderSettings) Check() error {
	if len(s.Loads) == 0 {
		return fmt.Errorf("--loads: no load to play")
	}
	if s.Budget <= 0 {
		return fmt.Errorf("--budget %v must be above 0", s.Budget)
	}
	return nil
}

// Ladder plays s.Loads in order, one step each, whatever their verdicts
// (a FAIL or a harness-bound step does not end it: a shard cannot know
// the verdict of the merged step, and an unsharded ladder plays as a
// shard would), and ends early only when interrupted, when the target
// went down, when the budget would run out, or on a step that could not
// run at all (its error, with the steps before it in the result). The
// result of an unsharded ladder is judged (ConcludeLadder); a shard's
// (s.Shard) says only how its ladder ended.
func Ladder(ctx context.Context, s LadderSettings, r Runner, now func() time.Time, progress func(result.CapacityStep)) (*result.Capacity, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	c := &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Steps: []result.CapacityStep{}, Shard: s.Shard}
	start := now()
	c.StartedAt = start
	var err error
	for _, load := range s.Loads {
		if ctx.Err() != nil {
			c.Stop, c.StopText = result.StopInterrupted, "interrupted"
			break
		}
		if used := now().Sub(start); used+s.StepCost > s.Budget {
			c.Stop, c.StopText = result.StopBudget, fmt.Sprintf("the --budget %v ran out before %s (%v used, a step takes %v)", s.Budget, result.FormatLoad(load, ""), used.Round(time.Second), s.StepCost)
			break
		}
		var st result.CapacityStep
		st, err = r.Step(ctx, load)
		if err != nil {
			if ctx.Err() != nil {
				err = nil
				c.Stop, c.StopText = result.StopInterrupted, "interrupted"
				break
			}
			c.Stop, c.StopText = "error", err.Error()
			break
		}
		st.Load = load
		c.Steps = append(c.Steps, st)
		if progress != nil {
			progress(st)
		}
		if st.Verdict == result.CapTargetDown {
			c.Stop, c.StopText = result.StopTargetDown, "the target went down at "+result.FormatLoad(load, "")
			break
		}
	}
	c.DurationNS = now().Sub(start)
	c.Settings = result.CapacitySettings{Start: s.Loads[0], Max: s.Loads[len(s.Loads)-1], BudgetNS: s.Budget, Loads: s.Loads}
	if s.Shard == "" {
		ConcludeLadder(c)
	} else {
		c.Rules = result.RuleOnsets(c.Steps)
		if c.Stop == "" {
			c.Stop, c.StopText = result.StopLadder, "every load of the ladder played"
		}
	}
	if c.Stop == "error" {
		return c, err
	}
	return c, nil
}

// ConcludeLadder judges a ladder from its steps (in ladder order): the
// sustainable load is the highest that held below the first step that
// did not, the first FAIL is where it broke (BrokeAt, BrokeFirst), and
// c.Stop says why the ladder ends where it does, in this order: a
// target that went down at some step (the finding, whatever came
// before); a harness-bound step before any FAIL (the limit is the
// harness's); how its playing ended, when it was interrupted; a load
// that held above the one that broke (the verdicts do not rise with the
// load: no limit to find); no load held (the lowest broke); the budget, when it ran out; else the ladder
// itself (every load played). A search bisects; a ladder only knows the
// limit lies between the load that held and the one that broke.
func ConcludeLadder(c *result.Capacity) {
	var good, bad float64
	var down, harness *result.CapacityStep
	open := true // every step so far held
	for i := range c.Steps {
		st := &c.Steps[i]
		switch st.Verdict {
		case result.CapPass:
			if open {
				good = st.Load
			}
		case result.CapFail:
			if open {
				open, bad = false, st.Load
				c.BrokeAt, c.BrokeFirst = st.Load, first(st.Broke)
			}
		case result.CapHarnessBound:
			if open {
				open, harness = false, st
			}
		case result.CapTargetDown:
			if down == nil {
				down = st
			}
		}
		if down != nil {
			break
		}
	}
	c.Sustainable = good
	c.Rules = result.RuleOnsets(c.Steps)
	u := ""
	switch {
	case down != nil:
		c.Stop, c.StopText = result.StopTargetDown, "the target went down at "+result.FormatLoad(down.Load, u)
	case harness != nil:
		c.Stop, c.StopText = result.StopHarness, "the harness could not offer "+result.FormatLoad(harness.Load, u)
	case c.Stop == result.StopInterrupted || c.Stop == "error":
	case bad > 0 && c.HeldAbove() > 0:
		c.Stop, c.StopText = result.StopNotMonotone, fmt.Sprintf("%s broke, yet %s held: the verdicts do not rise with the load", result.FormatLoad(bad, u), result.FormatLoad(c.HeldAbove(), u))
	case bad > 0 && good == 0:
		c.Stop, c.StopText = result.StopNoLoadHeld, "no load of the ladder held: the lowest, "+result.FormatLoad(bad, u)+", broke"
	case c.Stop == result.StopBudget:
	case bad > 0:
		c.Stop, c.StopText = result.StopLadder, fmt.Sprintf("%s held, %s broke: the limit lies between (a fixed ladder, not bisected)", result.FormatLoad(good, u), result.FormatLoad(bad, u))
	case len(c.Steps) > 0:
		c.Stop, c.StopText = result.StopLadder, "every load of the ladder held, up to "+result.FormatLoad(good, u)
	default:
		c.Stop, c.StopText = result.StopLadder, "no load of the ladder was played"
	}
}
