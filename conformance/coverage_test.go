package conformance

import (
	"flag"
	"regexp"
	"slices"
	"testing"

	"github.com/lobbybench/lobbybench/result"
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

// faultCatches returns, per fault-injection row, the case patterns the row
// requires to fail or warn: TestFaultInjection's caught and quirk cases,
// TestTCPFaultInjection's caught cases, and the cases TestLeviathanFaults
// wants failed or warned.
func faultCatches() map[string][]string {
	rows := map[string][]string{}
	for _, r := range udpFaultRows {
		rows["TestFaultInjection/"+r.name] = slices.Concat(r.caught, r.quirk)
	}
	for _, r := range tcpFaultRows {
		rows["TestTCPFaultInjection/"+r.name] = r.caught
	}
	for _, r := range levFaultRows {
		for id, v := range r.want {
			if v == result.VerdictFail || v == result.VerdictWarn {
				rows["TestLeviathanFaults/"+r.name] = append(rows["TestLeviathanFaults/"+r.name], id)
			}
		}
	}
	return rows
}

// TestFaultCoverage holds the suite to its standard: every registered case
// is proven by a fault-injection row that needs it to fail or warn, so no
// case can silently stop catching anything.
func TestFaultCoverage(t *testing.T) {
	rows := faultCatches()
	for name, pats := range rows {
		for _, p := range pats {
			if err := ValidPattern(p); err != nil {
				t.Errorf("%s: %v", name, err)
			} else if len(Cases("", p)) == 0 {
				t.Errorf("%s: caught pattern %q matches no registered case", name, p)
			}
		}
	}
	caught := func(id string) []string {
		var by []string
		for name, pats := range rows {
			if matchAny(pats, id) {
				by = append(by, name)
			}
		}
		return by
	}
	for id, why := range faultExempt {
		c := Cases("", id)
		switch {
		case len(c) != 1 || c[0].ID != id:
			t.Errorf("faultExempt names %s, which is not a registered case", id)
		case c[0].Level != Info:
			t.Errorf("faultExempt names %s (%s), a %v case: only INFO cases may be exempt", id, why, c[0].Level)
		}
	}
	for _, p := range Protocols() {
		for _, c := range Cases(p) {
			if _, ok := faultExempt[c.ID]; ok {
				continue
			}
			if len(caught(c.ID)) == 0 {
				t.Errorf("%s (%v): no fault-injection row catches it", c.ID, c.Level)
			}
		}
	}
}
