//go:build !linux

package conformance

import "net"

// setReadBuffer sets SO_RCVBUF to n bytes (capped by the system).
func setReadBuffer(c *net.UDPConn, n int) { c.SetReadBuffer(n) }
