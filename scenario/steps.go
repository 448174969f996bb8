package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// StepKind names a step.
type StepKind string

// The step kinds every protocol shares; a protocol's own kinds are its
// StepSpecs (ProtocolSpec.Steps), declared in its packages.
const (
	Think     StepKind = "think"
	Barrier   StepKind = "barrier"
	Malformed StepKind = "malformed"
	RateProbe StepKind = "rate_probe"
)

// StepSpec is one step kind of a protocol: its name in scenarios, the
// parameters it takes and how they are read. The protocol's client plays
// it (its session dispatches on Step.Kind).
type StepSpec struct {
	Kind StepKind
	// Aliases are older names of the kind, still accepted (the step's
	// label, and so its metrics, keep the name written).
	Aliases []string
	// Request: the step sends requests and takes timeout, retries and
	// retry_interval (the flow's defaults unless set).
	Request bool
	// Wait: the step waits and takes timeout only (DefaultWaitTimeout
	// unless set).
	Wait bool
	// Params are the kind's own parameters (besides label, only and the
	// request policy); Shorthand is the one a single value sets ("" for
	// none).
	Params    []string
	Shorthand string
	// Parse reads the kind's parameters into the value the step carries
	// (Step.Params), which only the protocol's client reads; nil: the kind
	// has no value. A bad parameter is reported through k, at its line.
	// The value may say what the step does, for describe (Describe()
	// string: "room created"), and how long the step pauses on its own
	// (Waits() time.Duration: a series' gaps), for the forecast.
	Parse func(k *StepKeys) any
	// CreatesRoom: the step creates the room its flow's group shares
	// (create_room): a join of room: created needs one earlier, the
	// forecast counts the rooms and a group's members learn when it fails.
	CreatesRoom bool

	read func(d *decoder, in *stepIn, st *Step) // a shared kind's reader, into the step's own fields
}

// sharedSteps are the kinds every protocol takes.
var sharedSteps = []StepSpec{
	{Kind: Think, Params: []string{"fixed", "uniform", "exponential", "normal"}, Shorthand: "fixed",
		read: func(d *decoder, in *stepIn, st *Step) { st.Think = d.think(in.f, in.what) }},
	{Kind: Barrier, Wait: true, Params: []string{"n"}, Shorthand: "n", read: (*decoder).stepBarrier},
	{Kind: Malformed, Params: []string{"kinds", "count", "share", "to", "silence", "interval"}, Shorthand: "count",
		read: func(d *decoder, in *stepIn, st *Step) { st.Malformed = d.malformed(in.f, in.what, in.proto) }},
	{Kind: RateProbe, Request: true, Params: []string{"from", "to", "over", "request", "send", "expect", "loss"},
		read: func(d *decoder, in *stepIn, st *Step) {
			st.Policy.Retries = 0                           // a probe measures loss: re-sending would hide it
			st.Probe = d.rateProbe(in.f, in.what, in.proto) // and its Script (probescript.go)
		}},
}

// names are the kind's name and its aliases.
func (s *StepSpec) names() []string { return append([]string{string(s.Kind)}, s.Aliases...) }

// describer is a step's Params that says what the step does.
type describer interface{ Describe() string }

// waiter is a step's Params that pauses on its own for Waits.
type waiter interface{ Waits() time.Duration }

// stepSpec returns the spec of the kind named name (or an alias) in p:
// a shared kind, or one of p's own. With no protocol (p unknown or
// empty), any registered protocol's kind of that name, the one taking
// the most parameters, so that its parameters are still checked.
func (p ProtocolName) stepSpec(name string) (*StepSpec, bool) {
	for i := range sharedSteps {
		if slices.Contains(sharedSteps[i].names(), name) {
			return &sharedSteps[i], true
		}
	}
	if s, ok := LookupProtocol(p); ok {
		return s.ownStep(name)
	}
	var best *StepSpec
	for _, q := range Protocols() {
		if s, ok := q.spec().ownStep(name); ok && (best == nil || len(s.Params) > len(best.Params)) {
			best = s
		}
	}
	return best, best != nil
}

