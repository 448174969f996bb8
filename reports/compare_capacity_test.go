package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// capacityAt is capacityFixture with its sustainable load set to held.
func capacityAt(held float64) *result.Capacity {
	c := capacityFixture()
	c.Sustainable = held
	return c
}

func TestCompareCapacity(t *testing.T) {
	harness := capacityFixture()
	harness.Steps = append(harness.Steps[:3:3], result.CapacityStep{Load: 400, Verdict: result.CapHarnessBound, Why: "12 starts dropped late"})
	harness.Stop, harness.BrokeAt, harness.BrokeFirst = result.StopHarness, 0, ""
	down := capacityFixture()
	down.Steps = append(down.Steps[:3:3], result.CapacityStep{Load: 400, Verdict: result.CapTargetDown, Why: "at +3.2 s (refused)"})
	down.Stop, down.BrokeAt, down.BrokeFirst = result.StopTargetDown, 0, ""
	intr := capacityFixture()
	intr.Stop = result.StopInterrupted
	worse := capacityFixture()
	worse.Sustainable = 100
	worse.Steps[2] = result.CapacityStep{Load: 200, Verdict: result.CapFail, Broke: []string{"errors.rate < 5% (measured 9.00%)"}}
	for _, tt := range []struct {
		name      string
		base, new *result.Capacity
		gate      *result.Gate // nil: CapacityDropGate
		change    float64
		breaches  []string // the breaches' subjects, in order
		lead      string   // the table's first line
	}{
		{"same", capacityAt(200), capacityAt(200), nil, 0, nil, "Sustainable load: 200/s -> 200/s (0.00%)"},
		{"drop within precision", capacityAt(200), capacityAt(185), nil, -7.5, nil, "Sustainable load: 200/s -> 185/s (-7.50%)"},
		{"drop at precision", capacityAt(200), capacityAt(180), nil, -10, nil, "Sustainable load"},
		{"drop beyond precision", capacityAt(200), capacityAt(170), nil, -15, []string{"sustainable load"}, "Sustainable load"},
		{"rise", capacityAt(200), capacityAt(300), nil, 50, nil, "Sustainable load: 200/s -> 300/s (+50.00%)"},
		{"explicit gate tighter", capacityAt(200), capacityAt(185), &result.Gate{Metric: result.GateCapacityDropPct, Max: 5}, -7.5, []string{"sustainable load"}, "Sustainable load"},
		{"gate off", capacityAt(200), capacityAt(20), &result.Gate{Metric: result.GateCapacityDropPct, Max: 100}, -90, nil, "Sustainable load"},
		{"verdict changed", capacityFixture(), worse, nil, -50, []string{"sustainable load"}, "Sustainable load"},
		{"harness-bound new", capacityFixture(), harness, nil, 0, []string{"new search"}, "INCONCLUSIVE new search: harness-bound at 400/s"},
		{"target down base", down, capacityFixture(), nil, 0, []string{"base search"}, "TARGET DOWN base search: at 400/s"},
		{"interrupted new", capacityFixture(), intr, nil, 0, []string{"new search"}, "INTERRUPTED new search: the search was stopped"},
		{"base held nothing", capacityAt(0), capacityAt(50), nil, 0, nil, "Sustainable load: 0/s -> 50/s (base held no load)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := result.CapacityDropGate(tt.base, tt.new)
			if tt.gate != nil {
				g = *tt.gate
			}
			c, err := result.CompareCapacity(tt.base, tt.new, append(result.DefaultGates(), g))
			if err != nil {
				t.Fatal(err)
			}
			if c.ChangePct != tt.change {
				t.Errorf("change %v%%, want %v%%", c.ChangePct, tt.change)
			}
			var got []string
			for _, b := range c.Breaches {
				got = append(got, b.Subject)
			}
			if strings.Join(got, ",") != strings.Join(tt.breaches, ",") || c.OK() != (len(tt.breaches) == 0) {
				t.Errorf("breaches %v, want %v", c.Breaches, tt.breaches)
			}
			var b bytes.Buffer
			if err := WriteCapacityCompareTable(&b, c); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(b.String(), tt.lead) {
				t.Errorf("table starts %q, want %q:\n%s", strings.SplitN(b.String(), "\n", 2)[0], tt.lead, b.String())
			}
			for i, line := range strings.Split(b.String(), "\n") {
				if w := displayWidth(line); w > TermWidth {
					t.Errorf("line %d is %d columns: %q", i+1, w, line)
				}
			}
		})
	}
}

func TestCompareCapacityChanges(t *testing.T) {
	worse := capacityFixture()
	worse.Sustainable = 100
	worse.Steps[2] = result.CapacityStep{Load: 200, Verdict: result.CapFail, Broke: []string{"errors.rate < 5% (measured 9.00%)"}}
	worse.Steps = append(worse.Steps, result.CapacityStep{Load: 150, Verdict: result.CapFail}) // tried by new only
	c, err := result.CompareCapacity(capacityFixture(), worse, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := result.LoadChange{Load: 200, BaseVerdict: result.CapPass, NewVerdict: result.CapFail, NewBroke: "errors.rate < 5% (measured 9.00%)"}
	if len(c.Changed) != 1 || c.Changed[0] != want {
		t.Errorf("changed %+v, want [%+v]", c.Changed, want)
	}
	if !c.OK() {
		t.Errorf("no gate given, yet breaches %v", c.Breaches)
	}
	closed := capacityFixture()
	closed.Model = "closed"
	if _, err := result.CompareCapacity(capacityFixture(), closed, nil); err == nil || !strings.Contains(err.Error(), "not comparable") {
		t.Errorf("open against closed: err %v, want not comparable", err)
	}
}

func TestCapacityDropGate(t *testing.T) {
	a, b := capacityFixture(), capacityFixture()
	a.Settings.Precision, b.Settings.Precision = 0.05, 0.2
	if g := result.CapacityDropGate(a, b); g.Metric != result.GateCapacityDropPct || g.Max != 20 {
		t.Errorf("gate %+v, want capacity_drop_pct 20", g)
	}
}

func TestReadCapacity(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCapacityJSON(&b, capacityFixture()); err != nil {
		t.Fatal(err)
	}
	d, err := result.Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := d.(*result.Capacity)
	if !ok || c.Sustainable != 200 || len(c.Steps) != 7 || result.KindOf(d) != result.KindCapacity {
		t.Errorf("read %T %+v", d, d)
	}
	if _, err := result.ReadRun(strings.NewReader(`{"schema_version":1,"kind":"capacity"}`)); err == nil || !strings.Contains(err.Error(), "got a capacity document") {
		t.Errorf("ReadRun of a capacity document: %v", err)
	}
}
