package capacity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

func TestParseLoads(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
		err  string // in the error; "" for none
	}{
		{"50,100,200", []float64{50, 100, 200}, ""},
		{" 1, 2 ,40 ", []float64{1, 2, 40}, ""},
		{"7", []float64{7}, ""},
		{"", nil, "--loads is empty"},
		{"50,,100", nil, `--loads: "" (load 2) is not a number`},
		{"50,lots", nil, `--loads: "lots" (load 2) is not a number`},
		{"100,50", nil, "--loads: 50 after 100: loads must increase"},
		{"50,50", nil, "--loads: 50 after 50: loads must increase"},
		{"0,10", nil, "--loads: 0 (load 1) is not a whole load from 1 to 1000000"},
		{"10,12.5", nil, "--loads: 12.5 (load 2) is not a whole load"},
		{"-5", nil, "not a whole load"},
		{"2000000", nil, "not a whole load from 1 to 1000000"},
		{"NaN", nil, "is not a number"},
		{strings.Repeat("1,", 64) + "1", nil, "--loads names 65 loads: at most 64"},
	} {
		got, err := ParseLoads(tc.in)
		switch {
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("ParseLoads(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseLoads(%q) error %v, want one saying %q", tc.in, err, tc.err)
		}
	}
}

func TestDoublingLoads(t *testing.T) {
	for _, tc := range []struct {
		start, max float64
		want       []float64
	}{
		{10, 100, []float64{10, 20, 40, 80, 100}},
		{10, 80, []float64{10, 20, 40, 80}},
		{5, 5, []float64{5}},
		{1, 3, []float64{1, 2, 3}},
	} {
		if got := DoublingLoads(tc.start, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("DoublingLoads(%v, %v) = %v, want %v", tc.start, tc.max, got, tc.want)
		}
	}
	if n := len(DoublingLoads(1, 1e300)); n != maxSteps {
		t.Errorf("DoublingLoads to 1e300: %d loads, want at most %d", n, maxSteps)
	}
}

// verdicts is a Runner whose step at a load has the verdict given.
func verdicts(v map[float64]string) (Runner, *[]float64) {
	var played []float64
	return RunnerFunc(func(_ context.Context, load float64) (result.CapacityStep, error) {
		played = append(played, load)
		st := result.CapacityStep{Load: load, Verdict: v[load]}
		if st.Verdict == "" {
			st.Verdict = result.CapPass
		}
		if st.Verdict == result.CapFail {
			st.Broke = []string{"errors.rate < 5% (measured 9.00%)"}
			st.Violations = map[string]int64{"U-SEQ": 1}
		}
		if st.Verdict == result.CapHarnessBound || st.Verdict == result.CapTargetDown {
			st.Why = "why " + st.Verdict
		}
		return st, nil
	}), &played
}

