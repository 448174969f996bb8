// Package levcases holds the conformance cases of the Leviathan
// reliable-UDP protocol (leviathan.md), one file per section, and their
// shared fixtures. Group is the conformance half of the protocol's
// descriptor (protocols/leviathan); the runner, T and the verdict helpers
// are package conformance's.
package levcases

import "github.com/lobbybench/lobbybench/conformance"

// cases are the protocol's cases, as their files' init add them; Group
// hands them to the suite.
var cases []*conformance.Case

// addCase adds c to the protocol's cases.
func addCase(c *conformance.Case) { cases = append(cases, c) }
