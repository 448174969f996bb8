//go:build !linux

package refusals

import "net"

// Report does nothing off Linux: an unconnected socket is not told
// of ICMP port unreachable there, so a refusal reads as silence.
func Report(*net.UDPConn) {}
