package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lobbybench/lobbybench/script"
	"go.yaml.in/yaml/v3"
)

// The scripted step kinds, every protocol's with a catalog
// (ProtocolSpec.Catalog): their value (Step.Params) is a *script.Block of
// one step, checked against the catalog with the captures of the flow's
// steps before it.
const (
	Send   StepKind = "send"
	Expect StepKind = "expect"
	If     StepKind = "if"
	Repeat StepKind = "repeat"
)

// scripted reports whether s is a scripted kind, which only a protocol
// with a catalog takes.
func (s *StepSpec) scripted() bool {
	return slices.Contains([]StepKind{Send, Expect, If, Repeat}, s.Kind)
}

// blockKinds are the kinds whose step is one mapping of several keys, the
// kind's first (if: … then: …; repeat: … steps: …).
var blockKinds = []string{string(If), string(Repeat)}

// nestable are the kinds a step inside an if or a repeat may be.
var nestable = []StepKind{Send, Expect, If, Repeat, Think}

func init() {
	sharedSteps = append(sharedSteps,
		StepSpec{Kind: Send, Params: []string{"message", "fields", "to", "raw", "malformed", "allow", "on_fail"}, Shorthand: "message",
			read: func(d *decoder, in *stepIn, st *Step) { d.scripted(in, st, script.Step{Send: d.send(in)}) }},
		StepSpec{Kind: Expect, Params: []string{"message", "where", "capture", "within", "silence", "on_fail"}, Shorthand: "message",
			read: func(d *decoder, in *stepIn, st *Step) { d.scripted(in, st, script.Step{Expect: d.expect(in)}) }},
		StepSpec{Kind: If, Params: []string{"if", "then", "else", "on_fail"},
			read: func(d *decoder, in *stepIn, st *Step) { d.scripted(in, st, script.Step{If: d.ifStep(in)}) }},
		StepSpec{Kind: Repeat, Params: []string{"repeat", "steps", "on_fail"},
			read: func(d *decoder, in *stepIn, st *Step) { d.scripted(in, st, script.Step{Repeat: d.repeat(in)}) }},
	)
}

// scripted finishes a scripted step s of st: its place, label and
// on_fail, and, at a flow's top level, its check against the protocol's
// catalog.
func (d *decoder) scripted(in *stepIn, st *Step, s script.Step) {
	s.Pos = script.Pos{Line: in.kindNode.Line, Col: in.kindNode.Column}
	d.scriptLabel(in, st, &s)
	s.Label = st.Label
	s.Retries = max(in.defaults.Retries, 1)
	if v := in.f.get("on_fail"); v != nil {
		if o, ok := d.oneOf(v, in.what+" on_fail", script.OnFails); ok {
			s.OnFail = script.OnFail(slices.Index(script.OnFails, o))
		}
	}
	b := &script.Block{Steps: []script.Step{s}}
	st.Params = b
	if in.nested {
		return
	}
	spec, known := LookupProtocol(in.proto)
	switch {
	case !known:
		return // the protocol's own error is reported
	case spec.Catalog == nil:
		d.errf(in.kindNode, "%s: %s has no scripted steps (send, expect, if, repeat%s)", in.what, in.proto, catalogOwners())
		return
	case in.scope == nil:
		in.scope = script.NewScope().WithRules(spec.Rules)
	}
	d.scriptErrors(in.what, script.Check(spec.Catalog, b, in.scope))
}

// scriptLabel names a scripted step without a label after what it does,
// so that its metrics read as a built-in step's: a send after its message
// (lobby_create_room, send_raw), an expect after the send it answers, so
// that the pair is one row.
func (d *decoder) scriptLabel(in *stepIn, st *Step, s *script.Step) {
	if st.Label == string(st.Kind) {
		switch {
		case s.Send != nil && s.Send.Message.S != "":
			st.Label = labelOf(s.Send.Message.S)
		case s.Send != nil:
			st.Label = "send_raw"
		case s.Expect != nil && !in.nested && in.lastSend != "":
			st.Label = in.lastSend
		}
	}
	if s.Send != nil && !in.nested {
		in.lastSend = st.Label
	}
}

