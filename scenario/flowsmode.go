package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// FlowsMode is how a run's simulated clients meet the network: the
// scenario's flows_mode, or `run --flows`.
type FlowsMode string

const (
	// FlowsSockets gives every client a UDP socket of its own (the
	// default; the only mode of a TCP protocol).
	FlowsSockets FlowsMode = "sockets"
	// FlowsVirtual gives every client a virtual flow (internal/vflow): an
	// address:port of a steered loopback range, no socket of its own.
	FlowsVirtual FlowsMode = "virtual"
	// FlowsAuto is FlowsVirtual where virtual flows are available (the
	// privileges, the kernel) and the protocol takes them, FlowsSockets
	// otherwise.
	FlowsAuto FlowsMode = "auto"
)

// FlowsModes are the values flows_mode and --flows take.
var FlowsModes = []string{string(FlowsSockets), string(FlowsVirtual), string(FlowsAuto)}

// ParseFlowsMode reads a flows mode; "" is FlowsSockets.
func ParseFlowsMode(s string) (FlowsMode, error) {
	if s == "" {
		return FlowsSockets, nil
	}
	if !slices.Contains(FlowsModes, s) {
		return "", fmt.Errorf("unknown value %q (want one of %s)", s, strings.Join(FlowsModes, ", "))
	}
	return FlowsMode(s), nil
}

// VirtualFlows says why protocol p's clients cannot run on virtual flows
// (nil: they can).
func (p ProtocolName) VirtualFlows() error {
	s, _ := LookupProtocol(p)
	switch {
	case s.VirtualFlows:
		return nil
	case s.Transport != "udp":
		return fmt.Errorf("virtual flows are UDP only, and %s runs over TCP: use sockets", p)
	}
	return fmt.Errorf("virtual flows are not yet wired for %s clients (only %s): use sockets", p, strings.Join(virtualProtocols(), ", "))
}

// virtualProtocols names the protocols whose clients take virtual flows.
func virtualProtocols() []string {
	var out []string
	for _, p := range Protocols() {
		if p.spec().VirtualFlows {
			out = append(out, string(p))
		}
	}
	return out
}

// checkFlowsMode refuses virtual flows for a protocol that cannot take them;
// sockets and auto suit every protocol.
func (p ProtocolName) checkFlowsMode(m FlowsMode) error {
	if m != FlowsVirtual || p == "" {
		return nil
	}
	return p.VirtualFlows()
}
