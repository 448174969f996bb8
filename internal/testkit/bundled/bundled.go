// Package bundled pairs every flow of the bundled scenarios
// (scenarios/*.yaml) with the same flow written as a script
// (scenarios/testdata/scripted/<file>), for the tests that play both and
// compare what they send, and names the flows no script can play.
package bundled

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/scenario"
)

// Unscripted are the bundled flows no script can play, and why (also in
// docs/limitations.md), by scenario name/flow name.
var Unscripted = map[string]string{
	"malformed-mix/garbage": "malformed sends datagrams broken on purpose (bad CRC, truncated, wrong length…) " +
		"chosen at random per packet, mixed with valid requests, and counts replies to them: a script's raw " +
		"sends fixed bytes, one step each",
	"rate-limit-probe/prober": "rate_probe ramps a request rate and searches for the limit: no script step " +
		"sends at a rate",
}

// Pair is one bundled flow and its script, each alone in a copy of its
// plan, as one session plays it.
type Pair struct {
	Key               string // scenario name/flow name
	BuiltIn, Scripted *scenario.Plan
}

// dir is the repository's scenarios folder.
func dir(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no source path for the bundled scenarios")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scenarios")
}

// Pairs returns every flow of the bundled scenarios of protocol (the
// scripted-*.yaml examples, already scripts, aside) with its script; t
// fails on a flow that has neither a script nor a reason in Unscripted.
func Pairs(t testing.TB, protocol string) []Pair {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir(t), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Pair
	for _, file := range files {
		name := filepath.Base(file)
		if strings.HasPrefix(name, "scripted-") {
			continue
		}
		builtIn, err := scenario.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(builtIn.Protocol) != protocol {
			continue
		}
		var scripted *scenario.Plan
		for _, f := range builtIn.Flows {
			key := builtIn.Name + "/" + f.Name
			if why, ok := Unscripted[key]; ok {
				t.Logf("%s: no script: %s", key, why)
				continue
			}
			if scripted == nil {
				sf := filepath.Join(dir(t), "testdata", "scripted", name)
				if _, err := os.Stat(sf); err != nil {
					t.Fatalf("%s: no script (%v), nor a reason in bundled.Unscripted", key, err)
				}
				if scripted, err = scenario.Load(sf); err != nil {
					t.Fatal(err)
				}
			}
			i := slices.IndexFunc(scripted.Flows, func(g scenario.Flow) bool { return g.Name == f.Name })
			if i < 0 {
				t.Fatalf("%s: no flow %q in its script, nor a reason in bundled.Unscripted", key, f.Name)
			}
			out = append(out, Pair{Key: key, BuiltIn: alone(builtIn, f), Scripted: alone(scripted, scripted.Flows[i])})
		}
	}
	return out
}

// alone is a copy of p whose one flow is f as one session plays it
// alone: the group's leader, no barrier to wait at, no think (a think
// sends nothing; dropped, from the built-in and the scripted flow alike,
// to keep the tests short).
func alone(p *scenario.Plan, f scenario.Flow) *scenario.Plan {
	f.GroupSize = 1
	f.Steps = slices.DeleteFunc(slices.Clone(f.Steps), func(st scenario.Step) bool {
		return st.Kind == scenario.Barrier || st.Kind == scenario.Think || st.Only == scenario.Members
	})
	one := *p
	one.Flows = []scenario.Flow{f}
	return &one
}

// Compare fails t unless the built-in flow and its script sent the same
// units (datagrams, frames, messages: what), byte for byte, and some.
func Compare(t testing.TB, what string, builtIn, scripted [][]byte) {
	t.Helper()
	if len(builtIn) == 0 || len(builtIn) != len(scripted) {
		t.Errorf("built-in sent %d %s, the script %d", len(builtIn), what, len(scripted))
		return
	}
	for k := range builtIn {
		if string(builtIn[k]) != string(scripted[k]) {
			t.Errorf("%s %d: built-in % x, script % x", what, k, builtIn[k], scripted[k])
		}
	}
}

// Each plays every pair of protocol's bundled flows with play, which
// returns what one session of a plan sent, and compares the two (Compare).
func Each(t *testing.T, protocol, what string, play func(*testing.T, *scenario.Plan) [][]byte) {
	t.Helper()
	pairs := Pairs(t, protocol)
	if len(pairs) == 0 {
		t.Fatalf("no bundled %s flow", protocol)
	}
	for _, pair := range pairs {
		t.Run(pair.Key, func(t *testing.T) {
			Compare(t, what, play(t, pair.BuiltIn), play(t, pair.Scripted))
		})
	}
}
