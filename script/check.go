package script

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
)

// Builtins are the variables every script has, set by the client playing
// it: its session's number, its client's, its group's and its shard's.
var Builtins = []string{"session", "client", "group", "shard"}

// MessageVar is what a capture names to capture the message's name, and
// the name's variable in a where.
const MessageVar = "message"

// RandomFunc is the function an expression calls for a number drawn from
// the client's random source, in [0, 1): random() < 0.5 holds for half
// the clients' draws.
const RandomFunc = "random"

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Scope is the variables known at a point of a flow, with their types:
// the builtins and the captures of the steps checked before it; and the
// rule ids the protocol reports, which a raw send's allow names (nil: not
// known, not checked).
type Scope struct {
	vars  map[string]Field
	rules []string
}

// WithRules is s knowing the protocol's rule ids (Send.Allow's).
func (s *Scope) WithRules(rules []string) *Scope {
	s.rules = rules
	return s
}

// NewScope is a flow's scope before its first step.
func NewScope() *Scope {
	s := &Scope{vars: map[string]Field{}}
	for _, b := range Builtins {
		s.vars[b] = Field{Name: b, Kind: Int, Bits: 64}
	}
	return s
}

func (s *Scope) clone() *Scope { return &Scope{vars: maps.Clone(s.vars), rules: s.rules} }

// Has reports whether variable name is set at this point.
func (s *Scope) Has(name string) bool { _, ok := s.vars[name]; return ok }

// checker checks blocks against one catalog.
type checker struct {
	cat      Catalog
	msgs     map[string]*Message
	names    []string // every message's name
	channels []string // the catalog's channels ("" none)
	errs     Errors
}

// Check checks b against cat, in scope sc, which it extends with b's
// captures; it compiles b's expressions. The problems are Errors, each at
// its place; an Error whose Names is set names an unknown Name (for "did
// you mean").
func Check(cat Catalog, b *Block, sc *Scope) error {
	c := &checker{cat: cat, msgs: map[string]*Message{}}
	ms := cat.Messages()
	for i := range ms {
		c.msgs[ms[i].Name] = &ms[i]
		c.names = append(c.names, ms[i].Name)
		if ms[i].Channel != "" && !slices.Contains(c.channels, ms[i].Channel) {
			c.channels = append(c.channels, ms[i].Channel)
		}
	}
	c.block(b, sc)
	if len(c.errs) > 0 {
		return c.errs
	}
	return nil
}

func (c *checker) errf(p Pos, format string, a ...any) {
	c.errs = append(c.errs, Error{Pos: p, Msg: fmt.Sprintf(format, a...)})
}

// unknown reports name, not among names, for "did you mean".
func (c *checker) unknown(t Src, names []string, format string, a ...any) {
	c.errs = append(c.errs, Error{Pos: t.Pos, Msg: fmt.Sprintf(format, a...), Name: t.S, Names: names})
}

func (c *checker) block(b *Block, sc *Scope) {
	for i := range b.Steps {
		c.step(&b.Steps[i], sc)
	}
}

func (c *checker) step(st *Step, sc *Scope) {
	switch {
	case st.Send != nil:
		c.send(st.Send, sc)
	case st.Expect != nil:
		c.expect(st.Expect, sc)
	case st.If != nil:
		c.ifStep(st.If, sc)
	case st.Repeat != nil:
		c.repeat(st.Repeat, sc)
	}
}

// ifStep checks both branches; a capture is known after the if when both
// set it.
func (c *checker) ifStep(s *If, sc *Scope) {
	c.compile(&s.Cond, c.env(nil, sc))
	th, el := sc.clone(), sc.clone()
	c.block(&s.Then, th)
	c.block(&s.Else, el)
	for n, f := range th.vars {
		if g, ok := el.vars[n]; ok && g.Kind == f.Kind {
			sc.vars[n] = f
		}
	}
}

// repeat checks the body; its captures are known after it when it runs
// at least once (a count).
func (c *checker) repeat(r *Repeat, sc *Scope) {
	if r.While.Set() {
		c.compile(&r.While, c.env(nil, sc))
	}
	body := sc.clone()
	c.block(&r.Body, body)
	if r.Count > 0 {
		maps.Copy(sc.vars, body.vars)
	}
}

// channel checks a send's to: against the catalog's channels.
func (c *checker) channel(s *Send) {
	if s.To.S == "" {
		return
	}
	if len(c.channels) == 0 {
		c.errf(s.To.Pos, "to: the protocol has one channel; leave to out")
		return
	}
	if !slices.Contains(c.channels, s.To.S) {
		c.unknown(s.To, c.channels, "to: unknown channel %q (channels: %v)", s.To.S, c.channels)
		return
	}
	s.channel = s.To.S
}

