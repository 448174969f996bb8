// Package target parses and resolves the host:port a command is aimed at
// (`run --target`, a scenario's target:, `conform --target`), so that every
// command accepts the same forms and rejects the others with the same
// message.
package target

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// Check reports whether s is host:port with a non-empty host and a numeric
// port 1-65535. It does no DNS lookup. The error does not name the flag or
// key: callers prefix it ("--target: …", "file:line: target: …").
func Check(s string) error {
	_, _, err := split(s)
	return err
}

func split(s string) (host string, port uint16, err error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port (want e.g. 127.0.0.1:8080)", s)
	}
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host (want e.g. 127.0.0.1:8080)", s)
	}
	pn, err := strconv.Atoi(p)
	if err != nil || pn < 1 || pn > 65535 {
		return "", 0, fmt.Errorf("%q: port %q is not 1-65535", s, p)
	}
	return host, uint16(pn), nil
}

// Resolve checks s (Check) and turns it into an address: an IP literal as
// is (IPv4-mapped IPv6 unmapped), a name by one DNS lookup bounded by ctx
// and 5 s, preferring IPv4 (the reference server listens there).
func Resolve(ctx context.Context, s string) (netip.AddrPort, error) {
	host, port, err := split(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a.Unmap(), port), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("cannot resolve %q: %v", host, err)
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return netip.AddrPortFrom(ip.Unmap(), port), nil
		}
	}
	return netip.AddrPortFrom(ips[0], port), nil
}
