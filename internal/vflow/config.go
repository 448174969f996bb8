package vflow

import (
	"fmt"
	"net/netip"
	"runtime"

	"github.com/lobbybench/lobbybench/internal/netrange"
)

// MaxQueued is how many received datagrams a Conn holds unread; more are
// dropped (Hub.Dropped), as a full socket buffer drops them.
const MaxQueued = 256

// Defaults of Config: a block of 127.0.0.0/8 nothing else of lobbybench
// uses, every unprivileged port, an 8 MiB receive buffer. A Config without
// Addrs takes the first of DefaultBlocks /16 blocks from DefaultAddrs on
// (127.77.0.0/16, 127.78.0.0/16, …) that no other vflow user holds (Open).
var (
	DefaultAddrs = netip.MustParsePrefix("127.77.0.0/16")
	DefaultPorts = netrange.PortRange{First: 1024, Last: 65535}
)

// DefaultBlocks is how many /16 blocks a Config without Addrs may try.
const DefaultBlocks = 48

// defaultBlock is the i-th /16 block from DefaultAddrs.
func defaultBlock(i int) netip.Prefix {
	a := DefaultAddrs.Addr().As4()
	a[1] += byte(i)
	return netip.PrefixFrom(netip.AddrFrom4(a), 16)
}

// DefaultReadBuffer is the steered socket's receive buffer: every flow's
// replies queue on that one socket.
const DefaultReadBuffer = 8 << 20

// loopback is where flows' addresses may lie for now: the steering would
// take replies meant for any local address in the range, and a range on a
// real interface also needs routes that bring replies back to this host.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// Config is the range of a vflow user's flows. Two users on one machine
// must take disjoint ranges (package doc).
type Config struct {
	Addrs      netip.Prefix       // the flows' addresses; zero: a free default block (DefaultAddrs on)
	Ports      netrange.PortRange // the flows' ports; zero: DefaultPorts
	ReadBuffer int                // each steered socket's receive buffer in bytes; 0: DefaultReadBuffer
	// Sockets is how many steered sockets share the flows (each flow's
	// replies go to one of them, by its address and port), each read by a
	// goroutine of its own (Hub): the replies are shared out over cores.
	// 0: DefaultSockets, at most the range's ports.
	Sockets int
}

// DefaultHubFlows is how many flows a Hub holds at once unless told: 2 MiB
// of slots, more clients than one process runs.
const DefaultHubFlows = 1 << 18

// HubDescriptors is how many file descriptors a Hub holds, however many
// flows it carries: its steered sockets (DefaultSockets), the SOCKMAP, the
// sk_lookup program, the program's link and the raw socket.
func HubDescriptors() int { return DefaultSockets() + 4 }

// MaxSockets bounds Config.Sockets.
const MaxSockets = 64

// DefaultSockets is one steered socket for every two of the Go runtime's
// processors (GOMAXPROCS), at least one: a socket's reader shares its core
// with the clients its replies wake.
func DefaultSockets() int { return min(max(runtime.GOMAXPROCS(0)/2, 1), MaxSockets) }

func (c Config) withDefaults() Config {
	if !c.Addrs.IsValid() {
		c.Addrs = DefaultAddrs
	}
	if c.Ports.IsZero() {
		c.Ports = DefaultPorts
	}
	if c.ReadBuffer == 0 {
		c.ReadBuffer = DefaultReadBuffer
	}
	if c.Sockets == 0 { // no more than the range has ports to bind them on
		c.Sockets = max(min(DefaultSockets(), c.Ports.Size()), 1)
	}
	return c
}

// check refuses a range that would steer traffic meant for others.
func (c Config) check() error {
	a := c.Addrs
	switch {
	case !a.Addr().Is4():
		return fmt.Errorf("vflow: address range %s is not IPv4", a)
	case a != a.Masked():
		return fmt.Errorf("vflow: address range %s has host bits set (did you mean %s?)", a, a.Masked())
	case a.Bits() < 9 || !loopback.Contains(a.Addr()):
		return fmt.Errorf("vflow: address range %s is not a block inside 127.0.0.0/8 smaller than it", a)
	case a.Contains(netip.AddrFrom4([4]byte{127, 0, 0, 1})):
		return fmt.Errorf("vflow: address range %s holds 127.0.0.1, which other programs use", a)
	case c.Ports.First == 0 || c.Ports.First > c.Ports.Last:
		return fmt.Errorf("vflow: port range %s is empty or starts at 0", c.Ports)
	case c.ReadBuffer < 0:
		return fmt.Errorf("vflow: receive buffer %d bytes is negative", c.ReadBuffer)
	case c.Sockets < 1 || c.Sockets > MaxSockets || c.Sockets > c.Ports.Size():
		return fmt.Errorf("vflow: %d steered sockets, want 1 to %d and no more than the range's %d ports", c.Sockets, MaxSockets, c.Ports.Size())
	}
	return nil
}

// Contains reports whether ap is an address:port of the range: a flow's.
func (c Config) Contains(ap netip.AddrPort) bool {
	return c.Addrs.Contains(ap.Addr()) && c.Ports.Contains(ap.Port())
}

// CanReach says whether flows can talk with a server at a: only one on an
// IPv4 loopback address can, the flows' own addresses lying in
// 127.0.0.0/8 (a datagram from such a source does not leave the machine,
// nor could a reply find its way back to it). Sent elsewhere, every
// request would go unanswered, and the run would blame the server.
func CanReach(a netip.Addr) error {
	if a = a.Unmap(); loopback.Contains(a) {
		return nil
	}
	return fmt.Errorf("the target %s is not on this machine's loopback: a virtual flow's address lies in %s, which only a server on %s can answer", a, loopback, loopback)
}
