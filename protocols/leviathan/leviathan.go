// Package leviathan registers the Leviathan reliable-UDP format (leviathan.md): its descriptor is assembled here from
// the protocol's own packages, once.
package leviathan

import (
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/simclient/levclient"
	"github.com/lobbybench/lobbybench/wire/leviathan"
)

func init() {
	g := conformance.LeviathanGroup()
	protocols.Register(protocols.Descriptor{
		Scenario:    levclient.Spec,
		Client:      levclient.Client,
		Conformance: &g,
		Server:      []string{leviathan.ProtocolName},
	})
}
