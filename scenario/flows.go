package scenario

import (
	"github.com/lobbybench/lobbybench/script"

	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Impair is the impairment of one direction of a client's UDP traffic.
// Probabilities are fractions in [0,1]; every datagram is delayed by
// Delay ± a uniform Jitter.
type Impair struct {
	Drop, Duplicate, Reorder float64
	Delay, Jitter            time.Duration
}

// IsZero reports whether the direction is untouched.
func (i Impair) IsZero() bool { return i == Impair{} }

// Impairment is client-side network impairment, applied separately to
// outgoing (Out) and incoming (In) datagrams, drawn from a generator seeded
// with Seed (the scenario seed unless impairment.seed is set).
type Impairment struct {
	In, Out Impair
	Seed    int64
}

// IsZero reports whether no impairment applies.
func (i Impairment) IsZero() bool { return i.In.IsZero() && i.Out.IsZero() }

// MalformedKinds lists the malformed kinds valid for p.
func MalformedKinds(p ProtocolName) []MalformedKind { return p.spec().Malformed }

// defaultListStep is the request a malformed mix or a rate probe sends.
func defaultListStep(p ProtocolName) StepKind {
	if r := p.spec().ProbeRequests; len(r) > 0 {
		return r[0]
	}
	return ""
}

var flowKeys = []string{"name", "weight", "group_size", "new_socket", "steps"}

func (d *decoder) flows(n *yaml.Node, proto ProtocolName, defaults RequestPolicy) []Flow {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.errf(n, "flows must be a list of flows, got %s", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errf(n, "flows is empty: give at least one flow")
	}
	var out []Flow
	names := map[string]int{}
	for i, fn := range n.Content {
		what := fmt.Sprintf("flows[%d]", i)
		f, ok := d.mapping(fn, what, flowKeys)
		if !ok {
			continue
		}
		fl := Flow{Weight: 1, GroupSize: 1, Line: resolve(fn).Line}
		if v := f.get("name"); v != nil {
			if s, ok := d.str(v, what+".name"); ok {
				if prev, dup := names[s]; dup {
					d.errf(v, "flow name %q is used twice (first at line %d)", s, prev)
				}
				names[s] = v.Line
				fl.Name = s
				what = fmt.Sprintf("flow %q", s)
			}
		} else {
			fl.Name = fmt.Sprintf("flow%d", i+1)
		}
		if v := f.get("weight"); v != nil {
			if w, ok := d.number(v, what+" weight"); ok {
				if w <= 0 {
					d.errf(v, "%s: weight must be above 0, got %v", what, w)
				}
				fl.Weight = w
			}
		}
		if v := f.get("group_size"); v != nil {
			if g, ok := d.integer(v, what+" group_size", 1, 1000); ok {
				fl.GroupSize = int(g)
			}
		}
		if v := f.get("new_socket"); v != nil {
			if b, ok := d.oneOf(v, what+" new_socket", []string{"true", "false"}); ok {
				fl.NewSocket = b == "true"
			}
		}
		if v := f.get("steps"); v != nil {
			fl.Steps = d.steps(v, what, proto, defaults, fl.GroupSize)
		} else {
			d.errf(fn, "%s: missing \"steps\"", what)
		}
		out = append(out, fl)
	}
	return out
}

func (d *decoder) steps(n *yaml.Node, flow string, proto ProtocolName, defaults RequestPolicy, groupSize int) []Step {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.errf(n, "%s: steps must be a list, got %s", flow, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errf(n, "%s: steps is empty", flow)
	}
	var out []Step
	in := stepIn{flow: flow, proto: proto, groupSize: groupSize, defaults: defaults}
	for _, sn := range n.Content {
		st, ok := d.step(sn, &in)
		if !ok {
			continue
		}
		in.created = in.created || st.CreatesRoom()
		out = append(out, st)
	}
	return out
}

// step reads one step of a flow: its kind, the parameters every step
// takes (label, only), its request policy, and its kind's own parameters
// (its spec's reader or parser).
func (d *decoder) step(sn *yaml.Node, in *stepIn) (Step, bool) {
	kindNode, params, ok := d.stepNodes(sn, in.flow)
	if !ok {
		return Step{}, false
	}
	spec, ok := d.stepKind(kindNode, in.flow, in.proto)
	if !ok {
		return Step{}, false
	}
	written := kindNode.Value // the name as written: an alias stays in messages and the label
	st := Step{Kind: spec.Kind, Label: written, Only: All, Line: kindNode.Line, Spec: spec, Policy: spec.policy(in.defaults)}
	in.what, in.kindNode = fmt.Sprintf("%s: %s", in.flow, written), kindNode
	if in.f, ok = d.stepFields(params, in.flow, spec, in); !ok {
		return st, false
	}
	d.stepLabel(in, &st)
	d.stepOnly(in, &st)
	d.stepPolicy(in, spec, &st)
	switch {
	case spec.read != nil:
		spec.read(d, in, &st)
	case spec.Parse != nil:
		st.Params = spec.Parse(d.stepKeys(in))
	}
	return st, true
}

// stepIn is what reading a step's parameters needs beside the step.
type stepIn struct {
	flow      string // the flow, for messages
	proto     ProtocolName
	groupSize int           // the flow's
	defaults  RequestPolicy // the flow's request policy
	created   bool          // an earlier step of the flow creates the group's room
	scope     *script.Scope // the variables the flow's scripted steps set so far
	lastSend  string        // the label of the flow's last top-level send, an expect's default
	nested    bool          // inside an if or a repeat: checked with it

	f        fields     // the parameters
	what     string     // "flow: kind", for messages
	kindNode *yaml.Node // the step's kind as written
}

// stepNodes splits step sn into its kind and its parameters (nil when
// it is a bare kind).
func (d *decoder) stepNodes(sn *yaml.Node, flow string) (kindNode, params *yaml.Node, ok bool) {
	sn = resolve(sn)
	switch {
	case sn == nil:
		d.errf(sn, "%s: empty step", flow)
		return nil, nil, false
	case sn.Kind == yaml.ScalarNode:
		return sn, nil, true
	case sn.Kind == yaml.MappingNode && len(sn.Content) >= 2 && slices.Contains(blockKinds, resolve(sn.Content[0]).Value):
		return resolve(sn.Content[0]), sn, true // if: … then: …, the kind's own key among its parameters
	case sn.Kind == yaml.MappingNode && len(sn.Content) == 2:
		return resolve(sn.Content[0]), sn.Content[1], true
	case sn.Kind == yaml.MappingNode:
		d.errf(sn, "%s: a step is one key (its kind) with its parameters under it; found %d keys", flow, len(sn.Content)/2)
	default:
		d.errf(sn, "%s: a step must be a kind (e.g. list_rooms) or {kind: parameters}, got %s", flow, describe(sn))
	}
	return nil, nil, false
}

// stepKind is the spec of the kind kindNode names (or an alias of it); it
// must be one of proto's.
func (d *decoder) stepKind(kindNode *yaml.Node, flow string, proto ProtocolName) (*StepSpec, bool) {
	written := kindNode.Value
	var spec *StepSpec
	known := false
	if kindNode.Kind == yaml.ScalarNode {
		spec, known = ProtocolName("").stepSpec(written)
	}
	if !known {
		d.errf(kindNode, "%s: unknown step %q%s", flow, kindNode.Value, suggest(kindNode.Value, allKinds()))
		d.reject(kindNode.Value)
		return nil, false
	}
	if _, ok := LookupProtocol(proto); ok {
		if spec, known = proto.stepSpec(written); !known {
			d.errf(kindNode, "%s: step %q is not a %s step (%s steps: %s)", flow, written, proto, proto, kindNames(StepKinds(proto)))
			d.reject(kindNode.Value)
			return nil, false
		}
	}
	return spec, true
}

// policy is the request policy a step of this kind starts from: the
// flow's defaults for a request, DefaultWaitTimeout for a wait, none
// otherwise.
func (spec *StepSpec) policy(defaults RequestPolicy) RequestPolicy {
	switch {
	case spec.Wait:
		return RequestPolicy{Timeout: DefaultWaitTimeout}
	case spec.Request:
		return defaults
	}
	return RequestPolicy{}
}

// keys are the parameters a step of this kind takes.
func (spec *StepSpec) keys() []string {
	keys := append([]string{"label", "only"}, spec.Params...)
	if spec.Request {
		keys = append(keys, policyKeys...)
	} else if spec.Wait {
		keys = append(keys, "timeout")
	}
	return keys
}

// stepFields reads a step's parameters: none, a single value (the
// kind's shorthand; think's [min, max] too), or a mapping.
func (d *decoder) stepFields(params *yaml.Node, flow string, spec *StepSpec, in *stepIn) (fields, bool) {
	keys := spec.keys()
	pn := resolve(params)
	switch {
	case pn == nil || (pn.Kind == yaml.ScalarNode && pn.Tag == "!!null"):
		return fields{vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}, node: in.kindNode}, true
	case pn.Kind == yaml.ScalarNode || pn.Kind == yaml.SequenceNode && listShorthand(spec.Kind) != "":
		if spec.Shorthand == "" {
			d.errf(pn, "%s takes no single value; give parameters as a mapping (%s)", in.what, strings.Join(keys, ", "))
			return fields{}, false
		}
		key := spec.Shorthand
		if pn.Kind == yaml.SequenceNode {
			key = listShorthand(spec.Kind) // think: [100ms, 500ms]; expect: [A, B]
		}
		return fields{vals: map[string]*yaml.Node{key: pn}, keys: map[string]*yaml.Node{key: pn}, node: pn}, true
	}
	return d.mapping(pn, fmt.Sprintf("the %s step of %s", in.kindNode.Value, flow), keys)
}

