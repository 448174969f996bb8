package scenario

import (
	"io"
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
		p.Load.Profile().Pace(0, 0)
		if err := p.Describe(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
