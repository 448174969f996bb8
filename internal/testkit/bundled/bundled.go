// Package bundled pairs every flow of the bundled scenarios
// (scenarios/*.yaml) with the same flow written as a script
// (scenarios/testdata/scripted/<file>), for the tests that play both and
// compare what they send.
package bundled

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/script"
)

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
// fails on a flow that has no script.
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
			if scripted == nil {
				sf := filepath.Join(dir(t), "testdata", "scripted", name)
				if _, err := os.Stat(sf); err != nil {
					t.Fatalf("%s: no script (%v)", key, err)
				}
				if scripted, err = scenario.Load(sf); err != nil {
					t.Fatal(err)
				}
			}
			i := slices.IndexFunc(scripted.Flows, func(g scenario.Flow) bool { return g.Name == f.Name })
			if i < 0 {
				t.Fatalf("%s: no flow %q in its script", key, f.Name)
			}
			out = append(out, Pair{Key: key, BuiltIn: alone(builtIn, f), Scripted: alone(scripted, scripted.Flows[i])})
		}
	}
	return out
}

// alone is a copy of p whose one flow is f as one session plays it
// alone: the group's leader, no barrier to wait at, no think (a think
// sends nothing; dropped, from the built-in and the scripted flow alike,
// to keep the tests short), and every pause left (a series' interval, a
// think inside a script's block) Pace times shorter.
func alone(p *scenario.Plan, f scenario.Flow) *scenario.Plan {
	f.GroupSize = 1
	f.Steps = faster(slices.DeleteFunc(slices.Clone(f.Steps), func(st scenario.Step) bool {
		return st.Kind == scenario.Barrier || st.Kind == scenario.Think || st.Only == scenario.Members
	}))
	one := *p
	one.Flows = []scenario.Flow{f}
	return &one
}

// Pace is how many times faster than written a pair plays its pauses.
// What a flow sends does not depend on how long it pauses, only the
// clock a datagram may carry (a ping's clientTime), which keeps its
// schedule's shape: soak's player pings 10 times a second apart, 10 s
// of waiting at the pace written, 1 s at this one. A server's timer the
// flow waits for (a countdown) is the test's to shorten.
const Pace = 10

// faster is a copy of steps with each pause Pace times shorter: a
// think's, a series' interval (stepkit.Series), and those inside a
// script's blocks. The copies share nothing they change with steps.
func faster(steps []scenario.Step) []scenario.Step {
	out := slices.Clone(steps)
	for i := range out {
		out[i] = fasterStep(out[i])
	}
	return out
}

func fasterStep(st scenario.Step) scenario.Step {
	switch st.Kind {
	case scenario.Think:
		st.Think.A, st.Think.B = st.Think.A/Pace, st.Think.B/Pace
	case scenario.RateProbe: // the same ramp, Pace times shorter: rates are what a probe sends by
		st.Probe.Over /= Pace
	}
	switch p := st.Params.(type) {
	case stepkit.Series:
		p.Interval /= Pace
		st.Params = p
	case *script.Block:
		b := fasterBlock(*p)
		st.Params = &b
	}
	return st
}

// fasterBlock is faster for a script's block: a think is a Call whose
// value is its scenario.Step, and blocks nest in ifs and repeats.
func fasterBlock(b script.Block) script.Block {
	out := script.Block{Steps: slices.Clone(b.Steps)}
	for i := range out.Steps {
		s := &out.Steps[i]
		switch {
		case s.Call != nil:
			if st, ok := s.Call.Value.(scenario.Step); ok {
				s.Call = &script.Call{Value: fasterStep(st)}
			}
		case s.If != nil:
			c := *s.If
			c.Then, c.Else = fasterBlock(c.Then), fasterBlock(c.Else)
			s.If = &c
		case s.Repeat != nil:
			r := *s.Repeat
			r.Body = fasterBlock(r.Body)
			s.Repeat = &r
		}
	}
	return out
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
