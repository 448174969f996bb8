package scenario

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
)

// curveScenario is a scenario in testdata/curve whose load is curve,
// compressed 60 times.
func curveScenario(curve, extra string) string {
	return "protocol: udp-lobby\nload:\n  curve: " + curve + "\n  compress: 60\n" + extra + "flows: [{steps: [list_rooms]}]\n"
}

// TestCurveGolden reads every testdata/curve/*.csv as load.curve of a
// scenario beside it and compares the outcome with its .golden: the load
// it gives (model, start, every stage, duration) or every error, each as
// file:line.
func TestCurveGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/curve/*.csv")
	if len(files) == 0 {
		t.Fatal("no curves")
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			p, err := Parse(filepath.Join("testdata", "curve", "s.yaml"), []byte(curveScenario(name, "")))
			if err != nil {
				var es Errors
				if !errors.As(err, &es) {
					t.Fatalf("error is %T, want Errors", err)
				}
				b.WriteString(err.Error() + "\n")
			} else {
				l := p.Load
				fmt.Fprintf(&b, "%s\n", l.describe())
				fmt.Fprintf(&b, "model %s, start %g, duration %s\n", l.Model, l.Start, l.Duration)
				for _, s := range l.Stages {
					fmt.Fprintf(&b, "  → %g over %s\n", s.Target, s.For)
				}
			}
			golden.Check(t, strings.TrimSuffix(f, ".csv")+".golden", []byte(b.String()))
		})
	}
}

// TestCurveLoad: a curve is the load profile it describes: values at the
// compressed times of its rows, linear between them, the run as long as
// the curve compressed; the model follows the value column.
func TestCurveLoad(t *testing.T) {
	p, err := Parse("testdata/curve/s.yaml", []byte(curveScenario("players-clock.csv", "")))
	if err != nil {
		t.Fatal(err)
	}
	prof := p.Load.Ramp()
	minutes := func(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
	// Rows at 0h, 6h, 12h, 18h: 0, 6, 12, 18 minutes once compressed 60 times.
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{0, 1200}, {minutes(3), 750}, {minutes(6), 300}, {minutes(9), 1150}, {minutes(12), 2000}, {minutes(18), 5000}} {
		if got := prof.Clients(c.at, 0); got != c.want {
			t.Errorf("clients at %s = %d, want %d", c.at, got, c.want)
		}
	}
	// The last row at 23:59:59.5: 86399.5 s of real time, over 60.
	if want := time.Duration(math.Round(86399.5 / 60 * 1e9)); p.Load.Model != Closed || p.Load.Duration != want || p.Load.MaxClients != 5000 {
		t.Errorf("model %s, duration %s, max_clients %d; want closed, %s, 5000", p.Load.Model, p.Load.Duration, p.Load.MaxClients, want)
	}
	// A rate curve is the open model and follows Poisson arrivals.
	p, err = Parse("testdata/curve/s.yaml", []byte(curveScenario("rate-minute.csv", "  arrivals: poisson\n")))
	if err != nil {
		t.Fatal(err)
	}
	if p.Load.Model != Open || p.Load.Arrivals != ArrivalsPoisson || p.Load.Duration != 2*time.Minute {
		t.Errorf("model %s, arrivals %s, duration %s; want open, poisson, 2m", p.Load.Model, p.Load.Arrivals, p.Load.Duration)
	}
	if got := p.Load.Ramp().At(45 * time.Second); !near(got, 40.5) { // minute 645 of the curve
		t.Errorf("rate at 45s = %g, want 40.5", got)
	}
}

// TestCurveKeys: the YAML side of load.curve, each problem at its key.
func TestCurveKeys(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "day.csv"), []byte("minute,players\n0,10\n60,20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.yaml")
	tests := []struct {
		name, yaml string
		want       string // "" for a valid scenario
	}{
		{"valid, relative to the scenario", curveScenario("day.csv", ""), ""},
		{"valid, with duration and max_clients", curveScenario("day.csv", "  duration: 30s\n  max_clients: 50\n"), ""},
		{"missing file", curveScenario("nope.csv", ""), "s.yaml:3: load.curve: open " + filepath.Join(dir, "nope.csv") + ": no such file or directory"},
		{"directory", curveScenario("adir", ""), "s.yaml:3: load.curve: " + filepath.Join(dir, "adir") + " is not a regular file"},
		{"curve and rate", curveScenario("day.csv", "  rate: 10/s\n"), "s.yaml:5: load.rate: load.curve (line 3) gives the load; give one or the other"},
		{"curve and stages", curveScenario("day.csv", "  stages: [{clients: 3, for: 1s}]\n"), "s.yaml:5: load.stages: load.curve (line 3) gives the load"},
		{"compress without curve", "protocol: udp-lobby\nload: {rate: 1/s, duration: 1s, compress: 60}\nflows: [{steps: [list_rooms]}]\n", "s.yaml:2: load.compress applies to load.curve"},
		{"compress zero", strings.Replace(curveScenario("day.csv", ""), "compress: 60", "compress: 0", 1), "s.yaml:4: load.compress must be above 0 and at most 1000000, got 0"},
		{"compress not a number", strings.Replace(curveScenario("day.csv", ""), "compress: 60", "compress: 60x", 1), `s.yaml:4: load.compress must be a number, got "60x"`},
		{"model against the column", curveScenario("day.csv", "  model: open\n"), "s.yaml:5: load.model is open, but the curve's players column is for the closed model"},
		{"arrivals on a players curve", curveScenario("day.csv", "  arrivals: poisson\n"), "s.yaml:5: load.arrivals applies to the open model (rate), not the closed model"},
		{"over 24h once stretched", strings.Replace(curveScenario("day.csv", ""), "compress: 60", "compress: 0.01", 1), "s.yaml:3: load: the run lasts 100h0m0s, over the 24h0m0s limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(file, []byte(tt.yaml))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected errors:\n%v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if want := filepath.Join(dir, tt.want); !strings.Contains(err.Error(), want) {
				t.Errorf("errors:\n%v\nwant one containing\n%s", err, want)
			}
		})
	}
}
