// Package udplobby registers the UDP lobby protocol (udp-lobby.md) with
// its game-instance handshake: its descriptor is assembled here, once,
// from the protocol's own packages (protocols/udplobby/udpwire, protocols/udplobby/udpclient,
// protocols/udplobby/udpcases, protocols/udplobby/udpserver).
package udplobby

import (
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpcases"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpscript"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/refserver"
)

func init() {
	g := udpcases.Group()
	protocols.Register(protocols.Descriptor{
		Scenario:    udpclient.Spec,
		Catalog:     udpscript.Catalog,
		Client:      udpclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{refudp.Part()},
	})
}
