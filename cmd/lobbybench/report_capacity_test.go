package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// repCapacityDocs writes capacity documents derived from the capacity
// fixtures of package reports (held up to 200/s at precision 10 %; and
// one whose target went down at 400/s): the base, the same search, one
// that held 170/s (-15 %) and the target-down one.
func repCapacityDocs(t *testing.T, dir string) (base, same, dropped, down string) {
	t.Helper()
	read := func(name string) *result.Capacity {
		f, err := os.Open(filepath.Join("..", "..", "reports", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		d, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := d.(*result.Capacity)
		if !ok {
			t.Fatalf("%s is a %T", name, d)
		}
		return c
	}
	write := func(name string, c *result.Capacity) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := reports.WriteCapacityJSON(f, c); err != nil {
			t.Fatal(err)
		}
		return path
	}
	c := read("capacity.json")
	base, same = write("cap-base.json", c), write("cap-same.json", c)
	c.Sustainable = 170
	dropped = write("cap-dropped.json", c)
	down = write("cap-down.json", read("capacity_down.json"))
	return base, same, dropped, down
}

func TestReportCompareCapacity(t *testing.T) {
	fx := newRepFixture(t)
	base, same, dropped, down := repCapacityDocs(t, fx.dir)
	tests := []dispatchCase{
		{"same", []string{"report", "compare", base, same}, exitOK, "Sustainable load: 200/s -> 200/s (0.00%)", "", false},
		{"drop beyond precision", []string{"report", "compare", base, dropped}, exitThreshold, "FAIL sustainable load: capacity_drop_pct = 15 > 10", "", false},
		{"drop within a wider gate", []string{"report", "compare", base, dropped, "--max-capacity-drop", "20%"}, exitOK, "Gates: all passed", "", false},
		{"gate off", []string{"report", "compare", base, dropped, "--max-capacity-drop", "off"}, exitOK, "Gates: all passed", "", false},
		{"bad gate", []string{"report", "compare", base, dropped, "--max-capacity-drop", "lots"}, exitUsage, "", "-max-capacity-drop", true},
		{"target down new", []string{"report", "compare", base, down}, exitThreshold, "TARGET DOWN new search: at 400/s", "", false},
		{"run against capacity", []string{"report", "compare", fx.base, base}, exitUsage, "", "is a run result but", true},
		{"merge a search", []string{"report", "merge", base}, exitUsage, "", "is not the document of a shard of a capacity ladder ('capacity --shard i/n' writes those): only they merge", true},
		{"markdown of a capacity result", []string{"report", "markdown", base}, exitOK, "PASS · sustainable 200/s", "", false},
		{"html of a capacity result beside a run", []string{"report", "html", base, fx.base}, exitUsage, "", "it renders alone", true},
		{"html of a capacity result", []string{"report", "html", base}, exitOK, "lobbybench capacity: list-poll", "", false},
		{"junit of a capacity result", []string{"report", "junit", down}, exitOK, "TARGET DOWN", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.stderr, stderr)
			}
			if tt.oneLine && strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
				t.Errorf("stderr is not one line:\n%s", stderr)
			}
		})
	}
	if first, _, _ := strings.Cut(func() string { _, out, _ := runCLI(t, "report", "compare", base, down); return out }(), "\n"); !strings.HasPrefix(first, "TARGET DOWN new search") {
		t.Errorf("a target-down side is not said first: %q", first)
	}
	code, stdout, stderr := runCLI(t, "report", "compare", base, dropped, "--format", "json")
	if code != exitThreshold {
		t.Fatalf("--format json: exit %d, want %d: %s", code, exitThreshold, stderr)
	}
	var c result.CapacityComparison
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if c.BaseSustainable != 200 || c.NewSustainable != 170 || c.ChangePct != -15 || len(c.Breaches) != 1 || c.Breaches[0].Gate.Max != 10 {
		t.Errorf("comparison = %+v", c)
	}
}
