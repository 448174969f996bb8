// Package leviathan registers the Leviathan reliable-UDP protocol
// (leviathan.md): its descriptor is assembled here, once, from the
// protocol's own packages (protocols/leviathan/levwire, levconn, protocols/leviathan/levclient,
// protocols/leviathan/levcases, protocols/leviathan/levserver).
package leviathan

import (
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levcases"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levclient"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	refleviathan "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	"github.com/lobbybench/lobbybench/refserver"
)

func init() {
	g := levcases.Group()
	protocols.Register(protocols.Descriptor{
		Scenario:    levclient.Spec,
		Catalog:     levscript.Catalog,
		Client:      levclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{refleviathan.Part()},
	})
}