func (c *checker) send(s *Send, sc *Scope) {
	c.channel(s)
	if s.Raw.S != "" || s.Message.S == "" {
		if len(s.Malformed) > 0 {
			c.errf(s.Malformed[0].Pos, "malformed breaks a message: give message, not raw")
		}
		c.raw(s)
		c.allow(s, sc.rules)
		return
	}
	if len(s.Allow) > 0 {
		c.errf(s.Allow[0].Pos, "allow: only raw bytes' replies may break rules on purpose; a message's replies are judged in full")
	}
	c.malformed(s)
	m, ok := c.msgs[s.Message.S]
	if !ok {
		c.unknown(s.Message, c.names, "unknown message %q", s.Message.S)
		return
	}
	if !m.FromClient {
		c.errf(s.Message.Pos, "%s is a server's message: send it as raw bytes to send it on purpose", m.Name)
	}
	s.msg = m
	if s.channel == "" {
		s.channel = m.Channel
	}
	seen := map[string]bool{}
	for i := range s.Fields {
		f := &s.Fields[i]
		if seen[f.Name.S] {
			c.errf(f.Name.Pos, "field %s is given twice", f.Name.S)
		}
		seen[f.Name.S] = true
		c.setField(m, f, sc)
	}
}

// malformed checks a send's malformed kinds against the catalog's.
func (c *checker) malformed(s *Send) {
	if len(s.Malformed) == 0 {
		return
	}
	br, ok := c.cat.(Breaker)
	if !ok {
		c.errf(s.Malformed[0].Pos, "malformed: this protocol's scripts do not break messages; send raw bytes")
		return
	}
	kinds := br.MalformedKinds()
	for _, k := range s.Malformed {
		if !slices.Contains(kinds, k.S) {
			c.unknown(k, kinds, "malformed: unknown kind %q (kinds: %v)", k.S, kinds)
		}
	}
}

// allow checks a raw send's allowed rules against the protocol's, when
// they are known.
func (c *checker) allow(s *Send, rules []string) {
	for _, r := range s.Allow {
		if rules != nil && !slices.Contains(rules, r.S) {
			c.unknown(r, rules, "allow: unknown rule %q", r.S)
			continue
		}
		s.allow = append(s.allow, r.S)
	}
}

// raw checks a send's raw bytes; it goes to its to:, or the first channel.
func (c *checker) raw(s *Send) {
	b, err := decodeHex(s.Raw.S)
	if err != nil {
		c.errf(s.Raw.Pos, "raw: %v", err)
	}
	s.raw = b
	if s.channel == "" && len(c.channels) > 0 {
		s.channel = c.channels[0]
	}
}

func (c *checker) setField(m *Message, f *SetField, sc *Scope) {
	fd := fieldOf(m.Fields, f.Name.S)
	if fd == nil {
		c.unknown(f.Name, fieldNames(m.Fields), "%s has no field %q", m.Name, f.Name.S)
		return
	}
	f.field = fd
	if fd.Kind == List {
		c.errf(f.Name.Pos, "%s.%s is a list: a send cannot set it", m.Name, fd.Name)
		return
	}
	parts, err := parseTemplate(f.Value.S)
	if err != nil {
		c.errf(f.Value.Pos, "%s: %v", fd.Name, err)
		return
	}
	if len(parts) == 1 && parts[0].variable == "" || len(parts) == 0 {
		v, err := convert(*fd, f.Value.S)
		if err != nil {
			c.errf(f.Value.Pos, "%s.%s: %v", m.Name, fd.Name, err)
		}
		f.val = v
		return
	}
	f.parts = parts
	c.template(m, fd, f, sc)
}

// template checks a field's ${var}s: set before, and of the field's kind
// (text takes any).
func (c *checker) template(m *Message, fd *Field, f *SetField, sc *Scope) {
	for _, p := range f.parts {
		if p.variable == "" {
			continue
		}
		v, ok := sc.vars[p.variable]
		switch {
		case !ok:
			c.errf(f.Value.Pos, "%s.%s: variable %q is not set before this step (a capture of an earlier step sets it; always set: %v)",
				m.Name, fd.Name, p.variable, Builtins)
		case fd.Kind == Text:
		case len(f.parts) > 1:
			c.errf(f.Value.Pos, "%s.%s is %s: %q is not one (only a text field takes text around a ${variable})",
				m.Name, fd.Name, fd.Kind, f.Value.S)
		case v.Kind != fd.Kind:
			c.errf(f.Value.Pos, "%s.%s is %s but ${%s} is %s", m.Name, fd.Name, fd.Kind, p.variable, v.Kind)
		}
	}
}