// ownStep returns the spec of s's own kind named name (or an alias).
func (s ProtocolSpec) ownStep(name string) (*StepSpec, bool) {
	for i := range s.Steps {
		if slices.Contains(s.Steps[i].names(), name) {
			return &s.Steps[i], true
		}
	}
	return nil, false
}

// StepKinds returns the step kinds valid for p, sorted.
func StepKinds(p ProtocolName) []StepKind {
	var out []StepKind
	for _, s := range sharedSteps {
		if s.scripted() && p.spec().Catalog == nil {
			continue
		}
		out = append(out, s.Kind)
	}
	for _, s := range p.spec().Steps {
		out = append(out, s.Kind)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// allSteps are the shared kinds and every registered protocol's.
func allSteps() []*StepSpec {
	var out []*StepSpec
	for i := range sharedSteps {
		out = append(out, &sharedSteps[i])
	}
	for _, p := range Protocols() {
		s := p.spec()
		for i := range s.Steps {
			out = append(out, &s.Steps[i])
		}
	}
	return out
}

// allKinds are the names of every kind and alias, for "did you mean".
func allKinds() []string {
	var out []string
	for _, s := range allSteps() {
		out = append(out, s.names()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func kindNames(ks []StepKind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// checkSteps panics on a protocol's step kinds that clash: a kind
// without a name, a name (or alias) given twice or a shared kind's, a
// rate_probe request that is not one of its kinds.
func (s ProtocolSpec) checkSteps() {
	seen := map[string]bool{}
	for _, sh := range sharedSteps {
		seen[string(sh.Kind)] = true
	}
	for _, st := range s.Steps {
		for _, n := range st.names() {
			if n == "" || seen[n] {
				panic(fmt.Sprintf("scenario: protocol %q: step kind %q unnamed or named twice", s.Name, n))
			}
			seen[n] = true
		}
	}
	for _, k := range s.ProbeRequests {
		if _, ok := s.ownStep(string(k)); !ok {
			panic(fmt.Sprintf("scenario: protocol %q: unknown step kind %q", s.Name, k))
		}
	}
}

// StepKeys gives a step kind's parser (StepSpec.Parse) the step's
// parameters, read through the loader: a bad value is an error naming the
// file and line, as every other key's is.
type StepKeys struct {
	Keys
	in *stepIn
}

// What names the step for messages: "flow \"f\": join".
func (k *StepKeys) What() string { return k.in.what }

// Flow names the step's flow for messages.
func (k *StepKeys) Flow() string { return k.in.flow }

// RoomCreated reports whether an earlier step of the flow creates the
// room its group shares (Step.CreatesRoom).
func (k *StepKeys) RoomCreated() bool { return k.in.created }

// Suggest returns ` (did you mean "x"?)` when one of candidates is close
// to s, for a message about a bad value.
func Suggest(s string, candidates []string) string { return suggest(s, candidates) }

// stepKeys is the StepKeys of the step being read.
func (d *decoder) stepKeys(in *stepIn) *StepKeys {
	return &StepKeys{Keys: Keys{d: d, f: in.f, what: in.what, at: in.kindNode}, in: in}
}

// describeStep is what describe says of a protocol's step: what its value
// says, then its request policy or wait.
func (s Step) describeOwn() string {
	var parts []string
	if d, ok := s.Params.(describer); ok {
		if t := d.Describe(); t != "" {
			parts = append(parts, t)
		}
	}
	switch {
	case s.Spec != nil && s.Spec.Request:
		parts = append(parts, fmt.Sprintf("timeout %s, %d retries", s.Policy.Timeout, s.Policy.Retries))
	case s.Spec != nil && s.Spec.Wait:
		parts = append(parts, fmt.Sprintf("timeout %s", s.Policy.Timeout))
	}
	return strings.Join(parts, ", ")
}

// listShorthand is the key a kind's shorthand given as a list sets
// (think's [min, max], expect's [A, B]), "" when the kind takes none.
func listShorthand(kind StepKind) string {
	switch kind {
	case Think:
		return "uniform"
	case Expect:
		return "message"
	}
	return ""
}
