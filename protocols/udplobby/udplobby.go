// Package udplobby registers the UDP lobby (udp-lobby.md) and its game-instance handshake: its descriptor is assembled here from
// the protocol's own packages, once.
package udplobby

import (
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/simclient/udpclient"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

func init() {
	g := conformance.UDPLobbyGroup()
	protocols.Register(protocols.Descriptor{
		Scenario:    udpclient.Spec,
		Client:      udpclient.Client,
		Conformance: &g,
		Server:      []string{udplobby.ProtocolName},
	})
}