// labelOf is a message's name as a metric word: lowercased, anything
// but a letter or a digit an underscore ("Request Connect" →
// "request_connect").
func labelOf(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// catalogOwners names the protocols with scripted steps, for messages.
func catalogOwners() string {
	out := protocolsWith(func(s ProtocolSpec) bool { return s.Catalog != nil })
	if len(out) == 0 {
		return ""
	}
	return "; protocols with them: " + orList(out)
}

// protocolsWith names the registered protocols whose spec has, for
// messages.
func protocolsWith(has func(ProtocolSpec) bool) []string {
	var out []string
	for _, p := range Protocols() {
		if has(p.spec()) {
			out = append(out, string(p))
		}
	}
	return out
}

// scriptErrors reports a script's problems at their places.
func (d *decoder) scriptErrors(what string, err error) {
	es, ok := err.(script.Errors)
	if !ok {
		return
	}
	for _, e := range es {
		msg := fmt.Sprintf("%s: %s", what, e.Msg)
		if e.Names != nil {
			msg += suggestName(e.Name, e.Names)
		}
		d.errs = append(d.errs, Error{File: d.file, Line: e.Line, Column: e.Col, Exact: e.Exact, Msg: msg})
	}
}

// suggestName is suggest for names of any case (LOBBY_CREATE_ROOM,
// roomId): it compares them lowercased and names the one meant as
// written.
func suggestName(s string, names []string) string {
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(n)
	}
	if best, ok := Closest(s, lower); ok {
		return fmt.Sprintf(" (did you mean %q?)", names[slices.Index(lower, best)])
	}
	return ""
}

// src is a scalar's text and where it starts (inside its quotes).
func src(n *yaml.Node) script.Src {
	col := n.Column
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		col++
	}
	return script.Src{Pos: script.Pos{Line: n.Line, Col: col}, S: n.Value}
}

// param is key's value, a single value; false (reported) otherwise.
func (d *decoder) param(in *stepIn, key string) (script.Src, bool) {
	v := resolve(in.f.get(key))
	if v == nil {
		return script.Src{}, false
	}
	if _, ok := d.str(v, in.what+" "+key); !ok {
		return script.Src{}, false
	}
	return src(v), true
}

func (d *decoder) send(in *stepIn) *script.Send {
	s := &script.Send{}
	s.Message, _ = d.param(in, "message")
	s.To, _ = d.param(in, "to")
	s.Raw, _ = d.param(in, "raw")
	switch {
	case s.Message.S != "" && s.Raw.S != "":
		d.errf(in.f.get("raw"), "%s: give message or raw, not both", in.what)
	case s.Message.S == "" && s.Raw.S == "":
		d.errf(in.kindNode, "%s: give message (a name) or raw (hex bytes)", in.what)
	case s.Raw.S != "" && in.f.get("fields") != nil:
		d.errf(in.f.get("fields"), "%s: raw bytes take no fields", in.what)
	}
	for _, kv := range d.pairs(in.f.get("fields"), in.what+" fields") {
		s.Fields = append(s.Fields, script.SetField{Name: kv[0], Value: kv[1]})
	}
	s.Malformed = d.names(in.f.get("malformed"), in.what+" malformed")
	s.Allow = d.names(in.f.get("allow"), in.what+" allow")
	return s
}

// names are the names of n, one or a list of them (nil: none).
func (d *decoder) names(n *yaml.Node, what string) []script.Src {
	n = resolve(n)
	if n == nil {
		return nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			d.errf(n, "%s: the list is empty", what)
		}
	}
	var out []script.Src
	for _, it := range items {
		it = resolve(it)
		if _, ok := d.str(it, what); ok {
			out = append(out, src(it))
		}
	}
	return out
}

// pairs are the keys and values of mapping n (nil: none), each a single
// value.
func (d *decoder) pairs(n *yaml.Node, what string) [][2]script.Src {
	if n == nil {
		return nil
	}
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errf(n, "%s must be a mapping (name: value), got %s", what, describe(n))
		return nil
	}
	var out [][2]script.Src
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if _, ok := d.str(v, what+" "+k.Value); ok && k.Kind == yaml.ScalarNode {
			out = append(out, [2]script.Src{src(k), src(v)})
		}
	}
	return out
}

func (d *decoder) expect(in *stepIn) *script.Expect {
	e := &script.Expect{Within: in.defaults.Timeout}
	if v := in.f.get("silence"); v != nil {
		e.Silence, _ = d.duration(v, in.what+" silence")
		if e.Silence <= 0 {
			d.errf(v, "%s: silence must be above 0", in.what)
		}
		for _, k := range []string{"message", "where", "capture", "within"} {
			if in.f.get(k) != nil {
				d.errf(in.f.keys[k], "%s: silence expects no message: %s does not apply", in.what, k)
			}
		}
		return e
	}
	d.expectMessages(in, e)
	if v := in.f.get("within"); v != nil {
		if w, ok := d.duration(v, in.what+" within"); ok && w > 0 {
			e.Within = w
		} else if ok {
			d.errf(v, "%s: within must be above 0", in.what)
		}
	}
	e.Where.Src, _ = d.param(in, "where")
	for _, kv := range d.pairs(in.f.get("capture"), in.what+" capture") {
		e.Capture = append(e.Capture, script.Capture{Var: kv[0], Field: kv[1]})
	}
	return e
}

