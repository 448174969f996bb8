package scenario

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the loader: it must never panic, and
// must return either a plan or at least one located error, never both.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../scenarios/*.yaml", "testdata/invalid/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(minimal))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("protocol: udp-lobby\nload: &l {rate: 1/s, duration: 1s}\nx: *l\n"))
	f.Add([]byte(reusedSteps(3, 4)))
	f.Add([]byte(reusedSteps(600, 1000)))
	f.Add([]byte(laughs()))
	f.Add([]byte("protocol: udp-lobby\nflows: &f [{steps: *f}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if (p == nil) == (err == nil) {
			t.Fatalf("plan %v and error %v", p, err)
		}
		if err != nil {
			if es, ok := err.(Errors); !ok || len(es) == 0 {
				t.Fatalf("error %T %v is not a non-empty Errors", err, err)
			}
			return
		}
		// A valid plan must be runnable: a positive duration and flows with steps.
		if p.Load.Duration <= 0 || len(p.Flows) == 0 {
			t.Fatalf("valid plan with duration %v, %d flows", p.Load.Duration, len(p.Flows))
		}
		for _, fl := range p.Flows {
			if fl.Weight <= 0 || len(fl.Steps) == 0 {
				t.Fatalf("valid plan with flow %+v", fl)
			}
		}
		p.Load.Ramp().Pace(0, 0)
		if err := p.Describe(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzCurve feeds arbitrary bytes to the load-curve CSV reader, as the
// file a scenario's load.curve names: it must never panic, and must give
// either a load whose stages are finite and non-negative or located
// errors, never both.
func FuzzCurve(f *testing.F) {
	for _, glob := range []string{"../scenarios/*.csv", "testdata/curve/*.csv"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("minute,players\n0,10\n1,20\n"))
	f.Add([]byte("time,rate\n00:00,5\n25:30:00.5,7\n"))
	dir := f.TempDir()
	yml := "protocol: udp-lobby\nload:\n  curve: c.csv\n  compress: 60\nflows: [{steps: [list_rooms]}]\n"
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "c.csv"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Parse(filepath.Join(dir, "s.yaml"), []byte(yml))
		if (p == nil) == (err == nil) {
			t.Fatalf("plan %v and error %v", p, err)
		}
		if err != nil {
			if es, ok := err.(Errors); !ok || len(es) == 0 {
				t.Fatalf("error %T %v is not a non-empty Errors", err, err)
			}
			return
		}
		if p.Load.Duration <= 0 || math.IsNaN(p.Load.Start) || math.IsInf(p.Load.Start, 0) || p.Load.Start < 0 {
			t.Fatalf("valid curve with duration %v, start %v", p.Load.Duration, p.Load.Start)
		}
		for _, s := range p.Load.Stages {
			if s.For < 0 || math.IsNaN(s.Target) || math.IsInf(s.Target, 0) || s.Target < 0 {
				t.Fatalf("valid curve with stage %+v", s)
			}
		}
	})
}
