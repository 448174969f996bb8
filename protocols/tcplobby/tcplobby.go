// Package tcplobby registers the length-prefixed TCP lobby protocol
// (tcp-lobby.md): its descriptor is assembled here, once, from the
// protocol's own packages (protocols/tcplobby/tcpwire, protocols/tcplobby/tcpclient,
// protocols/tcplobby/tcpcases, protocols/tcplobby/tcpserver). Its server part needs a pool
// of game instances, which another part provides (the UDP lobby's).
package tcplobby

import (
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpcases"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpclient"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpscript"
	reftcp "github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/refserver"
)

func init() {
	g := tcpcases.Group()
	protocols.Register(protocols.Descriptor{
		Scenario:    tcpclient.Spec,
		Catalog:     tcpscript.Catalog,
		Client:      tcpclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{reftcp.Part()},
	})
}
