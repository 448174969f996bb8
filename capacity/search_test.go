package capacity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// fake is a step runner that is a pure function of load, on a fake clock
// each step advances by cost.
type fake struct {
	verdict func(load float64) string
	now     time.Time
	cost    time.Duration
	loads   []float64
}

func (f *fake) Step(_ context.Context, load float64) (result.CapacityStep, error) {
	f.loads = append(f.loads, load)
	f.now = f.now.Add(f.cost)
	st := result.CapacityStep{Load: load, Verdict: f.verdict(load)}
	if st.Verdict == result.CapFail {
		st.Broke = []string{"errors.rate < 5% (measured 9%)"}
	}
	return st, nil
}

// holdsUpTo passes every load up to r.
func holdsUpTo(r float64) func(float64) string {
	return func(l float64) string {
		if l <= r {
			return result.CapPass
		}
		return result.CapFail
	}
}

func TestSearch(t *testing.T) {
	base := Settings{Start: 10, Max: 100000, Precision: 0.1, Budget: time.Hour, StepCost: 10 * time.Second}
	tests := []struct {
		name        string
		s           func(Settings) Settings
		verdict     func(float64) string
		loads       []float64
		sustainable float64
		brokeAt     float64
		stop        string
	}{
		{"doubling then bisection to precision", nil, holdsUpTo(200),
			[]float64{10, 20, 40, 80, 160, 320, 240, 200, 220}, 200, 220, result.StopPrecision},
		{"held up to max", func(s Settings) Settings { s.Max = 50; return s }, holdsUpTo(1000),
			[]float64{10, 20, 40, 50}, 50, 0, result.StopMax},
		{"max caps the doubling, then bisects", func(s Settings) Settings { s.Max = 50; return s }, holdsUpTo(45),
			[]float64{10, 20, 40, 50, 45, 47}, 45, 47, result.StopPrecision},
		{"coarser precision stops sooner", func(s Settings) Settings { s.Precision = 0.5; return s }, holdsUpTo(200),
			[]float64{10, 20, 40, 80, 160, 320, 240}, 160, 240, result.StopPrecision},
		{"budget ends the search", func(s Settings) Settings { s.Budget = 45 * time.Second; return s }, holdsUpTo(200),
			[]float64{10, 20, 40, 80}, 80, 0, result.StopBudget},
		{"a failing start halves", nil, holdsUpTo(3),
			[]float64{10, 5, 2, 3, 4}, 3, 4, result.StopPrecision},
		{"no load held", nil, holdsUpTo(0),
			[]float64{10, 5, 2, 1}, 0, 1, result.StopNoLoadHeld},
		{"harness-bound stops at once", nil, func(l float64) string {
			if l >= 40 {
				return result.CapHarnessBound
			}
			return result.CapPass
		}, []float64{10, 20, 40}, 20, 0, result.StopHarness},
		{"target down stops at once", nil, func(l float64) string {
			if l >= 20 {
				return result.CapTargetDown
			}
			return result.CapPass
		}, []float64{10, 20}, 10, 0, result.StopTargetDown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			if tc.s != nil {
				s = tc.s(s)
			}
			f := &fake{verdict: tc.verdict, now: time.Unix(0, 0), cost: s.StepCost}
			var seen []float64
			c, err := Search(context.Background(), s, f, func() time.Time { return f.now }, func(st result.CapacityStep) { seen = append(seen, st.Load) })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.loads, tc.loads) {
				t.Errorf("loads %v, want %v", f.loads, tc.loads)
			}
			if !slices.Equal(seen, tc.loads) {
				t.Errorf("progress saw %v, want %v", seen, tc.loads)
			}
			if c.Sustainable != tc.sustainable || c.BrokeAt != tc.brokeAt || c.Stop != tc.stop {
				t.Errorf("sustainable %v broke at %v stop %q, want %v %v %q (%s)", c.Sustainable, c.BrokeAt, c.Stop, tc.sustainable, tc.brokeAt, tc.stop, c.StopText)
			}
			if c.Stop == result.StopPrecision && c.BrokeAt-c.Sustainable > max(1, s.Precision*c.Sustainable) {
				t.Errorf("gap %v-%v is over the precision", c.Sustainable, c.BrokeAt)
			}
		})
	}
}

func TestSearchSettings(t *testing.T) {
	ok := Settings{Start: 10, Max: 100, Precision: 0.1, Budget: time.Minute}
	for _, tc := range []struct {
		name string
		mod  func(*Settings)
		want string
	}{
		{"start", func(s *Settings) { s.Start = 0 }, "--start"},
		{"max", func(s *Settings) { s.Max = 5 }, "--max"},
		{"precision", func(s *Settings) { s.Precision = 1 }, "--precision"},
		{"budget", func(s *Settings) { s.Budget = 0 }, "--budget"},
	} {
		s := ok
		tc.mod(&s)
		err := s.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
	if err := ok.Check(); err != nil {
		t.Errorf("valid settings: %v", err)
	}
}

func TestSearchRunnerError(t *testing.T) {
	boom := errors.New("unreachable")
	n := 0
	r := RunnerFunc(func(_ context.Context, load float64) (result.CapacityStep, error) {
		n++
		if n == 2 {
			return result.CapacityStep{}, boom
		}
		return result.CapacityStep{Load: load, Verdict: result.CapPass}, nil
	})
	c, err := Search(context.Background(), Settings{Start: 10, Max: 100, Precision: 0.1, Budget: time.Hour}, r, time.Now, nil)
	if !errors.Is(err, boom) || c == nil || len(c.Steps) != 1 {
		t.Fatalf("err %v, result %+v: want the runner's error with the first step kept", err, c)
	}
}
