package conformance

import (
	"net"
	"syscall"
)

// setReadBuffer sets SO_RCVBUF to n bytes, trying SO_RCVBUFFORCE first (it
// bypasses rmem_max when running as root), so a flood's replies are not
// lost in the suite's own socket and counted as the server's drops.
func setReadBuffer(c *net.UDPConn, n int) {
	if rc, err := c.SyscallConn(); err == nil {
		forced := false
		rc.Control(func(fd uintptr) {
			forced = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n) == nil
		})
		if forced {
			return
		}
	}
	c.SetReadBuffer(n)
}