// stepLabel reads a step's label, which names its metrics.
func (d *decoder) stepLabel(in *stepIn, st *Step) {
	v := in.f.get("label")
	if v == nil {
		return
	}
	if s, ok := d.str(v, in.what+" label"); ok {
		if !metricWordRE.MatchString(s) {
			d.errf(v, "%s: label %q must be letters, digits and _ (it names metrics)", in.what, s)
		} else {
			st.Label = s
		}
	}
}

// stepOnly reads which members of a group run the step.
func (d *decoder) stepOnly(in *stepIn, st *Step) {
	v := in.f.get("only")
	if v == nil {
		return
	}
	if s, ok := d.oneOf(v, in.what+" only", []string{string(All), string(Leader), string(Members)}); ok {
		st.Only = Membership(s)
		if st.Only != All && in.groupSize < 2 {
			d.errf(v, "%s: only: %s needs group_size of 2 or more on the flow", in.what, s)
		}
	}
}

// stepPolicy reads a request's policy, or a wait's timeout.
func (d *decoder) stepPolicy(in *stepIn, spec *StepSpec, st *Step) {
	if spec.Request {
		st.Policy = d.policyFields(in.f, in.what, st.Policy)
		return
	}
	if v := in.f.get("timeout"); v != nil && spec.Wait {
		if t, ok := d.duration(v, in.what+" timeout"); ok {
			if t == 0 {
				d.errf(v, "%s: timeout must be above 0", in.what)
			}
			st.Policy.Timeout = t
		}
	}
}

