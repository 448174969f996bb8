// Package udpcases holds the conformance cases of the UDP lobby protocol
// (udp-lobby.md) and of its game-instance handshake (case group "inst"),
// one file per section, and their shared fixtures. Group is the
// conformance half of the protocol's descriptor (protocols/udplobby); the
// runner, T and the verdict helpers are package conformance's.
package udpcases

import "github.com/lobbybench/lobbybench/conformance"

// cases are the protocol's cases, as their files' init add them; Group
// hands them to the suite.
var cases []*conformance.Case

// addCase adds c to the protocol's cases.
func addCase(c *conformance.Case) { cases = append(cases, c) }
