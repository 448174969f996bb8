package simclient_test

import (
	"testing"

	// The protocols register themselves; this package's tests use them.
	_ "github.com/lobbybench/lobbybench/protocols/all"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestRulesDescribed: every registered protocol lists the rules its run
// reports, each with a summary, and no id is two protocols' (or twice
// one's).
func TestRulesDescribed(t *testing.T) {
	owner := map[string]string{}
	for _, p := range simclient.Protocols() {
		c, _ := simclient.Describe(p)
		if len(c.Rules) == 0 {
			t.Errorf("%s lists no rule", p)
		}
		for _, r := range c.Rules {
			if o, dup := owner[r.ID]; dup || r.Summary == "" {
				t.Errorf("%s: rule %+v undescribed or listed already (by %s)", p, r, o)
			}
			owner[r.ID] = p
		}
	}
}
