// Package udplobby registers the UDP lobby protocol (udp-lobby.md) with
// its game-instance handshake: its descriptor is assembled here, once,
// from the protocol's own packages (protocols/udplobby/udpwire, protocols/udplobby/udpclient,
// protocols/udplobby/udpcases, protocols/udplobby/udpserver).
package udplobby

import (
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpcases"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpscript"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

func init() {
	g := udpcases.Group()
	g.CaseFile, g.ScriptOptions = caseFileHeader, scriptHeader
	spec := udpclient.Spec
	spec.ProbeCheck = udpscript.ProbeCheck // udpclient cannot import the catalog that imports it
	protocols.Register(protocols.Descriptor{
		Scenario:    spec,
		Catalog:     udpscript.Catalog,
		Client:      udpclient.Client,
		Conformance: &g,
		Server:      []*refserver.Part{refudp.Part()},
	})
}

// caseFileHeader settles a case file's header_profile with conform's
// --header (udpcases.FileHeader): the conformance half of the protocol
// cannot read the file's options, which are the client's.
func caseFileHeader(opts any, cf *scenario.CaseFile) (any, error) {
	line, given := cf.KeyLines["header_profile"]
	if !given {
		return opts, nil
	}
	o, _ := cf.Options.(udpclient.Options)
	return udpcases.FileHeader(opts, o.HeaderProfile, fmt.Sprintf("%s:%d", cf.File, line))
}

// scriptHeader makes a user case's scripts send in the run's header
// profile, the one its built-in cases use (settled under --header auto).
func scriptHeader(env *conformance.Env, file scenario.Options) scenario.Options {
	o, _ := file.(udpclient.Options)
	o.HeaderProfile = udpcases.RunHeader(env)
	return o
}
