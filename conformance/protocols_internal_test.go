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
// header and, unless pr is zero, --instance-ports pr.
func udpLobbyOptions(header string, pr PortRange) any {
	args := []string{"-header", header}
	if pr != (PortRange{}) {
		args = append(args, "-instance-ports", pr.String())
	}
	return udpOptionsArgs(args...)
}

// udpOptionsArgs are udp-lobby's Config.Options for conform's arguments
// args, made by the protocol's own flags (Group.Flags) as the command line
// makes them.
func udpOptionsArgs(args ...string) any {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	build := AddProtocolFlags(fs)
	if err := fs.Parse(args); err != nil {
		panic("udp-lobby options: " + err.Error())
	}
	opts, err := build(protoUDP)
	if err != nil {
		panic("udp-lobby options: " + err.Error())
	}
	return opts
}
