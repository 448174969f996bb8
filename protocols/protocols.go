// Package protocols is where a protocol becomes part of lobbybench. A
// protocol's descriptor (Descriptor) holds everything the rest of the
// program needs of it: what the scenario loader reads, how runs play it,
// its group of the conformance suite and its parts of the reference
// server. The protocol's own package registers it once, from init, with
// Register, which hands each piece to the registry of the package that uses
// it; protocols/all links every protocol, and nothing else lists them.
package protocols

import (
	"fmt"
	"sync"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/script"
	"github.com/lobbybench/lobbybench/simclient"
)

// Descriptor is one protocol, whole.
type Descriptor struct {
	// Scenario is what the scenario loader knows of the protocol: its name
	// (the scenario's protocol:, --protocol, results and case groups),
	// documentation order, transport, step kinds, malformed kinds,
	// rate-probe requests and its own top-level keys.
	Scenario scenario.ProtocolSpec
	// Catalog is its messages for scripted steps (send, expect …), by
	// its document's names; nil: it has none, and a scenario of it may
	// not use them. Register hands it to the scenario loader
	// (ProtocolSpec.Catalog).
	Catalog script.Catalog
	// Client is how a run plays it: the reachability check, the watchdog's
	// probe, the session factory, how its servers are told from others'.
	// Its Name, Transport and EmbeddedParts are Register's to fill in.
	Client simclient.Client
	// Conformance is its group of the conformance suite: reachability
	// check, conform's flags and the run's options, its cases; nil when
	// it has none. Its Name and Order are Register's to fill in.
	Conformance *conformance.Group
	// Server are its parts of the reference server, each with its
	// configuration, serve flags and counters; a run with no target starts
	// them (and the parts they need) and aims at the first.
	Server []*refserver.Part
}

var (
	mu    sync.RWMutex
	descs = map[scenario.ProtocolName]*Descriptor{}
)

// Register makes d a protocol of the program: its scenario spec goes to the
// scenario loader, its client to simclient, its conformance group to the
// suite, its server parts to the reference server. It panics on a second registration of a name and on a descriptor
// that lacks a piece: programming errors of a protocol package's init.
func Register(d Descriptor) {
	name := d.Scenario.Name
	if name == "" || d.Client.New == nil || d.Client.Reach == nil || len(d.Server) == 0 {
		panic(fmt.Sprintf("protocols: protocol %q needs a name, a client (Reach, New) and a server part", name))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := descs[name]; dup {
		panic(fmt.Sprintf("protocols: protocol %q registered twice", name))
	}
	d.Client.Name, d.Client.Transport = name, d.Scenario.Transport
	d.Client.EmbeddedParts = nil
	for _, p := range d.Server {
		d.Client.EmbeddedParts = append(d.Client.EmbeddedParts, p.Name)
	}
	if d.Catalog != nil {
		d.Scenario.Catalog = d.Catalog
	}
	for _, r := range d.Client.Rules {
		d.Scenario.Rules = append(d.Scenario.Rules, r.ID)
	}
	scenario.RegisterProtocol(d.Scenario)
	simclient.Register(d.Client)
	for _, p := range d.Server {
		refserver.Register(p)
	}
	if d.Conformance != nil {
		g := *d.Conformance
		g.Name, g.Order = string(name), d.Scenario.Order
		conformance.RegisterGroup(g)
		d.Conformance = &g
	}
	descs[name] = &d
}

// Lookup returns the descriptor registered under name.
func Lookup(name string) (*Descriptor, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := descs[scenario.ProtocolName(name)]
	return d, ok
}

// All returns the registered descriptors in documentation order.
func All() []*Descriptor {
	var out []*Descriptor
	for _, p := range scenario.Protocols() {
		if d, ok := Lookup(string(p)); ok {
			out = append(out, d)
		}
	}
	return out
}