// stepBarrier reads the count a barrier waits for (the flow's group_size
// unless n is given), which needs a group.
func (d *decoder) stepBarrier(in *stepIn, st *Step) {
	st.BarrierN = in.groupSize
	if v := in.f.get("n"); v != nil {
		if nv, ok := d.integer(v, in.what+" n", 1, 1000); ok {
			st.BarrierN = int(nv)
			if int(nv) > in.groupSize && in.groupSize >= 2 {
				d.errf(v, "%s: n is %d but the flow's group_size is %d: the barrier could never open", in.what, nv, in.groupSize)
			}
		}
	}
	if in.groupSize < 2 {
		d.errf(in.kindNode, "%s needs group_size of 2 or more on the flow", in.what)
	}
}

func (d *decoder) think(f fields, what string) ThinkTime {
	var t ThinkTime
	var set []string
	for _, k := range []string{"fixed", "uniform", "exponential", "normal"} {
		if f.keys[k] != nil {
			set = append(set, k)
		}
	}
	if len(set) != 1 {
		d.errf(f.node, "%s: give exactly one of fixed, uniform, exponential, normal (got %d)", what, len(set))
		return t
	}
	v := f.get(set[0])
	t.Dist = Distribution(set[0])
	switch t.Dist {
	case Fixed:
		t.A, _ = d.duration(v, what+" fixed")
	case Exponential:
		t.A, _ = d.duration(v, what+" exponential mean")
	case Uniform:
		vn := resolve(v)
		if vn == nil || vn.Kind != yaml.SequenceNode || len(vn.Content) != 2 {
			d.errf(v, "%s: uniform must be [min, max], e.g. [100ms, 500ms]", what)
			return t
		}
		a, ok1 := d.duration(vn.Content[0], what+" uniform min")
		b, ok2 := d.duration(vn.Content[1], what+" uniform max")
		if ok1 && ok2 && a > b {
			d.errf(v, "%s: uniform min %s is above max %s", what, a, b)
		}
		t.A, t.B = a, b
	case Normal:
		g, ok := d.mapping(v, what+" normal", []string{"mean", "stddev"})
		if !ok {
			return t
		}
		if m := g.get("mean"); m != nil {
			t.A, _ = d.duration(m, what+" normal mean")
		} else {
			d.errf(v, "%s: normal needs mean", what)
		}
		if s := g.get("stddev"); s != nil {
			t.B, _ = d.duration(s, what+" normal stddev")
		} else {
			d.errf(v, "%s: normal needs stddev", what)
		}
	}
	return t
}

