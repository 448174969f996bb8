package conformance

import (
	"flag"
	"maps"
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
