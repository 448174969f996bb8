package conformance

import (
	"flag"
	"io"
)

// The protocols the tests run the suite against, by the names their
// descriptors register them under: the suite's own code names none.
const (
	protoUDP       = "udp-lobby"
	protoTCP       = "tcp-lobby"
	protoLeviathan = "leviathan"
)

// udpLobbyOptions are udp-lobby's Config.Options for conform's --header
// header and, unless pr is zero, --instance-ports pr, made by the
// protocol's own flags (Group.Flags) as the command line makes them.
func udpLobbyOptions(header string, pr PortRange) any {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	build := AddProtocolFlags(fs)
	args := []string{"-header", header}
	if pr != (PortRange{}) {
		args = append(args, "-instance-ports", pr.String())
	}
	if err := fs.Parse(args); err != nil {
		panic("udp-lobby options: " + err.Error())
	}
	opts, err := build(protoUDP)
	if err != nil {
		panic("udp-lobby options: " + err.Error())
	}
	return opts
}
