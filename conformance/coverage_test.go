package conformance

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// faultRows selects fault-injection rows by name while one is developed:
// the suites of the other rows are not run (go test -run cannot spare them,
// since every row's suite starts before the subtests judge them).
var faultRows = flag.String("faultrows", "", "run only the fault-injection rows whose name matches this regular expression (all when empty)")

func rowSelected(name string) bool {
	if *faultRows == "" {
		return true
	}
	ok, err := regexp.MatchString(*faultRows, name)
	if err != nil {
		panic("-faultrows: " + err.Error())
	}
	return ok
}

// faultExempt are the cases no fault can prove, each with why. Only a case
// that never fails nor warns belongs here.
var faultExempt = map[string]string{
	// It reports the rate a flooding source is served at, a figure with
	// no right or wrong value: its verdict is always INFO.
	"udp-lobby/14/3": "informational: reports the accepted flood rate, never fails",
}

// faultTable is one fault-injection test's rows: the case patterns each
// row needs to fail or warn, and the protocol whose cases they prove.
type faultTable struct {
	protocol string
	rows     func() FaultRows
}

// faultTables are the fault-injection tests of this package, each added
// by its own file's init: a protocol whose fault servers live here adds its
// table there, and TestFaultCoverage holds that protocol's cases to it. A
// protocol that proves its cases in its own package (the toy) calls
// FaultCoverage in its own tests.
var faultTables []faultTable

func addFaultTable(protocol string, rows func() FaultRows) {
	faultTables = append(faultTables, faultTable{protocol, rows})
}

// TestFaultCoverage holds the suite to its standard: every case of a
// protocol whose fault servers live here is proven by a fault-injection
// row that needs it to fail or warn (FaultCoverage).
func TestFaultCoverage(t *testing.T) {
	rows := FaultRows{}
	var protocols []string
	for _, ft := range faultTables {
		maps.Copy(rows, ft.rows())
		protocols = append(protocols, ft.protocol)
	}
	if len(protocols) == 0 {
		t.Fatal("no fault-injection table")
	}
	for _, e := range FaultCoverage(rows, faultExempt, protocols...) {
		t.Error(e)
	}
}

// TestEveryGroupProven: every registered group's cases are proven
// somewhere: by a fault table of this package, or by the tests of the
// folder its FaultsIn names, which call FaultCoverage. A protocol added
// with no fault rows at all fails here.
func TestEveryGroupProven(t *testing.T) {
	here := map[string]bool{}
	for _, ft := range faultTables {
		here[ft.protocol] = true
	}
	for _, p := range Protocols() {
		g, _ := LookupGroup(p)
		if problem := provenBy(g, here[p], "..", os.ReadFile); problem != "" {
			t.Error(problem)
		}
	}
}

// provenBy says what is wrong with how group g's cases are proven ("" if
// nothing): hasTable is whether this package has a fault table for it;
// root is the module's root, read reads a file.
func provenBy(g Group, hasTable bool, root string, read func(string) ([]byte, error)) string {
	if g.FaultsIn == "" {
		if !hasTable {
			return fmt.Sprintf("protocol %q: no fault-injection table here and no FaultsIn: its cases are proven nowhere", g.Name)
		}
		return ""
	}
	files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(g.FaultsIn), "*_test.go"))
	for _, f := range files {
		if b, err := read(f); err == nil && bytes.Contains(b, []byte("conformance.FaultCoverage(")) {
			return ""
		}
	}
	return fmt.Sprintf("protocol %q: FaultsIn %q has no test that calls conformance.FaultCoverage", g.Name, g.FaultsIn)
}

// TestProvenByCatches: a group proven nowhere, and one whose FaultsIn
// folder has no coverage test, are named; one proven here or in its
// folder is not.
func TestProvenByCatches(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"good/x_test.go": "conformance.FaultCoverage(rows)", "bad/x_test.go": "nothing"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		g        Group
		hasTable bool
		want     string
	}{
		{Group{Name: "a"}, true, ""},
		{Group{Name: "a"}, false, "proven nowhere"},
		{Group{Name: "a", FaultsIn: "good"}, false, ""},
		{Group{Name: "a", FaultsIn: "bad"}, false, "has no test that calls"},
		{Group{Name: "a", FaultsIn: "missing"}, false, "has no test that calls"},
	} {
		got := provenBy(tt.g, tt.hasTable, dir, os.ReadFile)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("provenBy(%+v, %v) = %q, want %q", tt.g.FaultsIn, tt.hasTable, got, tt.want)
		}
	}
}

// TestFaultCoverageFinds: FaultCoverage reports a pattern that matches no
// case, an exempt case that is not INFO, and a case no row catches.
func TestFaultCoverageFinds(t *testing.T) {
	p := DefaultProtocol()
	cs := Cases(p)
	if len(cs) < 2 {
		t.Fatalf("%s has %d cases", p, len(cs))
	}
	first, second := cs[0], cs[1]
	if first.Level == Info {
		first, second = second, first
	}
	got := strings.Join(FaultCoverage(FaultRows{"row": {"no-such/1/1", second.ID}}, map[string]string{first.ID: "why"}, p), "\n")
	for _, want := range []string{
		`row: caught pattern "no-such/1/1" matches no registered case`,
		"exempt names " + first.ID + " (why), a " + first.Level.String() + " case: only INFO cases may be exempt",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("FaultCoverage lacks %q:\n%s", want, got)
		}
	}
	if len(cs) > 2 && !strings.Contains(got, cs[2].ID+" ("+cs[2].Level.String()+"): no fault-injection row catches it") {
		t.Errorf("FaultCoverage does not report %s, caught by no row:\n%s", cs[2].ID, got)
	}
	if strings.Contains(got, second.ID+" (") {
		t.Errorf("FaultCoverage reports %s, which a row catches:\n%s", second.ID, got)
	}
	if got := FaultCoverage(nil, nil, "no-such-protocol"); len(got) != 1 || !strings.Contains(got[0], "no registered case") {
		t.Errorf("a protocol with no case: %q", got)
	}
}
