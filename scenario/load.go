package scenario

import (
	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/target"

	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Load reads and validates the scenario at path. On any problem it returns
// Errors listing all of them as "file:line: message".
func Load(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// maxFileSize bounds what Parse accepts; scenarios are small.
const maxFileSize = 1 << 20

// Parse validates the YAML scenario in data; file names it in messages.
// It returns a valid Plan, or nil and Errors listing every problem.
func Parse(file string, data []byte) (plan *Plan, err error) {
	d := &decoder{file: file}
	if len(data) > maxFileSize {
		d.errAt(0, "file is %d bytes; a scenario is at most %d", len(data), maxFileSize)
		return nil, d.errs
	}
	defer func() {
		// yaml.v3 can panic on pathological input; never let it escape.
		if r := recover(); r != nil {
			plan, err = nil, Errors{{File: file, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		d.yamlError(err, data)
		return nil, d.errs
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		d.errAt(0, "empty scenario")
		return nil, d.errs
	}
	if !d.checkExpansion(&doc) {
		return nil, d.errs
	}
	if !d.expandEnv(&doc, os.LookupEnv) {
		return nil, d.errs
	}
	p := d.plan(doc.Content[0])
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if len(d.errs)+len(d.later) > 0 {
		return nil, append(d.errs.sorted(), d.later...)
	}
	return p, nil
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into Errors. yaml.v3 often names the line
// where the enclosing node started (a comment above a mapping, the line
// before an unclosed brace), so the line is re-found from the text: see
// syntaxLine. The message quotes that line.
func (d *decoder) yamlError(err error, data []byte) {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	for _, m := range msgs {
		if g := yamlLineRE.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			d.syntaxErr(data, line, g[2])
			continue
		}
		d.syntaxErr(data, 0, strings.TrimPrefix(m, "yaml: "))
	}
}

func (d *decoder) syntaxErr(data []byte, hint int, msg string) {
	lines := strings.Split(string(data), "\n")
	line := syntaxLine(lines, hint)
	if line < 1 || line > len(lines) {
		d.errAt(line, "YAML syntax: %s", msg)
		return
	}
	text := strings.TrimRight(lines[line-1], "\r")
	d.errAt(line, "YAML syntax: %s%s: %q", msg, indentHint(lines, line), text)
}

type decoder struct {
	file string
	errs Errors
	// later holds problems in other files the scenario reads (a load
	// curve's CSV), listed after the scenario's own, in their file order.
	later Errors
	// rejected holds the kinds of steps already reported as unknown or
	// wrong for the protocol, so thresholds on them do not repeat the error.
	rejected map[string]bool
}

func (d *decoder) reject(kind string) {
	if d.rejected == nil {
		d.rejected = map[string]bool{}
	}
	d.rejected[kind] = true
}

func (d *decoder) errAt(line int, format string, args ...any) {
	d.errs = append(d.errs, Error{File: d.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) errf(n *yaml.Node, format string, args ...any) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	d.errs = append(d.errs, Error{File: d.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// fields is a decoded mapping: values and key nodes by key.
type fields struct {
	vals map[string]*yaml.Node
	keys map[string]*yaml.Node
	node *yaml.Node
}

func (f fields) get(k string) *yaml.Node { return f.vals[k] }

// mapping checks that n is a mapping whose keys are all in known; it reports
// unknown and duplicate keys and returns what it found.
func (d *decoder) mapping(n *yaml.Node, what string, known []string) (fields, bool) {
	f := fields{vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}, node: n}
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errf(n, "%s must be a mapping (key: value), got %s", what, describe(n))
		return f, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errf(k, "%s: keys must be plain words", what)
			continue
		}
		if k.Value == "<<" {
			d.errf(k, "%s: YAML merge keys (<<) are not supported", what)
			continue
		}
		if !slices.Contains(known, k.Value) {
			if hint, ok := movedKeys[indexRE.ReplaceAllString(what, "")][k.Value]; ok {
				d.errf(k, "unknown key %q in %s: %s", k.Value, what, hint)
				continue
			}
			d.errf(k, "unknown key %q in %s%s", k.Value, what, suggest(k.Value, known))
			continue
		}
		if prev, dup := f.keys[k.Value]; dup {
			d.errf(k, "duplicate key %q in %s (first at line %d)", k.Value, what, prev.Line)
			continue
		}
		f.keys[k.Value], f.vals[k.Value] = k, v
	}
	return f, true
}

func describe(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unsupported node"
}

func (d *decoder) scalar(n *yaml.Node, what string) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errf(n, "%s must be a single value, got %s", what, describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	return d.scalar(n, what)
}

func (d *decoder) integer(n *yaml.Node, what string, lo, hi int64) (int64, bool) {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		d.errf(n, "%s must be a whole number, got %q", what, s)
		return 0, false
	}
	if v < lo || v > hi {
		d.errf(n, "%s must be between %d and %d, got %d", what, lo, hi, v)
		return 0, false
	}
	return v, true
}

func (d *decoder) number(n *yaml.Node, what string) (float64, bool) {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errf(n, "%s must be a number, got %q", what, s)
		return 0, false
	}
	return v, true
}

func (d *decoder) duration(n *yaml.Node, what string) (time.Duration, bool) {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.errf(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

func (d *decoder) rate(n *yaml.Node, what string) (float64, bool) {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0, false
	}
	v, err := ParseRate(s)
	if err != nil {
		d.errf(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

func (d *decoder) percent(n *yaml.Node, what string) (float64, bool) {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0, false
	}
	v, err := ParsePercent(s)
	if err != nil {
		d.errf(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

func (d *decoder) oneOf(n *yaml.Node, what string, allowed []string) (string, bool) {
	s, ok := d.scalar(n, what)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		d.errf(n, "%s: unknown value %q (want one of %s)%s", what, s, strings.Join(allowed, ", "), suggest(s, allowed))
		return "", false
	}
	return s, true
}

// movedKeys says, for keys commonly put in the wrong mapping, where they go.
// Mapping names have their [index] removed before the lookup.
var movedKeys = map[string]map[string]string{
	"the scenario": {
		"max_clients": "it belongs under load:", "duration": "it belongs under load:", "stages": "it belongs under load:",
		"rate": "it belongs under load:", "clients": "it belongs under load:",
		"timeout": "it belongs under defaults:", "retries": "it belongs under defaults:", "retry_interval": "it belongs under defaults:",
		"steps": "it belongs in a flow (flows: [{name: ..., steps: [...]}])",
		"drop":  "it belongs under impairment:", "delay": "it belongs under impairment:",
		"kill": "it belongs in a fault (faults: [{at: 20s, kill: SIGKILL}])", "restart_after": "it belongs in a fault (faults: [{at: 20s, kill: SIGKILL, restart_after: 1s}])",
	},
	"load":        {"timeout": "it belongs under defaults:", "seed": "it belongs at the top level", "flows": "it belongs at the top level"},
	"load.stages": {"rate": "rate is for the open model, this load is closed", "clients": "clients is for the closed model, this load is open"},
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// topKeys are the top-level keys of every scenario; each protocol adds its
// own (ProtocolSpec.Keys) after "protocol" (topLevelKeys).
var topKeys = []string{"name", "description", "target", "protocol", "on_violation",
	"seed", "load", "defaults", "flows", "impairment", "source_addrs", "socket_buffer", "flows_mode", "thresholds", "default_error_gate", "embedded_server",
	"target_cmd", "faults"}

// topLevelKeys are the top-level keys a scenario may give: topKeys with
// the registered protocols' own keys after "protocol".
func topLevelKeys() []string {
	out := slices.Clone(topKeys[:4])
	for _, k := range protocolKeys() {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return append(out, topKeys[4:]...)
}

func (d *decoder) plan(root *yaml.Node) *Plan {
	p := &Plan{File: d.file, Defaults: DefaultPolicy, Seed: 1, OnViolation: ViolationContinue}
	f, ok := d.mapping(root, "the scenario", topLevelKeys())
	if !ok {
		return p
	}
	for _, k := range topLevel {
		n := f.get(k.key)
		switch {
		case k.key == "":
			k.read(d, p, f, nil)
		case n != nil:
			k.read(d, p, f, n)
		case k.missing != nil:
			d.errf(root, "missing key %q%s", k.key, k.missing())
		}
	}
	return p
}

// topKey is how one top-level key of a scenario is read.
type topKey struct {
	// key is the top-level key; "" for a step that reads every scenario,
	// with or without a key of its own (the protocols' keys).
	key string
	// read reads n, the key's value (nil for key ""), into p; f is the
	// whole scenario, for the keys that look at others.
	read func(d *decoder, p *Plan, f fields, n *yaml.Node)
	// missing, when set, makes the key required: it returns what follows
	// the missing key's name in the error.
	missing func() string
}

// topLevel reads the scenario's top-level keys in this order: a key may
// use what those before it set (the protocol, the target, the seed, the
// defaults, the load's length). topKeys lists the same keys for users.
var topLevel = []topKey{
	{key: "name", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.Name, _ = d.str(n, "name") }},
	{key: "description", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.Description, _ = d.str(n, "description") }},
	{key: "protocol", read: (*decoder).topProtocol, missing: func() string { return " (" + orList(ProtocolNames()) + ")" }},
	{key: "target", read: (*decoder).topTarget},
	{read: func(d *decoder, p *Plan, f fields, _ *yaml.Node) { p.Options = d.protocolOptions(f, p.Protocol) }},
	{key: "on_violation", read: (*decoder).topOnViolation},
	{key: "seed", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) {
		p.Seed, _ = d.integer(n, "seed", math.MinInt64, math.MaxInt64)
	}},
	{key: "defaults", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) {
		p.Defaults = d.policy(n, "defaults", DefaultPolicy, true)
	}},
	{key: "load", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.Load = d.load(n) }, missing: func() string { return "" }},
	{key: "impairment", read: (*decoder).topImpairment},
	{key: "source_addrs", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.SourceAddrs = d.sourceAddrs(n, p.Target) }},
	{key: "socket_buffer", read: (*decoder).topSocketBuffer},
	{key: "flows_mode", read: (*decoder).topFlowsMode},
	{key: "embedded_server", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.Embedded = d.embedded(n, p.Target) }},
	{key: "target_cmd", read: func(d *decoder, p *Plan, f fields, _ *yaml.Node) {
		p.TargetCmd = d.targetCmd(f, f.get("target") != nil)
	}},
	{key: "faults", read: func(d *decoder, p *Plan, f fields, _ *yaml.Node) { p.Faults = d.faults(f, p.Load.Duration) }},
	{key: "flows", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.Flows = d.flows(n, p.Protocol, p.Defaults) }, missing: func() string { return "" }},
	{key: "thresholds", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.Thresholds = d.thresholds(n, KnownMetrics(p)) }},
	{key: "default_error_gate", read: func(d *decoder, p *Plan, _ fields, n *yaml.Node) { p.NoDefaultGate = d.noDefaultGate(n) }},
}

// topProtocol reads protocol:, one of the protocols this program links.
func (d *decoder) topProtocol(p *Plan, _ fields, n *yaml.Node) {
	if len(Protocols()) == 0 {
		// A program that links no protocol (protocols/all links them
		// all) cannot load any scenario.
		d.errf(n, "protocol: no protocol is registered in this program (it must import protocols/all)")
		return
	}
	s, _ := d.oneOf(n, "protocol", ProtocolNames())
	p.Protocol = ProtocolName(s)
}

// topTarget reads target:, a host:port (target.Check).
func (d *decoder) topTarget(p *Plan, _ fields, n *yaml.Node) {
	s, ok := d.str(n, "target")
	if !ok {
		return
	}
	if err := target.Check(s); err != nil {
		d.errf(n, "target: %v", err)
		return
	}
	p.Target = s
}

// topOnViolation reads on_violation:, what a protocol violation does to
// its step.
func (d *decoder) topOnViolation(p *Plan, _ fields, n *yaml.Node) {
	if v, ok := d.oneOf(n, "on_violation", []string{string(ViolationContinue), string(ViolationFailStep)}); ok {
		p.OnViolation = ViolationAction(v)
	}
}

// topImpairment reads impairment:, which only UDP protocols take.
func (d *decoder) topImpairment(p *Plan, f fields, n *yaml.Node) {
	if p.Protocol != "" && !p.Protocol.UDP() {
		d.errf(f.keys["impairment"], "impairment applies to UDP protocols (%s), not %s", strings.Join(udpProtocols(), ", "), p.Protocol)
		return
	}
	p.Impairment = d.impairment(n, p.Seed)
}

// topFlowsMode reads flows_mode:, virtual only for a protocol that
// takes virtual flows.
func (d *decoder) topFlowsMode(p *Plan, _ fields, n *yaml.Node) {
	s, ok := d.oneOf(n, "flows_mode", FlowsModes)
	if !ok {
		return
	}
	if err := p.Protocol.checkFlowsMode(FlowsMode(s)); err != nil {
		d.errf(n, "flows_mode: %v", err)
		return
	}
	p.FlowsMode = FlowsMode(s)
}

// topSocketBuffer reads socket_buffer:, a size within 1KiB-1GiB.
func (d *decoder) topSocketBuffer(p *Plan, _ fields, n *yaml.Node) {
	s, ok := d.scalar(n, "socket_buffer")
	if !ok {
		return
	}
	v, err := ParseSize(s)
	switch {
	case err != nil:
		d.errf(n, "socket_buffer: %v", err)
	case v < 1024 || v > 1<<30:
		d.errf(n, "socket_buffer: %s is outside 1KiB-1GiB", s)
	default:
		p.SocketBuffer = v
	}
}

var policyKeys = []string{"timeout", "retries", "retry_interval"}

func (d *decoder) policy(n *yaml.Node, what string, base RequestPolicy, strict bool) RequestPolicy {
	f, ok := d.mapping(n, what, policyKeys)
	if !ok {
		return base
	}
	return d.policyFields(f, what, base)
}

func (d *decoder) policyFields(f fields, what string, base RequestPolicy) RequestPolicy {
	p := base
	if n := f.get("timeout"); n != nil {
		if v, ok := d.duration(n, what+".timeout"); ok {
			if v == 0 {
				d.errf(n, "%s.timeout must be above 0", what)
			} else {
				p.Timeout = v
			}
		}
	}
	if n := f.get("retries"); n != nil {
		if v, ok := d.integer(n, what+".retries", 0, 100); ok {
			p.Retries = int(v)
		}
	}
	if n := f.get("retry_interval"); n != nil {
		if v, ok := d.duration(n, what+".retry_interval"); ok {
			p.RetryInterval = v
		}
	}
	return p
}

var loadKeys = []string{"model", "rate", "clients", "start_rate", "start_clients", "stages", "duration", "max_clients", "arrivals", "curve", "compress"}

// DefaultMaxClients caps concurrent sessions of an open model unless set.
const DefaultMaxClients = 1000

// maxDuration bounds any run so a typo cannot start a week-long test.
const maxDuration = 24 * time.Hour

// The keys that give the load of each model: its constant level, and
// the level its first stage ramps from.
var (
	loadOpenKeys   = []string{"rate", "start_rate"}
	loadClosedKeys = []string{"clients", "start_clients"}
)

// load reads load:, part by part: the model (given, the curve's, or
// inferred from the keys used), the constant level or the stages, the
// length, the peak, max_clients and the arrivals.
func (d *decoder) load(n *yaml.Node) LoadShape {
	errsBefore := len(d.errs)
	f, ok := d.mapping(n, "load", loadKeys)
	if !ok {
		return LoadShape{}
	}
	r := &loadReader{d: d, f: f, errsBefore: errsBefore, curveKey: f.keys["curve"]}
	if m := f.get("model"); m != nil {
		s, _ := d.oneOf(m, "load.model", []string{string(Open), string(Closed)})
		r.l.Model = LoadModel(s)
	}
	if !r.readCurve() {
		return r.l
	}
	if r.curveKey == nil {
		r.stages = resolve(f.get("stages"))
	}
	if !r.inferModel() {
		return r.l
	}
	r.pickKeys()
	r.readConstant()
	r.readStages()
	if !r.readDuration() {
		return r.l
	}
	peak := r.checkPeak()
	r.readMaxClients(peak)
	r.readArrivals(peak)
	return r.l
}

// loadReader is load: as it is read: its fields, the shape so far and
// what one part tells the next.
type loadReader struct {
	d          *decoder
	f          fields
	l          LoadShape
	errsBefore int        // the errors before load:, to tell whether it had any
	curveKey   *yaml.Node // load.curve's key, or nil
	// stages is load.stages (nil with a curve); stagesTotal the length of
	// the stages read.
	stages      *yaml.Node
	stagesTotal time.Duration
	// targetKey and startKey are the model's keys: rate and start_rate,
	// or clients and start_clients.
	targetKey, startKey string
}

// readCurve reads load.curve and load.compress, when given: the model,
// start and stages come from the curve, and no other key may give the
// load. False when the load can be read no further.
func (r *loadReader) readCurve() bool {
	d, f := r.d, r.f
	if r.curveKey == nil {
		if kn := f.keys["compress"]; kn != nil {
			d.errf(kn, "load.compress applies to load.curve (a CSV of the load over real time), which is not given")
		}
		return true
	}
	for _, k := range append(append([]string{"stages"}, loadOpenKeys...), loadClosedKeys...) {
		if kn := f.keys[k]; kn != nil {
			d.errf(kn, "load.%s: load.curve (line %d) gives the load; give one or the other", k, r.curveKey.Line)
		}
	}
	compress, ok := r.compress()
	if !ok {
		return false
	}
	c, start, stages, ok := d.curve(f.get("curve"), compress)
	if !ok {
		return false
	}
	model := curveValue[c.Column]
	if r.l.Model != "" && r.l.Model != model {
		d.errf(f.get("model"), "load.model is %s, but the curve's %s column is for the %s model", r.l.Model, c.Column, model)
		return false
	}
	r.l.Model, r.l.Start, r.l.Stages, r.l.Curve = model, start, stages, &c
	for _, st := range stages {
		r.stagesTotal += st.For
	}
	return true
}

// compress reads load.compress (1 when not given).
func (r *loadReader) compress() (float64, bool) {
	n := r.f.get("compress")
	if n == nil {
		return 1, true
	}
	compress, ok := r.d.number(n, "load.compress")
	if ok && (compress <= 0 || compress > 1_000_000) {
		r.d.errf(n, "load.compress must be above 0 and at most 1000000, got %g", compress)
		return compress, false
	}
	return compress, ok
}

// inferModel infers the model, when not given, from the keys used in
// load: or its stages. False when it cannot (none, or both models'
// keys).
func (r *loadReader) inferModel() bool {
	if r.l.Model != "" {
		return true
	}
	o, c := r.hasAny(loadOpenKeys), r.hasAny(loadClosedKeys)
	if o == nil {
		o = r.stageKey("rate")
	}
	if c == nil {
		c = r.stageKey("clients")
	}
	switch {
	case o != nil && c != nil:
		r.d.errf(c, "load mixes open-model keys (rate, line %d) and closed-model keys (clients); set load.model", o.Line)
		return false
	case o != nil:
		r.l.Model = Open
	case c != nil:
		r.l.Model = Closed
	default:
		if r.f.get("model") == nil {
			r.d.errf(r.f.node, "load: give rate or stages of {rate, for} (open model), or clients or stages of {clients, for} (closed model)")
		}
		return false
	}
	return true
}

// hasAny is the key node of the first of keys that load: gives, or nil.
func (r *loadReader) hasAny(keys []string) *yaml.Node {
	for _, k := range keys {
		if r.f.keys[k] != nil {
			return r.f.keys[k]
		}
	}
	return nil
}

// stageKey is the first key node named key in any of the stages, or nil.
func (r *loadReader) stageKey(key string) *yaml.Node {
	if r.stages == nil || r.stages.Kind != yaml.SequenceNode {
		return nil
	}
	for _, s := range r.stages.Content {
		if s = resolve(s); s.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(s.Content); i += 2 {
				if s.Content[i].Value == key {
					return s.Content[i]
				}
			}
		}
	}
	return nil
}

// pickKeys sets the model's keys and reports the other model's, unless a
// curve gives the load (readCurve reported them).
func (r *loadReader) pickKeys() {
	wrongKeys := loadClosedKeys
	r.targetKey, r.startKey = "rate", "start_rate"
	if r.l.Model == Closed {
		r.targetKey, r.startKey, wrongKeys = "clients", "start_clients", loadOpenKeys
	}
	if r.curveKey != nil {
		wrongKeys = nil // reported above
	}
	for _, k := range wrongKeys {
		if kn := r.f.keys[k]; kn != nil {
			r.d.errf(kn, "load.%s does not apply to the %s model (use %s)", k, r.l.Model, r.targetKey)
		}
	}
}

// value reads one level of the load: a rate (open) or a number of
// clients (closed).
func (r *loadReader) value(n *yaml.Node, what string) (float64, bool) {
	if r.l.Model == Open {
		return r.d.rate(n, what)
	}
	v, ok := r.d.integer(n, what, 0, 1_000_000)
	return float64(v), ok
}

// readConstant reads the start level and the constant level, when given
// without a curve.
func (r *loadReader) readConstant() {
	d, f, targetKey, startKey := r.d, r.f, r.targetKey, r.startKey
	if r.curveKey != nil {
		return
	}
	if n := f.get(startKey); n != nil {
		r.l.Start, _ = r.value(n, "load."+startKey)
	}
	n := f.get(targetKey)
	if n == nil {
		return
	}
	if r.stages != nil {
		d.errf(f.keys[targetKey], "load: give either %s (constant) or stages, not both", targetKey)
	}
	if f.keys[startKey] != nil {
		d.errf(f.keys[startKey], "load: %s ramps into stages; with a constant %s it has no use", startKey, targetKey)
	}
	if v, ok := r.value(n, "load."+targetKey); ok {
		r.l.Start = v
		r.l.Stages = nil
	}
}

// readStages reads load.stages, when given.
func (r *loadReader) readStages() {
	stages := r.stages
	if stages == nil {
		return
	}
	if stages.Kind != yaml.SequenceNode {
		r.d.errf(stages, "load.stages must be a list of {%s, for}, got %s", r.targetKey, describe(stages))
		return
	}
	if len(stages.Content) == 0 {
		r.d.errf(stages, "load.stages is empty")
	}
	for i, sn := range stages.Content {
		if st, ok := r.readStage(i, sn); ok {
			r.stagesTotal += st.For
			r.l.Stages = append(r.l.Stages, st)
		}
	}
}

// readStage reads load.stages[i]; false when it is not a mapping.
func (r *loadReader) readStage(i int, sn *yaml.Node) (Stage, bool) {
	d, targetKey := r.d, r.targetKey
	what := fmt.Sprintf("load.stages[%d]", i)
	sf, ok := d.mapping(sn, what, []string{targetKey, "for"})
	if !ok {
		return Stage{}, false
	}
	var st Stage
	if n := sf.get(targetKey); n != nil {
		st.Target, _ = r.value(n, what+"."+targetKey)
	} else if other := map[string]string{"rate": "clients", "clients": "rate"}[targetKey]; !hasKey(sn, other) {
		d.errf(sn, "%s: missing %q", what, targetKey)
	}
	if n := sf.get("for"); n != nil {
		st.For, _ = d.duration(n, what+".for")
	} else {
		d.errf(sn, "%s: missing \"for\" (e.g. for: 10s)", what)
	}
	return st, true
}

// readDuration sets the run's length: the stages', or load.duration; it
// must be above 0 and within maxDuration. False when a curve lasts 0s.
func (r *loadReader) readDuration() bool {
	d, f := r.d, r.f
	r.l.Duration = r.stagesTotal
	if r.curveKey != nil && r.stagesTotal == 0 {
		d.errf(r.curveKey, "load.curve: the curve's %s lasts 0s once compressed %g times", formatSpan(r.l.Curve.Span), r.l.Curve.Compress)
		return false
	}
	if n := f.get("duration"); n != nil {
		v, ok := d.duration(n, "load.duration")
		if !ok {
			return true // already reported
		}
		r.l.Duration = v
	}
	if r.l.Duration <= 0 {
		d.errf(f.node, "load: the run has no length (set load.duration, or stages with for)")
	} else if r.l.Duration > maxDuration {
		d.errf(f.node, "load: the run lasts %s, over the %s limit", r.l.Duration, maxDuration)
	}
	return true
}

// checkPeak returns the load's peak level, reporting a load that is 0
// throughout (when load: had no error before) or an open peak over
// 1000000/s.
func (r *loadReader) checkPeak() float64 {
	d, l := r.d, &r.l
	peak := l.Start
	for _, s := range l.Stages {
		peak = math.Max(peak, s.Target)
	}
	if peak == 0 && len(d.errs) == r.errsBefore {
		d.errf(r.f.node, "load: the %s is 0 throughout: nothing would run (set %s or stages)", map[LoadModel]string{Open: "rate", Closed: "number of clients"}[l.Model], r.targetKey)
	}
	if l.Model == Open && peak > 1_000_000 {
		d.errf(r.f.node, "load: peak rate %s is over 1000000/s", FormatRate(peak))
	}
	return peak
}

// readMaxClients reads load.max_clients, which a closed model's peak must
// not pass.
func (r *loadReader) readMaxClients(peak float64) {
	n := r.f.get("max_clients")
	if n == nil {
		return
	}
	if v, ok := r.d.integer(n, "load.max_clients", 1, 1_000_000); ok {
		r.l.MaxClients = int(v)
		if r.l.Model == Closed && peak > float64(v) {
			r.d.errf(n, "load.max_clients %d is below the peak of %d clients the stages ask for", v, int(peak))
		}
	}
}

// readArrivals reads load.arrivals (the open model's only: uniform by
// default), then defaults max_clients: DefaultMaxClients open, the peak
// closed.
func (r *loadReader) readArrivals(peak float64) {
	d, f, l := r.d, r.f, &r.l
	if l.Model == Open {
		l.Arrivals = ArrivalsUniform
	}
	if n := f.get("arrivals"); n != nil {
		if l.Model != Open {
			d.errf(f.keys["arrivals"], "load.arrivals applies to the open model (rate), not the %s model: closed-model clients start as the client count rises", l.Model)
		} else if v, ok := d.oneOf(n, "load.arrivals", []string{string(ArrivalsUniform), string(ArrivalsPoisson)}); ok {
			l.Arrivals = Arrivals(v)
		}
	}
	if l.MaxClients == 0 {
		l.MaxClients = DefaultMaxClients
		if l.Model == Closed {
			l.MaxClients = max(1, int(peak))
		}
	}
}

var impairKeys = []string{"drop", "delay", "jitter", "duplicate", "reorder"}

func (d *decoder) impairment(n *yaml.Node, seed int64) Impairment {
	im := Impairment{Seed: seed}
	keys := append(append([]string{}, impairKeys...), "in", "out", "seed")
	f, ok := d.mapping(n, "impairment", keys)
	if !ok {
		return im
	}
	if s := f.get("seed"); s != nil {
		im.Seed, _ = d.integer(s, "impairment.seed", math.MinInt64, math.MaxInt64)
	}
	both := d.impairDir(f, "impairment", Impair{})
	im.In, im.Out = both, both
	if s := f.get("in"); s != nil {
		if g, ok := d.mapping(s, "impairment.in", impairKeys); ok {
			im.In = d.impairDir(g, "impairment.in", both)
		}
	}
	if s := f.get("out"); s != nil {
		if g, ok := d.mapping(s, "impairment.out", impairKeys); ok {
			im.Out = d.impairDir(g, "impairment.out", both)
		}
	}
	return im
}

// impairDir reads one direction's keys over base (the keys given for both).
func (d *decoder) impairDir(f fields, what string, base Impair) Impair {
	im := base
	if n := f.get("drop"); n != nil {
		im.Drop, _ = d.percent(n, what+".drop")
	}
	if n := f.get("duplicate"); n != nil {
		im.Duplicate, _ = d.percent(n, what+".duplicate")
	}
	if n := f.get("reorder"); n != nil {
		im.Reorder, _ = d.percent(n, what+".reorder")
	}
	if n := f.get("delay"); n != nil {
		im.Delay, _ = d.duration(n, what+".delay")
	}
	if n := f.get("jitter"); n != nil {
		im.Jitter, _ = d.duration(n, what+".jitter")
	}
	if im.Delay > 10*time.Second || im.Jitter > 10*time.Second {
		d.errf(f.node, "%s: delay and jitter must be at most 10s", what)
	}
	return im
}

func (d *decoder) sourceAddrs(n *yaml.Node, target string) []netip.Addr {
	n = resolve(n)
	var items []*yaml.Node
	switch {
	case n != nil && n.Kind == yaml.SequenceNode:
		items = n.Content
	case n != nil && n.Kind == yaml.ScalarNode:
		items = []*yaml.Node{n}
	default:
		d.errf(n, "source_addrs must be an address, a range a-b, or a list of them, got %s", describe(n))
		return nil
	}
	loopTarget := target == ""
	if !loopTarget {
		host, _, _ := net.SplitHostPort(target)
		if a, err := netip.ParseAddr(host); err == nil {
			loopTarget = a.IsLoopback()
		} else {
			loopTarget = host == "localhost"
		}
	}
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, it := range items {
		s, ok := d.scalar(it, "source_addrs entry")
		if !ok {
			continue
		}
		addrs, err := netrange.ParseAddrs(s)
		if err != nil {
			d.errf(it, "source_addrs: %v", err)
			continue
		}
		for _, a := range addrs {
			if loopTarget && !a.IsLoopback() {
				d.errf(it, "source_addrs: %s is not a loopback address, but the target is loopback (use 127.0.0.0/8)", a)
				break
			}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) > netrange.MaxAddrs {
		d.errf(n, "source_addrs: more than %d addresses", netrange.MaxAddrs)
	}
	return out
}

// hasKey reports whether mapping n has key k (whether or not it was accepted).
func hasKey(n *yaml.Node, k string) bool {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return true
		}
	}
	return false
}
