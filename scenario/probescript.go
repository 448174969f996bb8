package scenario

import (
	"slices"

	"github.com/lobbybench/lobbybench/script"
	"go.yaml.in/yaml/v3"
)

// probeKeys are the keys a rate_probe's send and expect take, as a send
// and an expect step take them; the others would mean nothing for a
// request the probe sends many at a time and matches to its reply.
var probeKeys = map[string][]string{
	"send":   {"message", "fields", "to"},
	"expect": {"message", "where"},
}

// A rate_probe's reader reads its script too; set here, since reading a
// script's send and expect reads steps, whose kinds sharedSteps holds (an
// initialization cycle in its literal).
func init() {
	i := slices.IndexFunc(sharedSteps, func(s StepSpec) bool { return s.Kind == RateProbe })
	read := sharedSteps[i].read
	sharedSteps[i].read = func(d *decoder, in *stepIn, st *Step) {
		read(d, in, st)
		st.Probe.Script = d.probeScript(in)
	}
}

// probeScript reads a rate_probe's request written as a script (send:,
// expect:), checked against the protocol's catalog with the flow's
// captures so far; nil when it has none.
func (d *decoder) probeScript(in *stepIn) *script.Pipelined {
	sn, en := in.f.get("send"), in.f.get("expect")
	switch {
	case sn == nil && en == nil:
		return nil
	case in.f.get("request") != nil:
		d.errf(in.f.keys["request"], "%s: give request (a built-in step) or send and expect (a message), not both", in.what)
		return nil
	case sn == nil || en == nil:
		d.errf(in.kindNode, "%s: a scripted request needs both send (the message) and expect (the reply that answers it)", in.what)
		return nil
	}
	spec, known := LookupProtocol(in.proto)
	if known && (!spec.ProbeScripts || spec.Catalog == nil) {
		d.errf(in.f.keys["send"], "%s: a scripted request (send, expect) is not built for %s yet%s; give request", in.what, in.proto, probeScriptOwners())
		return nil
	}
	send, ok1 := d.probeStep(in, "send")
	expect, ok2 := d.probeStep(in, "expect")
	if !ok1 || !ok2 || !known {
		return nil
	}
	p := &script.Pipelined{Send: send.Send, Expect: expect.Expect}
	if in.scope == nil {
		in.scope = script.NewScope().WithRules(spec.Rules)
	}
	err := script.Check(spec.Catalog, p.Block(), in.scope)
	if err == nil && spec.ProbeCheck != nil {
		err = spec.ProbeCheck(p)
	}
	d.scriptErrors(in.what, err)
	return p
}

// probeStep reads a rate_probe's send or expect (key) as that step,
// allowing only probeKeys.
func (d *decoder) probeStep(in *stepIn, key string) (script.Step, bool) {
	kn := in.f.keys[key]
	sn := &yaml.Node{Kind: yaml.MappingNode, Line: kn.Line, Column: kn.Column, Content: []*yaml.Node{kn, in.f.get(key)}}
	sub := stepIn{flow: in.what, proto: in.proto, groupSize: in.groupSize, defaults: in.defaults, created: in.created, nested: true}
	st, ok := d.step(sn, &sub)
	if !ok {
		return script.Step{}, false
	}
	for k, kn := range sub.f.keys {
		if !slices.Contains(probeKeys[key], k) {
			d.errf(kn, "%s: %s does not apply to a probe's request (its %s takes %s): the probe keeps many in flight, each answered within the step's timeout",
				sub.what, k, key, andList(probeKeys[key]))
			ok = false
		}
	}
	blk, isScript := st.Params.(*script.Block)
	if !ok || !isScript || len(blk.Steps) != 1 {
		return script.Step{}, false
	}
	return blk.Steps[0], true
}

// probeScriptOwners names the protocols whose rate_probe takes a
// scripted request, for messages.
func probeScriptOwners() string {
	out := protocolsWith(func(s ProtocolSpec) bool { return s.ProbeScripts && s.Catalog != nil })
	if len(out) == 0 {
		return ""
	}
	return " (it is for " + orList(out) + ")"
}
