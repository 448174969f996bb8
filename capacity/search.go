package capacity

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// Settings bound a search. Loads are whole numbers (sessions a second for
// the open model, clients for the closed one), at least 1.
type Settings struct {
	Start     float64       // the first load tried
	Max       float64       // no load above it is tried
	Precision float64       // stop when the gap between held and broke is within this share of the held load (0.1: 10 %)
	Budget    time.Duration // no step starts that could not end within it
	StepCost  time.Duration // how long a step takes (warm-up, step, drain): the budget check's estimate
}

// Check reports the first setting out of range, naming its flag.
func (s Settings) Check() error {
	switch {
	case !(s.Start >= 1):
		return fmt.Errorf("--start %v must be at least 1", s.Start)
	case !(s.Max >= s.Start):
		return fmt.Errorf("--max %v must be at least --start %v", s.Max, s.Start)
	case !(s.Precision > 0 && s.Precision < 1):
		return fmt.Errorf("--precision %v must be above 0 and below 1 (0.1 is 10%%)", s.Precision)
	case s.Budget <= 0:
		return fmt.Errorf("--budget %v must be above 0", s.Budget)
	}
	return nil
}

// Runner runs one step at a load and judges it.
type Runner interface {
	Step(ctx context.Context, load float64) (result.CapacityStep, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, load float64) (result.CapacityStep, error)

// Step calls f.
func (f RunnerFunc) Step(ctx context.Context, load float64) (result.CapacityStep, error) {
	return f(ctx, load)
}

// maxSteps bounds a search whatever its budget.
const maxSteps = 64

// Search looks for the highest load that holds: from Start it doubles
// (capped at Max) while a step passes; once one fails it bisects between
// the last load that held and the first that broke until their gap is
// within Precision (or a whole load); a first step that fails halves the
// load until one holds or 1 broke. A harness-bound or target-down step
// ends it at once. now is the clock the budget is kept by; progress, when
// set, sees each step as it ends. The error is the Runner's (a step that
// could not run at all), with the steps before it in the result.
func Search(ctx context.Context, s Settings, r Runner, now func() time.Time, progress func(result.CapacityStep)) (*result.Capacity, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	c := &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Steps: []result.CapacityStep{}}
	start := now()
	c.StartedAt = start
	load := whole(s.Start)
	var good, bad float64 // 0: none yet
	stop := func(why, text string) {
		c.Stop, c.StopText = why, text
	}
	var err error
	for n := 0; ; n++ {
		if ctx.Err() != nil {
			stop(result.StopInterrupted, "interrupted")
			break
		}
		if n >= maxSteps {
			stop(result.StopBudget, fmt.Sprintf("%d steps, the most a search runs", maxSteps))
			break
		}
		if used := now().Sub(start); used+s.StepCost > s.Budget {
			stop(result.StopBudget, fmt.Sprintf("the --budget %v ran out (%v used, a step takes %v)", s.Budget, used.Round(time.Second), s.StepCost))
			break
		}
		var st result.CapacityStep
		st, err = r.Step(ctx, load)
		if err != nil {
			if ctx.Err() != nil {
				err = nil
				stop(result.StopInterrupted, "interrupted")
				break
			}
			stop("error", err.Error())
			break
		}
		st.Load = load
		c.Steps = append(c.Steps, st)
		if progress != nil {
			progress(st)
		}
		switch st.Verdict {
		case result.CapTargetDown:
			stop(result.StopTargetDown, "the target went down at "+result.FormatLoad(load, ""))
		case result.CapHarnessBound:
			stop(result.StopHarness, "the harness could not offer "+result.FormatLoad(load, ""))
		case result.CapPass:
			good = load
		case result.CapFail:
			bad = load
			c.BrokeAt, c.BrokeFirst = load, first(st.Broke)
		default:
			return c, fmt.Errorf("capacity: step at %v has no verdict", load)
		}
		if c.Stop != "" {
			break
		}
		next, why, text := nextLoad(s, good, bad)
		if why != "" {
			stop(why, text)
			break
		}
		load = next
	}
	c.Sustainable = good
	c.Rules = result.RuleOnsets(c.Steps)
	c.DurationNS = now().Sub(start)
	c.Settings = result.CapacitySettings{Start: whole(s.Start), Max: s.Max, Precision: s.Precision, BudgetNS: s.Budget}
	if c.Stop == "error" {
		return c, err
	}
	return c, nil
}

// nextLoad is the load after a step, given the highest that held (good)
// and the lowest that broke (bad), 0 for none; or why the search ends.
func nextLoad(s Settings, good, bad float64) (float64, string, string) {
	switch {
	case bad == 0:
		// Everything held so far: double, up to Max.
		if good >= s.Max {
			return 0, result.StopMax, "every load held up to --max " + result.FormatLoad(s.Max, "")
		}
		return math.Min(whole(good*2), s.Max), "", ""
	case good == 0:
		// Nothing held yet: halve.
		if bad <= 1 {
			return 0, result.StopNoLoadHeld, "no load held, down to 1"
		}
		return whole(math.Floor(bad / 2)), "", ""
	}
	mid := whole(math.Floor((good + bad) / 2))
	if bad-good <= s.Precision*good || mid <= good || mid >= bad {
		return 0, result.StopPrecision, fmt.Sprintf("%s held, %s broke: within --precision %.0f%%", result.FormatLoad(good, ""), result.FormatLoad(bad, ""), s.Precision*100)
	}
	return mid, "", ""
}

func whole(v float64) float64 { return math.Max(1, math.Round(v)) }

func first(xs []string) string {
	if len(xs) == 0 {
		return "(nothing named)"
	}
	return xs[0]
}