func TestLadder(t *testing.T) {
	ladder := []float64{10, 20, 40, 80}
	for _, tc := range []struct {
		name        string
		verdicts    map[float64]string
		shard       string
		played      []float64
		stop        string
		sustainable float64
		brokeAt     float64
		status      string
	}{
		{"every load held", nil, "", ladder, result.StopLadder, 80, 0, result.StatusPass},
		// A FAIL does not end a ladder: a shard could not know it, and
		// an unsharded one plays as a shard would.
		{"broke at 40, played on", map[float64]string{40: result.CapFail, 80: result.CapFail}, "", ladder, result.StopLadder, 20, 40, result.StatusPass},
		// A load that held above the one that broke: the verdicts do
		// not rise with the load (a count floor a low load cannot meet,
		// a hiccup), and neither "sustainable 10" nor "no load held" is
		// true.
		{"a pass above the break", map[float64]string{20: result.CapFail}, "", ladder, result.StopNotMonotone, 10, 20, result.StatusInconclusive},
		{"the lowest broke, a higher held", map[float64]string{10: result.CapFail, 20: result.CapFail}, "", ladder, result.StopNotMonotone, 0, 10, result.StatusInconclusive},
		{"no load held", map[float64]string{10: result.CapFail, 20: result.CapFail, 40: result.CapFail, 80: result.CapFail}, "", ladder, result.StopNoLoadHeld, 0, 10, result.StatusFail},
		// What broke above a harness-bound step is not a finding: the
		// load below it was not all offered either.
		{"harness-bound before a break", map[float64]string{40: result.CapHarnessBound, 80: result.CapFail}, "", ladder, result.StopHarness, 20, 0, result.StatusInconclusive},
		{"a break before harness-bound is the limit", map[float64]string{20: result.CapFail, 40: result.CapHarnessBound, 80: result.CapFail}, "", ladder, result.StopLadder, 10, 20, result.StatusPass},
		{"target down ends it", map[float64]string{20: result.CapFail, 40: result.CapTargetDown}, "", []float64{10, 20, 40}, result.StopTargetDown, 10, 20, result.StatusTargetDown},
		{"a shard has no verdict alone", map[float64]string{40: result.CapFail}, "0/2", ladder, result.StopLadder, 0, 0, result.StatusShard},
		{"a shard that saw the target go down says so first", map[float64]string{40: result.CapTargetDown}, "1/2", []float64{10, 20, 40}, result.StopTargetDown, 0, 0, result.StatusTargetDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, played := verdicts(tc.verdicts)
			c, err := Ladder(context.Background(), LadderSettings{Loads: ladder, Budget: time.Hour, Shard: tc.shard}, r, time.Now, nil)
			if err != nil {
				t.Fatal(err)
			}
			hl := c.Headline()
			if !slices.Equal(*played, tc.played) || c.Stop != tc.stop || c.Sustainable != tc.sustainable || c.BrokeAt != tc.brokeAt || hl.Status != tc.status {
				t.Errorf("played %v, stop %q (%s), sustainable %v, broke at %v, status %s; want %v, %q, %v, %v, %s",
					*played, c.Stop, c.StopText, c.Sustainable, c.BrokeAt, hl.Status, tc.played, tc.stop, tc.sustainable, tc.brokeAt, tc.status)
			}
			if !slices.Equal(c.Settings.Loads, ladder) || c.Shard != tc.shard {
				t.Errorf("settings loads %v, shard %q", c.Settings.Loads, c.Shard)
			}
			if first := slices.IndexFunc(tc.played, func(l float64) bool { return tc.verdicts[l] == result.CapFail }); first >= 0 &&
				(len(c.Rules) != 1 || c.Rules[0].FirstLoad != tc.played[first]) {
				t.Errorf("rules %+v: want U-SEQ first at %v", c.Rules, tc.played[first])
			}
			if tc.shard != "" && !strings.Contains(hl.Text, "shard "+tc.shard) && !strings.Contains(hl.Text, "SHARD "+tc.shard) {
				t.Errorf("a shard's headline %q does not name it", hl.Text)
			}
		})
	}
}

// The budget ends a ladder before a step that would overrun it; an
// interrupted ladder says so, with the steps before it.
func TestLadderStops(t *testing.T) {
	r, played := verdicts(nil)
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	c, err := Ladder(context.Background(), LadderSettings{Loads: []float64{1, 2, 3, 4}, Budget: 5 * time.Second, StepCost: 2 * time.Second}, r, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each reading of the clock is a second on: before the 4th step 4s
	// are used, and a step of 2s more would overrun the 5s.
	if c.Stop != result.StopBudget || len(*played) != 3 || c.Sustainable != 3 || !strings.Contains(c.StopText, "before 4") {
		t.Errorf("stop %q (%s) after %v, sustainable %v: want the budget before the 4th step", c.Stop, c.StopText, *played, c.Sustainable)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	stop := RunnerFunc(func(ctx context.Context, load float64) (result.CapacityStep, error) {
		if n++; n == 2 {
			cancel()
		}
		return result.CapacityStep{Verdict: result.CapPass}, nil
	})
	c, err = Ladder(ctx, LadderSettings{Loads: []float64{1, 2, 3, 4}, Budget: time.Hour}, stop, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Stop != result.StopInterrupted || len(c.Steps) != 2 || c.Headline().Status != result.StatusInterrupted {
		t.Errorf("stop %q, %d steps: want interrupted after 2", c.Stop, len(c.Steps))
	}
}
