// Package all links every protocol lobbybench speaks. Importing it (blank)
// registers each protocol's descriptor; the binary and every test that
// needs the protocols import it, and nothing else lists them.
package all

import (
	_ "github.com/lobbybench/lobbybench/protocols/leviathan"
	_ "github.com/lobbybench/lobbybench/protocols/tcplobby"
	_ "github.com/lobbybench/lobbybench/protocols/udplobby"
)

// Tags are the build tags under which this build links protocols beyond
// the ones above ("lobbybench_toy": toy.go), so that a test that builds
// lobbybench builds it with the protocols its own binary has.
var Tags []string