func (d *decoder) malformed(f fields, what string, proto ProtocolName) MalformedSpec {
	m := MalformedSpec{Count: 1, Share: 1, To: "lobby", Silence: time.Second}
	if v := f.get("count"); v != nil {
		if c, ok := d.integer(v, what+" count", 1, 1_000_000); ok {
			m.Count = int(c)
			if spec, _ := LookupProtocol(proto); spec.MaxMalformed > 0 && m.Count > spec.MaxMalformed {
				d.errf(v, "%s count: %d packets: %s tells at most %d of one step apart (its replies are matched by a sequence id that wraps); split them over several steps", what, m.Count, proto, spec.MaxMalformed)
			}
		}
	}
	if v := f.get("interval"); v != nil {
		if iv, ok := d.duration(v, what+" interval"); ok {
			m.Interval = iv
		}
	}
	allowed := MalformedKinds(proto)
	names := make([]string, len(allowed))
	for i, k := range allowed {
		names[i] = string(k)
	}
	if v := f.get("kinds"); v != nil {
		vn := resolve(v)
		items := []*yaml.Node{vn}
		if vn != nil && vn.Kind == yaml.SequenceNode {
			items = vn.Content
			if len(items) == 0 {
				d.errf(v, "%s: kinds is empty", what)
			}
		}
		for _, it := range items {
			if s, ok := d.oneOf(it, what+" kinds", names); ok {
				if !slices.Contains(m.Kinds, MalformedKind(s)) {
					m.Kinds = append(m.Kinds, MalformedKind(s))
				}
			}
		}
	} else {
		m.Kinds = allowed
	}
	if v := f.get("share"); v != nil {
		if s, ok := d.percent(v, what+" share"); ok {
			if s == 0 {
				d.errf(v, "%s: share must be above 0%%", what)
			}
			m.Share = s
		}
	}
	if v := f.get("to"); v != nil {
		if s, ok := d.oneOf(v, what+" to", malformedTargets()); ok {
			if s != "lobby" && proto != "" && !slices.Contains(proto.spec().MalformedTo, s) {
				d.errf(v, "%s: to: %s applies to %s only", what, s, orList(malformedToOwners(s)))
			}
			m.To = s
		}
	}
	if v := f.get("silence"); v != nil {
		if s, ok := d.duration(v, what+" silence"); ok {
			m.Silence = s
		}
	}
	return m
}

// probeTotal refuses a probe whose ramp sends more than MaxProbeRequests,
// saying how long an over its rates may have.
func (d *decoder) probeTotal(f fields, what string, r RateProbeSpec) {
	if r.total() <= MaxProbeRequests || r.To <= r.From || r.To > MaxProbeRate {
		return // within the bound, or an error said already
	}
	fit := time.Duration(MaxProbeRequests / ((r.From + r.To) / 2) * float64(time.Second))
	d.errf(f.get("over"), "%s: sends %.0f requests ((from + to)/2 × over), more than the %d a probe may send: "+
		"shorten over to %s or less at these rates, or lower from and to", what, math.Floor(r.total()), MaxProbeRequests, fit.Truncate(time.Millisecond))
}

func (d *decoder) rateProbe(f fields, what string, proto ProtocolName) RateProbeSpec {
	r := RateProbeSpec{Request: defaultListStep(proto), Loss: 0.01}
	need := func(k string) *yaml.Node {
		v := f.get(k)
		if v == nil {
			d.errf(f.node, "%s: missing %q", what, k)
		}
		return v
	}
	if v := need("from"); v != nil {
		r.From, _ = d.rate(v, what+" from")
	}
	if v := need("to"); v != nil {
		if t, ok := d.rate(v, what+" to"); ok {
			r.To = t
			if t <= r.From {
				d.errf(v, "%s: to (%s) must be above from (%s)", what, FormatRate(t), FormatRate(r.From))
			}
			if t > MaxProbeRate {
				d.errf(v, "%s: to is over %d/s", what, MaxProbeRate)
			}
		}
	}
	if v := need("over"); v != nil {
		if o, ok := d.duration(v, what+" over"); ok {
			if o == 0 {
				d.errf(v, "%s: over must be above 0", what)
			}
			r.Over = o
		}
	}
	d.probeTotal(f, what, r)
	if v := f.get("request"); v != nil {
		var reqs []string
		for _, k := range proto.spec().ProbeRequests {
			reqs = append(reqs, string(k))
		}
		if n := resolve(v); n != nil && n.Kind == yaml.ScalarNode {
			if k, ok := proto.spec().ownStep(n.Value); ok && n.Value != string(k.Kind) { // an older name of the step
				c := *n
				c.Value = string(k.Kind)
				v = &c
			}
		}
		if s, ok := d.oneOf(v, what+" request", reqs); ok {
			r.Request = StepKind(s)
		}
	}
	if v := f.get("loss"); v != nil {
		if l, ok := d.percent(v, what+" loss"); ok {
			if l == 0 {
				d.errf(v, "%s: loss must be above 0%%", what)
			}
			r.Loss = l
		}
	}
	return r
}
