package leviathan

import (
	"net"
	"syscall"
)

// setBuffers sets SO_RCVBUF and SO_SNDBUF to n bytes, trying the *FORCE
// variants first (they bypass rmem_max/wmem_max when running as root).
func setBuffers(c *net.UDPConn, n int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var rcvForced, sndForced bool
	if err := rc.Control(func(fd uintptr) {
		rcvForced = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n) == nil
		sndForced = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUFFORCE, n) == nil
	}); err != nil {
		return err
	}
	if !rcvForced {
		if err := c.SetReadBuffer(n); err != nil {
			return err
		}
	}
	if !sndForced {
		return c.SetWriteBuffer(n)
	}
	return nil
}
