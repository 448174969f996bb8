// Package leviathan registers the Leviathan reliable-UDP protocol
// (leviathan.md): its descriptor is assembled here, once, from the
// protocol's own packages (wire/leviathan, levconn, simclient/levclient,
// conformance/levcases, refserver/leviathan).
package leviathan

import (
	"github.com/lobbybench/lobbybench/conformance/levcases"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/refserver"
	refleviathan "github.com/lobbybench/lobbybench/refserver/leviathan"
	"github.com/lobbybench/lobbybench/simclient/levclient"
)

func init() {
	g := levcases.Group()
	protocols.Register(protocols.Descriptor{
		Scenario:    levclient.Spec,
		Client:      levclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{refleviathan.Part()},
	})
}
