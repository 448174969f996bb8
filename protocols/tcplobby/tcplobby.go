// Package tcplobby registers the length-prefixed TCP lobby protocol
// (tcp-lobby.md): its descriptor is assembled here, once, from the
// protocol's own packages (wire/tcplobby, simclient/tcpclient,
// conformance/tcpcases, refserver/tcp). Its server part needs a pool
// of game instances, which another part provides (the UDP lobby's).
package tcplobby

import (
	"github.com/lobbybench/lobbybench/conformance/tcpcases"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/refserver"
	reftcp "github.com/lobbybench/lobbybench/refserver/tcp"
	"github.com/lobbybench/lobbybench/simclient/tcpclient"
)

func init() {
	g := tcpcases.Group()
	protocols.Register(protocols.Descriptor{
		Scenario:    tcpclient.Spec,
		Client:      tcpclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{reftcp.Part()},
	})
}
