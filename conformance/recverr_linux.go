package conformance

import (
	"net"

	"golang.org/x/sys/unix"
)

// reportRefusals makes an ICMP port unreachable answering c's datagrams
// come back as ECONNREFUSED from its next read, as on a connected socket
// (IP_RECVERR, IPV6_RECVERR): the reachability check tells nothing
// listening apart from silence at once. Best effort: without it a refusal
// reads as silence.
func reportRefusals(c *net.UDPConn) {
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVERR, 1)
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
	})
}
