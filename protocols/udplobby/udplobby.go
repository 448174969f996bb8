// Package udplobby registers the UDP lobby protocol (udp-lobby.md) with
// its game-instance handshake: its descriptor is assembled here, once,
// from the protocol's own packages (wire/udplobby, simclient/udpclient,
// conformance/udpcases, refserver/udp).
package udplobby

import (
	"github.com/lobbybench/lobbybench/conformance/udpcases"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/refserver"
	refudp "github.com/lobbybench/lobbybench/refserver/udp"
	"github.com/lobbybench/lobbybench/simclient/udpclient"
)

func init() {
	g := udpcases.Group()
	protocols.Register(protocols.Descriptor{
		Scenario:    udpclient.Spec,
		Client:      udpclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{refudp.Part()},
	})
}
