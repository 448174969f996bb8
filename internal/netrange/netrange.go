// Package netrange parses the port and address ranges that commands and
// scenarios accept (`conform --instance-ports`/`--source-addrs`, a
// scenario's instance_ports/source_addrs) and builds the default source
// address pool, so every caller accepts the same forms, rejects the others
// with the same messages and gets the same default.
package netrange

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// PortRange is an inclusive range of ports; the zero value means "not
// given".
type PortRange struct{ First, Last uint16 }

// IsZero reports whether the range was not given.
func (r PortRange) IsZero() bool { return r.First == 0 && r.Last == 0 }

// Contains reports whether port lies in the range.
func (r PortRange) Contains(port uint16) bool { return port >= r.First && port <= r.Last }

// Size returns the number of ports in the range (0 for the zero range).
func (r PortRange) Size() int {
	if r.IsZero() {
		return 0
	}
	return int(r.Last) - int(r.First) + 1
}

// String returns "FIRST-LAST".
func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// ParsePorts parses "8081-8180" or a single port "8081" (spaces around
// either number allowed); both ends are 1-65535, the first not above the
// last. The error does not name the flag or key: callers prefix it.
func ParsePorts(s string) (PortRange, error) {
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if !isRange {
		b = a
	}
	lo, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 16)
	hi, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 16)
	if err1 != nil || err2 != nil || lo == 0 || hi == 0 {
		return PortRange{}, fmt.Errorf("%q is not a port range (want e.g. 8081-8180)", s)
	}
	if lo > hi {
		return PortRange{}, fmt.Errorf("%q: first port is above the last", s)
	}
	return PortRange{First: uint16(lo), Last: uint16(hi)}, nil
}

// MaxAddrs bounds a parsed address list, so a typo such as
// 10.0.0.0-10.255.255.255 is an error, not 16M addresses.
const MaxAddrs = 1 << 16

// ParseAddrs parses a comma-separated list of addresses and inclusive
// ranges "127.0.0.2-127.0.0.254" (both ends of one family, any span up to
// MaxAddrs in all). IPv4-mapped IPv6 addresses are unmapped; an address
// given twice is kept once, in the place it first appears. An empty list is
// an error. The error does not name the flag or key: callers prefix it.
func ParseAddrs(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		addrs, err := parseRange(part, MaxAddrs-len(out))
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no address in %q", s)
	}
	return out, nil
}

// parseRange parses "127.0.0.2" or "127.0.0.2-127.0.0.254" into at most
// limit addresses.
func parseRange(s string, limit int) ([]netip.Addr, error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err := netip.ParseAddr(strings.TrimSpace(a))
	if err != nil {
		return nil, fmt.Errorf("%q is not an IP address", strings.TrimSpace(a))
	}
	lo = lo.Unmap()
	if !isRange {
		if limit < 1 {
			return nil, fmt.Errorf("more than %d addresses", MaxAddrs)
		}
		return []netip.Addr{lo}, nil
	}
	hi, err := netip.ParseAddr(strings.TrimSpace(b))
	if err != nil {
		return nil, fmt.Errorf("%q is not an IP address", strings.TrimSpace(b))
	}
	hi = hi.Unmap()
	if lo.Is4() != hi.Is4() {
		return nil, fmt.Errorf("range %q mixes IPv4 and IPv6", s)
	}
	if hi.Less(lo) {
		return nil, fmt.Errorf("range %q: first address is above the last", s)
	}
	var out []netip.Addr
	for x := lo; ; x = x.Next() {
		if len(out) >= limit {
			return nil, fmt.Errorf("range %q makes more than %d addresses", s, MaxAddrs)
		}
		out = append(out, x)
		if x == hi {
			break
		}
	}
	return out, nil
}

// The default source pool. A run or the conformance suite aimed at an IPv4
// loopback target, given no source addresses, spreads its sockets over
// 127.0.0.1, 127.0.0.2, … so neither the ~28k ephemeral ports of one
// address nor a server's per-IP limits cap it. How many addresses it needs
// is the caller's: `run` one per ClientsPerSource clients, `conform`
// ConformSources (its per-address pacing). Any other target gets no
// default pool: the system chooses the source address.
const (
	ClientsPerSource   = 100 // clients sharing one default loopback source (run)
	ConformSources     = 32  // default loopback sources of the conformance suite
	MaxLoopbackSources = 254 // 127.0.0.1 … 127.0.0.254
)

// DefaultSources returns the default pool for target: n addresses (clamped
// to 1 … MaxLoopbackSources) from 127.0.0.1 up for an IPv4 loopback
// target, nil (the system chooses) for any other.
func DefaultSources(target netip.Addr, n int) []netip.Addr {
	target = target.Unmap()
	if !target.Is4() || !target.IsLoopback() {
		return nil
	}
	n = min(max(n, 1), MaxLoopbackSources)
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + i)})
	}
	return out
}

// ForClients is how many default loopback sources a run of clients needs:
// one per ClientsPerSource, at least one.
func ForClients(clients int) int {
	return max((clients+ClientsPerSource-1)/ClientsPerSource, 1)
}
