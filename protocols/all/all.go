// Package all links every protocol lobbybench speaks. Importing it (blank)
// registers each protocol's descriptor; the binary and every test that
// needs the protocols import it, and nothing else lists them.
package all

import (
	_ "github.com/lobbybench/lobbybench/protocols/leviathan"
	_ "github.com/lobbybench/lobbybench/protocols/tcplobby"
	_ "github.com/lobbybench/lobbybench/protocols/udplobby"
)
