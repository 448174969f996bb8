package target

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// AllowAny is the --allow-redirect value that lets a server send
// lobbybench to any host.
const AllowAny = "any"

// Allow is what --allow-redirect permits besides the target's own host:
// any host, or the listed ones (resolved).
type Allow struct {
	Any   bool
	Addrs []netip.Addr
}

// ParseAllow reads --allow-redirect's value: "" (the target's host
// only), "any", or a comma-separated list of hosts (IP addresses or
// names; a name stands for every address it resolves to, looked up once,
// bounded by ctx and 5 s). The error does not name the flag.
func ParseAllow(ctx context.Context, s string) (Allow, error) {
	var a Allow
	if strings.TrimSpace(s) == "" {
		return a, nil
	}
	if strings.TrimSpace(s) == AllowAny {
		a.Any = true
		return a, nil
	}
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return Allow{}, fmt.Errorf("%q has an empty host (want hosts separated by commas, or %q)", s, AllowAny)
		}
		if h == AllowAny {
			return Allow{}, fmt.Errorf("%q: %q stands alone, not in a list of hosts", s, AllowAny)
		}
		ips, err := lookup(ctx, h)
		if err != nil {
			return Allow{}, err
		}
		a.Addrs = append(a.Addrs, ips...)
	}
	return a, nil
}

// HostAddrs returns every address of hostport's host: an IP literal
// itself, a name every address it resolves to (bounded by ctx and 5 s).
func HostAddrs(ctx context.Context, hostport string) ([]netip.Addr, error) {
	host, _, err := split(hostport)
	if err != nil {
		return nil, err
	}
	return lookup(ctx, host)
}

func lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if strings.ContainsAny(host, ":[]/ ") {
		return nil, fmt.Errorf("%q is neither an IP address nor a host name (no port)", host)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("cannot resolve %q: %v", host, err)
	}
	out := make([]netip.Addr, len(ips))
	for i, ip := range ips {
		out[i] = ip.Unmap()
	}
	return out, nil
}

// Policy decides where lobbybench may send when a server names an address
// for it to go on to (a tcp-lobby GAME_START's ServerIP): a hostile lobby
// must not turn every copy of lobbybench that tests it into traffic at a
// victim. An address is followed when it is the target's host (its IP, or
// one of the IPs its name resolves to; with a loopback target any loopback
// address, the same machine), or when --allow-redirect allows it. The
// unspecified address (0.0.0.0, ::) means the target's host. Port 0, a
// multicast and the limited broadcast address are never followed.
type Policy struct {
	target netip.AddrPort
	hosts  []netip.Addr
	allow  Allow
}

// NewPolicy is the policy for a target resolved to target, whose host also
// has the addresses hosts (HostAddrs; nil: target's address alone).
func NewPolicy(target netip.AddrPort, hosts []netip.Addr, allow Allow) *Policy {
	return &Policy{target: target, hosts: append([]netip.Addr{target.Addr().Unmap()}, hosts...), allow: allow}
}

// RuleRedirect names the rule a refused redirect breaks, in messages.
const RuleRedirect = "lobbybench sends only to the target's host unless --allow-redirect names the host (or is \"any\")"

// RedirectError is a server-named address Policy.Follow refuses.
type RedirectError struct {
	Dst, Target netip.AddrPort
	Why         string // what the address is: "port 0", "a multicast address", "not the target's host"
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server named %v (%s; the target is %v): not followed: %s", e.Dst, e.Why, e.Target, RuleRedirect)
}

// Follow returns the address to send to when the server named dst, or a
// *RedirectError naming dst and the rule.
func (p *Policy) Follow(dst netip.AddrPort) (netip.AddrPort, error) {
	a := dst.Addr().Unmap()
	refuse := func(why string) (netip.AddrPort, error) {
		return netip.AddrPort{}, &RedirectError{Dst: dst, Target: p.target, Why: why}
	}
	switch {
	case dst.Port() == 0:
		return refuse("port 0")
	case !a.IsValid():
		return refuse("no address")
	case a.IsUnspecified():
		return netip.AddrPortFrom(p.target.Addr().Unmap(), dst.Port()), nil
	case a.IsMulticast():
		return refuse("a multicast address")
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return refuse("the broadcast address")
	case slices.Contains(p.hosts, a), a.IsLoopback() && p.target.Addr().Unmap().IsLoopback():
		return netip.AddrPortFrom(a, dst.Port()), nil
	case p.allow.Any, slices.Contains(p.allow.Addrs, a):
		return netip.AddrPortFrom(a, dst.Port()), nil
	}
	return refuse("not the target's host")
}
