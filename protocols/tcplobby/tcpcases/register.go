// Package tcpcases holds the conformance cases of the length-prefixed TCP
// lobby protocol (tcp-lobby.md), one file per section, and their shared
// fixtures. Group is the conformance half of the protocol's descriptor
// (protocols/tcplobby); the runner, T and the verdict helpers are package
// conformance's. The game a case starts is played on a game instance of the
// UDP lobby's handshake (tcp_6_flow.go), the one place that names it.
package tcpcases

import "github.com/lobbybench/lobbybench/conformance"

// cases are the protocol's cases, as their files' init add them; Group
// hands them to the suite.
var cases []*conformance.Case

// addCase adds c to the protocol's cases.
func addCase(c *conformance.Case) { cases = append(cases, c) }
