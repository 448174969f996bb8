package scenario

import (
	"github.com/lobbybench/lobbybench/script"

	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// ProtocolName is the wire protocol a scenario speaks: the name of a registered
// ProtocolSpec (each protocol declares its name once, in its wire package).
type ProtocolName string

// ProtocolSpec is what the scenario loader knows of a protocol: the
// scenario half of its descriptor, which registers it (protocols.Register);
// the loader, the engine and the CLI read the registry, so no list of
// protocols is written anywhere else.
type ProtocolSpec struct {
	Name ProtocolName
	// Order places the protocol in listings and messages (documentation
	// order, lowest first).
	Order int
	// Transport is "udp" or "tcp". Impairment applies to "udp" protocols.
	Transport string
	// VirtualFlows says its clients can run on virtual flows (flows_mode:
	// virtual, FlowsMode).
	VirtualFlows bool
	// Steps are the protocol's own step kinds, declared in its packages;
	// think, barrier, malformed and rate_probe are every protocol's.
	Steps []StepSpec
	// Malformed are the malformed kinds it accepts.
	Malformed []MalformedKind
	// ProbeRequests are the requests a rate_probe may send, the first being
	// its default and what a malformed mix interleaves.
	ProbeRequests []StepKind
	// MaxMalformed is the most packets one malformed step may send, when
	// the protocol tells its packets apart by an id that wraps (udp-lobby's
	// 16-bit sequence ids): a reply past it would be charged to an
	// earlier packet that held the same id. 0: the loader's own bound.
	MaxMalformed int
	// MalformedTo are where its malformed datagrams may go besides its
	// lobby ("lobby", the default of a malformed step's to:), e.g.
	// udp-lobby's "instance".
	MalformedTo []string
	// Catalog is the protocol's messages for scripted steps (send,
	// expect, if, repeat), which the loader checks them against; nil: the
	// protocol has none, and a scenario using one is an error naming it.
	Catalog script.Catalog
	// ProbeScripts says its rate_probe takes a request written as a
	// script (send:, expect:) against its Catalog.
	ProbeScripts bool
	// ProbeCheck, when set, checks a rate_probe's request written as a
	// script, once its catalog has, for what the protocol's probe
	// cannot send or match (a field it numbers each request by);
	// its script.Errors are load errors at their places.
	ProbeCheck func(p *script.Pipelined) error
	// Rules are the rule ids a run of the protocol reports (registered
	// with its client), which a raw send's allow: may name.
	Rules []string
	// Keys are the protocol's own top-level scenario keys (udp-lobby's
	// header_profile and instance_ports); another protocol's scenario
	// giving one is an error naming the file and line.
	Keys []string
	// Options parses a scenario's values of Keys into the protocol's
	// options, which Plan.Options carries (nil: the protocol has no
	// keys, and its plans no options). A bad value is reported through k.
	Options func(k *Keys) Options
	// Flags declares the protocol's flags of `run` on fs, each overriding
	// one of its keys (udp-lobby's --instance-ports); the function
	// returned applies those given to a plan's options, or returns an
	// error naming the flag. Nil: no flags.
	Flags func(fs *flag.FlagSet) func(Options) (Options, error)
}

// Options are a protocol's own settings of a plan (Plan.Options), parsed
// from its keys by its ProtocolSpec; only the protocol's packages read
// inside them.
type Options interface {
	// Describe is what the plan's description adds after the protocol's
	// name, e.g. ", header spec, instance ports 8081-8180" ("" for
	// nothing).
	Describe() string
	// Embedded returns the options of a run against the embedded
	// reference server instead of the scenario's target: what describes
	// the real target (udp-lobby's instance_ports) does not apply to it.
	Embedded() Options
}

// Keys gives a protocol's Options parser the scenario's values of its own
// keys, read through the loader: a bad value is an error naming the file
// and line, as every other key's is. A step kind's parser reads its
// parameters through the same (StepKeys).
type Keys struct {
	d    *decoder
	f    fields
	what string     // names the mapping in messages ("" for the top level)
	at   *yaml.Node // where a problem of no one key is reported
}

// name is key as messages name it.
func (k *Keys) name(key string) string {
	if k.what == "" {
		return key
	}
	return k.what + " " + key
}

// Has reports whether the scenario gives key.
func (k *Keys) Has(key string) bool { return k.f.get(key) != nil }

// String returns key's value, a single value; false (reported) otherwise.
func (k *Keys) String(key string) (string, bool) { return k.d.str(k.f.get(key), k.name(key)) }

// Int returns key's value, a whole number in [lo, hi]; false (reported)
// otherwise.
func (k *Keys) Int(key string, lo, hi int64) (int64, bool) {
	return k.d.integer(k.f.get(key), k.name(key), lo, hi)
}

// Duration returns key's value, a duration ("100ms"); false (reported)
// otherwise.
func (k *Keys) Duration(key string) (time.Duration, bool) {
	return k.d.duration(k.f.get(key), k.name(key))
}

// OneOf returns key's value when it is one of allowed; false (reported,
// with the nearest allowed value) otherwise.
func (k *Keys) OneOf(key string, allowed []string) (string, bool) {
	return k.d.oneOf(k.f.get(key), k.name(key), allowed)
}

// Errorf reports a problem with key's value, at its line; with key "", a
// problem of the whole (a step's: at its kind).
func (k *Keys) Errorf(key, format string, a ...any) {
	n := k.at
	if key != "" {
		n = k.f.get(key)
	}
	k.d.errf(n, format, a...)
}

// protocolOptions parses the protocol keys of the scenario f: a key of
// another protocol than p is an error at its line; p's own are parsed by
// its spec. With no (valid) protocol every protocol's keys are parsed, so
// that a bad value is still reported, and no options are kept.
func (d *decoder) protocolOptions(f fields, p ProtocolName) Options {
	for _, k := range protocolKeys() {
		if f.get(k) != nil && !p.accepts(k) {
			d.errf(f.keys[k], "%s applies to %s only, not %s", k, keyOwners(k), p)
		}
	}
	if p != "" {
		if s := p.spec(); s.Options != nil {
			return s.Options(&Keys{d: d, f: f})
		}
		return nil
	}
	for _, q := range Protocols() {
		s := q.spec()
		if s.Options != nil && slices.ContainsFunc(s.Keys, func(k string) bool { return f.get(k) != nil }) {
			s.Options(&Keys{d: d, f: f})
		}
	}
	return nil
}

// protocolKeys are the registered protocols' own keys, in protocol order.
func protocolKeys() []string {
	var out []string
	for _, p := range Protocols() {
		for _, k := range p.spec().Keys {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

var (
	protoMu sync.RWMutex
	protos  = map[ProtocolName]ProtocolSpec{}
)

// RegisterProtocol adds s to the registry. It panics on a second
// registration of a name, a spec without a request for rate_probe, a
// rate_probe request not among its step kinds or a step kind named twice: all programming errors of a protocol package's init.
func RegisterProtocol(s ProtocolSpec) {
	protoMu.Lock()
	defer protoMu.Unlock()
	if _, dup := protos[s.Name]; dup || s.Name == "" {
		panic(fmt.Sprintf("scenario: protocol %q registered twice or unnamed", s.Name))
	}
	if len(s.ProbeRequests) == 0 || (s.Transport != "udp" && s.Transport != "tcp") {
		panic(fmt.Sprintf("scenario: protocol %q needs ProbeRequests and a udp or tcp Transport", s.Name))
	}
	s.checkSteps()
	protos[s.Name] = s
}

// LookupProtocol returns the registered spec of p.
func LookupProtocol(p ProtocolName) (ProtocolSpec, bool) {
	protoMu.RLock()
	defer protoMu.RUnlock()
	s, ok := protos[p]
	return s, ok
}

// Protocols returns the registered protocols in documentation order.
func Protocols() []ProtocolName {
	protoMu.RLock()
	defer protoMu.RUnlock()
	out := make([]ProtocolName, 0, len(protos))
	for p := range protos {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b ProtocolName) int {
		if c := protos[a].Order - protos[b].Order; c != 0 {
			return c
		}
		return strings.Compare(string(a), string(b))
	})
	return out
}

// ProtocolNames returns Protocols as strings.
func ProtocolNames() []string {
	var out []string
	for _, p := range Protocols() {
		out = append(out, string(p))
	}
	return out
}

// orList joins names as "a, b or c".
func orList(names []string) string { return joinList(names, "or") }

// andList joins names as "a, b and c".
func andList(names []string) string { return joinList(names, "and") }

func joinList(names []string, last string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + last + " " + names[len(names)-1]
}

// UDP reports whether the protocol runs over UDP (and so accepts
// impairment).
func (p ProtocolName) UDP() bool {
	s, _ := LookupProtocol(p)
	return s.Transport == "udp"
}

// spec returns p's spec (the zero spec for an unknown or empty p).
func (p ProtocolName) spec() ProtocolSpec {
	s, _ := LookupProtocol(p)
	return s
}

// accepts reports whether p takes the protocol-specific key k; an empty
// (missing) protocol accepts every key, its error being reported once.
func (p ProtocolName) accepts(k string) bool {
	return p == "" || slices.Contains(p.spec().Keys, k)
}

// keyOwners names the protocols that accept key k, for messages.
func keyOwners(k string) string {
	var out []string
	for _, p := range Protocols() {
		if p.accepts(k) {
			out = append(out, string(p))
		}
	}
	return orList(out)
}

// udpProtocols names the protocols over UDP, for messages.
func udpProtocols() []string {
	var out []string
	for _, p := range Protocols() {
		if p.UDP() {
			out = append(out, string(p))
		}
	}
	return out
}

// malformedTargets are the values of a malformed step's to: that some
// protocol accepts, "lobby" first.
func malformedTargets() []string {
	out := []string{"lobby"}
	for _, p := range Protocols() {
		for _, t := range p.spec().MalformedTo {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// malformedToOwners names the protocols whose malformed datagrams may go to
// t, for messages.
func malformedToOwners(t string) []string {
	var out []string
	for _, p := range Protocols() {
		if slices.Contains(p.spec().MalformedTo, t) {
			out = append(out, string(p))
		}
	}
	return out
}