// expectMessages reads an expect's message: a name, a list of names, or
// any.
func (d *decoder) expectMessages(in *stepIn, e *script.Expect) {
	v := resolve(in.f.get("message"))
	if v == nil {
		d.errf(in.kindNode, "%s: give message (a name, a list of names, or any) or silence", in.what)
		return
	}
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	for _, it := range items {
		it = resolve(it)
		if s, ok := d.str(it, in.what+" message"); ok && s == "any" {
			e.Any = true
		} else if ok {
			e.Messages = append(e.Messages, src(it))
		}
	}
	if e.Any && len(items) > 1 {
		d.errf(v, "%s: any is alone: it takes every message", in.what)
	}
}

func (d *decoder) ifStep(in *stepIn) *script.If {
	s := &script.If{}
	var ok bool
	if s.Cond.Src, ok = d.param(in, "if"); !ok || s.Cond.S == "" {
		d.errf(in.kindNode, "%s: if needs a condition (an expression)", in.what)
	}
	if in.f.get("then") == nil {
		d.errf(in.kindNode, "%s: if needs then (steps)", in.what)
	}
	s.Then = d.nested(in, "then")
	s.Else = d.nested(in, "else")
	return s
}

var repeatKeys = []string{"count", "while", "max"}

func (d *decoder) repeat(in *stepIn) *script.Repeat {
	r := &script.Repeat{}
	f, ok := d.mapping(in.f.get("repeat"), in.what, repeatKeys)
	if ok {
		d.repeatBound(in, f, r)
	}
	if in.f.get("steps") == nil {
		d.errf(in.kindNode, "%s: repeat needs steps", in.what)
	}
	r.Body = d.nested(in, "steps")
	return r
}

// repeatBound reads a repeat's count, or its while and max.
func (d *decoder) repeatBound(in *stepIn, f fields, r *script.Repeat) {
	c, w := f.get("count"), f.get("while")
	switch {
	case (c == nil) == (w == nil):
		d.errf(f.node, "%s: give count or while (not both)", in.what)
	case c != nil:
		if n, ok := d.integer(c, in.what+" count", 1, 1_000_000); ok {
			r.Count = int(n)
		}
	default:
		r.While.Src = src(resolve(w))
		r.Max = script.DefaultRepeatMax
	}
	if m := f.get("max"); m != nil {
		if w == nil {
			d.errf(m, "%s: max bounds a while; a count is its own bound", in.what)
		}
		if n, ok := d.integer(m, in.what+" max", 1, 1_000_000); ok {
			r.Max = int(n)
		}
	}
}

// nested reads the steps under key of an if or a repeat.
func (d *decoder) nested(in *stepIn, key string) script.Block {
	v := in.f.get(key)
	if v == nil {
		return script.Block{}
	}
	n := resolve(v)
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.errf(v, "%s: %s must be a list of steps, got %s", in.what, key, describe(n))
		return script.Block{}
	}
	sub := stepIn{flow: in.what, proto: in.proto, groupSize: in.groupSize, defaults: in.defaults, created: in.created, nested: true}
	var b script.Block
	for _, sn := range n.Content {
		st, ok := d.step(sn, &sub)
		if !ok {
			continue
		}
		if !appendScript(&b, st) {
			d.errf(sn, "%s: %s cannot be inside %s (only %s)", in.what, st.Kind, key, kindNames(nestable))
		}
	}
	return b
}

// appendScript appends st to b when a script plays it: a scripted step's
// own, or a think as a script.Call whose value is st. False for any other.
func appendScript(b *script.Block, st Step) bool {
	switch blk, isScript := st.Params.(*script.Block); {
	case isScript:
		b.Steps = append(b.Steps, blk.Steps...)
	case st.Kind == Think:
		b.Steps = append(b.Steps, script.Step{Pos: script.Pos{Line: st.Line}, Label: st.Label, Call: &script.Call{Value: st}})
	default:
		return false
	}
	return true
}
