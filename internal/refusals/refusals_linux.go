// Package refusals makes an unconnected UDP socket hear ICMP port
// unreachable, so that "nothing listens" is told apart from silence: the
// one copy of that socket option for the load engine's and the
// conformance suite's reachability checks.
package refusals

import (
	"net"

	"golang.org/x/sys/unix"
)

// Report makes an ICMP port unreachable answering c's datagrams
// come back as ECONNREFUSED from its next read, as it does on a connected
// socket (IP_RECVERR, IPV6_RECVERR): nothing listening is told apart from
// silence. Best effort: without it a refusal reads as silence.
func Report(c *net.UDPConn) {
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVERR, 1)
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
	})
}
