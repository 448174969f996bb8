//go:build !linux

package rxbuf

import (
	"net/netip"
	"syscall"
)

// Scratch is one read's room. Off Linux it is only the datagram's: reads
// go through the net package, into Bytes.
type Scratch struct {
	b [Size]byte
}

func newScratch() *Scratch { return new(Scratch) }

// Supported reports whether Recv works here: not off Linux.
const Supported = false

// Recv is not available off Linux (Supported is false).
func (s *Scratch) Recv(uintptr) (int, syscall.Errno) { return 0, syscall.ENOSYS }

// Source is not available off Linux (Supported is false).
func (s *Scratch) Source() netip.AddrPort { return netip.AddrPort{} }
