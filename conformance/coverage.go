package conformance

import (
	"fmt"
	"slices"
	"sort"

	"github.com/lobbybench/lobbybench/result"
)

// FaultRows maps each fault-injection row of a test ("TestFaultInjection/no
// CRC check") to the case patterns it needs to fail or warn.
type FaultRows map[string][]string

// Wanted adds row name, given as the verdict it wants of each case (case
// id → result.Verdict…), with the cases it needs to fail or warn.
func (r FaultRows) Wanted(name string, want map[string]string) {
	for id, v := range want {
		if v == result.VerdictFail || v == result.VerdictWarn {
			r[name] = append(r[name], id)
		}
	}
	slices.Sort(r[name])
}

// FaultCoverage holds a protocol's cases to the suite's standard: each is
// proven by a fault-injection row that needs it to fail or warn, so no
// case can silently stop catching anything. It returns, sorted, every
// pattern of rows that is not valid or matches no registered case, every
// case of exempt (each with why) that is not a registered INFO case, and
// every case of the protocols named that no row catches and exempt does
// not name. The rows may live wherever the fault servers do: the
// conformance package's tests for the real protocols, a protocol's own
// tests for a protocol that proves its cases there.
func FaultCoverage(rows FaultRows, exempt map[string]string, protocols ...string) []string {
	var out []string
	caught := map[string]bool{}
	for name, pats := range rows {
		for _, p := range pats {
			if err := ValidPattern(p); err != nil {
				out = append(out, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			cs := Cases("", p)
			if len(cs) == 0 {
				out = append(out, fmt.Sprintf("%s: caught pattern %q matches no registered case", name, p))
			}
			for _, c := range cs {
				caught[c.ID] = true
			}
		}
	}
	for id, why := range exempt {
		c := Cases("", id)
		switch {
		case len(c) != 1 || c[0].ID != id:
			out = append(out, fmt.Sprintf("exempt names %s, which is not a registered case", id))
		case c[0].Level != Info:
			out = append(out, fmt.Sprintf("exempt names %s (%s), a %v case: only INFO cases may be exempt", id, why, c[0].Level))
		}
	}
	for _, p := range protocols {
		cs := Cases(p)
		if len(cs) == 0 {
			out = append(out, fmt.Sprintf("protocol %q: no registered case", p))
		}
		for _, c := range cs {
			if _, ok := exempt[c.ID]; !ok && !caught[c.ID] {
				out = append(out, fmt.Sprintf("%s (%v): no fault-injection row catches it", c.ID, c.Level))
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
