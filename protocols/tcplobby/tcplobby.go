// Package tcplobby registers the length-prefixed TCP lobby (tcp-lobby.md): its descriptor is assembled here from
// the protocol's own packages, once.
package tcplobby

import (
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/simclient/tcpclient"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

func init() {
	g := conformance.TCPLobbyGroup()
	protocols.Register(protocols.Descriptor{
		Scenario:    tcpclient.Spec,
		Client:      tcpclient.Client,
		Conformance: &g,
		// The TCP lobby hands its games to the UDP lobby's instances.
		Server: []string{tcplobby.ProtocolName, udplobby.ProtocolName},
	})
}
