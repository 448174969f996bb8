//go:build !linux

package pktinfo

import (
	"net"
	"net/netip"
)

type mode uint8

const modeOff mode = 0

// enable is a no-op where the source address cannot be chosen per datagram
// by this package: replies leave from the kernel's choice.
func enable(*net.UDPConn) (mode, error) { return modeOff, nil }

func parse(mode, []byte) netip.Addr { return netip.Addr{} }

func build(mode, netip.Addr, []byte) []byte { return nil }