func (c *checker) expect(e *Expect, sc *Scope) {
	if e.Silence > 0 {
		return
	}
	var ms []*Message
	for _, t := range e.Messages {
		m, ok := c.msgs[t.S]
		if !ok {
			c.unknown(t, c.names, "unknown message %q", t.S)
			continue
		}
		if m.FromClient {
			c.errf(t.Pos, "%s is a client's message: a server does not send it", m.Name)
		}
		ms = append(ms, m)
	}
	if len(ms) < len(e.Messages) {
		return
	}
	fields := commonFields(ms)
	if e.Where.Set() {
		c.compile(&e.Where, c.env(fields, sc))
	}
	for _, cp := range e.Capture {
		c.capture(cp, fields, ms, sc)
	}
}

func (c *checker) capture(cp Capture, fields []Field, ms []*Message, sc *Scope) {
	switch {
	case !identRE.MatchString(cp.Var.S):
		c.errf(cp.Var.Pos, "capture: %q is not a variable name (letters, digits, _)", cp.Var.S)
		return
	case slices.Contains(Builtins, cp.Var.S):
		c.errf(cp.Var.Pos, "capture: %s is always set (%v): choose another name", cp.Var.S, Builtins)
		return
	case cp.Var.S == RandomFunc:
		c.errf(cp.Var.Pos, "capture: %s is a function (%s() draws a number): choose another name", cp.Var.S, RandomFunc)
		return
	}
	if cp.Field.S == MessageVar {
		sc.vars[cp.Var.S] = Field{Name: cp.Var.S, Kind: Text}
		return
	}
	f := fieldOf(fields, cp.Field.S)
	if f == nil && framing(ms, cp.Field.S) {
		c.errf(cp.Field.Pos, "capture %s: %s is framing: a send may set it on purpose, an expect does not read it "+
			"(a reply whose framing is wrong breaks a rule, recorded as a violation)", cp.Var.S, cp.Field.S)
		return
	}
	if f == nil {
		var all []string
		for _, m := range ms {
			for _, f := range m.Fields {
				if !f.SendOnly {
					all = append(all, f.Name)
				}
			}
		}
		c.unknown(cp.Field, append(all, MessageVar), "capture %s: %q is not a field of every message expected (%s)",
			cp.Var.S, cp.Field.S, messageNames(ms))
		return
	}
	g := *f
	g.Name = cp.Var.S
	sc.vars[cp.Var.S] = g
}

// env is an expression's variables, typed by example: the scope's, then
// fields (a received message's, shadowing a variable of its name) and
// its name, message.
func (c *checker) env(fields []Field, sc *Scope) map[string]any {
	env := map[string]any{}
	for n, f := range sc.vars {
		env[n] = zero(f)
	}
	if fields != nil {
		env[MessageVar] = ""
	}
	for _, f := range fields {
		env[f.Name] = zero(f)
	}
	env[RandomFunc] = func() float64 { return 0 }
	return env
}

// compile compiles x as a condition over env.
func (c *checker) compile(x *Expr, env map[string]any) {
	p, err := expr.Compile(x.S, expr.Env(env), expr.AsBool())
	if err == nil {
		x.prog = p
		return
	}
	e := Error{Pos: x.Pos, Exact: true, Msg: err.Error()}
	var fe *file.Error
	if errors.As(err, &fe) {
		e.Msg = fe.Message
		if fe.Line > 1 {
			e.Line += fe.Line - 1
			e.Col = 1
		}
		e.Col += fe.Column
	}
	e.Msg = fmt.Sprintf("expression %q: %s", x.S, e.Msg)
	c.errs = append(c.errs, e)
}

// commonFields are the fields every message of ms has, of one kind; nil
// for none (expect any).
func commonFields(ms []*Message) []Field {
	if len(ms) == 0 {
		return []Field{}
	}
	var out []Field
	for _, f := range ms[0].Fields {
		if f.SendOnly {
			continue
		}
		all := true
		for _, m := range ms[1:] {
			g := fieldOf(m.Fields, f.Name)
			all = all && g != nil && g.Kind == f.Kind
		}
		if all {
			out = append(out, f)
		}
	}
	if out == nil {
		out = []Field{}
	}
	return out
}

func fieldOf(fs []Field, name string) *Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// framing reports whether name is a SendOnly field of a message of ms.
func framing(ms []*Message, name string) bool {
	for _, m := range ms {
		if f := fieldOf(m.Fields, name); f != nil && f.SendOnly {
			return true
		}
	}
	return false
}

func fieldNames(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func messageNames(ms []*Message) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.Name
	}
	return fmt.Sprint(s)
}
