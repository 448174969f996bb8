//go:build !linux

package leviathan

import "net"

// setBuffers sets the socket's receive and send buffers to n bytes.
func setBuffers(c *net.UDPConn, n int) error {
	if err := c.SetReadBuffer(n); err != nil {
		return err
	}
	return c.SetWriteBuffer(n)
}
