package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
)

// Default pacing per source address. Servers are asked to rate-limit per IP
// (udp-lobby.md §14); the suite must give the same verdicts against one that
// allows ~100 requests/s per IP with a small burst, so it never sends more
// than this from one address (the flood of the rate-limit group excepted).
const (
	DefaultSourceRate  = 40 // datagrams or frames per second per address
	DefaultSourceBurst = 10
)

// SourcePool hands out local source addresses for requests and paces the
// sends from each with a token bucket. The last two addresses of a pool of
// four or more are reserved (Reserved) for the rate-limit group's flood and
// its "second source", and are not paced.
type SourcePool struct {
	mu       sync.Mutex
	addrs    []netip.Addr
	reserved []netip.Addr
	buckets  map[netip.Addr]*bucket
	next     int
	rate     float64
	burst    float64
	now      func() time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewSourcePool returns a pool over addrs (at least one; the unspecified
// address lets the system choose) pacing each to rate sends per second with
// the given burst.
func NewSourcePool(addrs []netip.Addr, rate, burst float64) (*SourcePool, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("conformance: empty source address pool")
	}
	if rate <= 0 || burst < 1 {
		return nil, fmt.Errorf("conformance: source pacing must be positive")
	}
	p := &SourcePool{rate: rate, burst: burst, buckets: map[netip.Addr]*bucket{}, now: time.Now}
	general := addrs
	if len(addrs) >= 4 {
		general = addrs[:len(addrs)-2]
		p.reserved = append(p.reserved, addrs[len(addrs)-2:]...)
	}
	t := p.now()
	for _, a := range general {
		if _, dup := p.buckets[a]; dup {
			continue
		}
		p.addrs = append(p.addrs, a)
		p.buckets[a] = &bucket{tokens: burst, last: t}
	}
	return p, nil
}

// Rate is the sends per second each paced address is held to.
func (p *SourcePool) Rate() float64 { return p.rate }

// Addrs returns the paced addresses.
func (p *SourcePool) Addrs() []netip.Addr { return append([]netip.Addr(nil), p.addrs...) }

// Reserved returns the i-th reserved (unpaced) address, if the pool has one.
func (p *SourcePool) Reserved(i int) (netip.Addr, bool) {
	if i < len(p.reserved) {
		return p.reserved[i], true
	}
	return netip.Addr{}, false
}

// Acquire picks the next address in round-robin order that has a send
// token, takes the token and returns the address; it waits when every
// address is out of tokens. Addresses after the one returned last are
// preferred, so consecutive requests (and a retry after silence) come from
// different addresses when the pool has several.
func (p *SourcePool) Acquire(ctx context.Context) (netip.Addr, error) {
	for {
		p.mu.Lock()
		now := p.now()
		wait := time.Duration(-1)
		for i := 0; i < len(p.addrs); i++ {
			k := (p.next + i) % len(p.addrs)
			a := p.addrs[k]
			w := p.buckets[a].take(now, p.rate, p.burst)
			if w == 0 {
				p.next = k + 1
				p.mu.Unlock()
				return a, nil
			}
			if wait < 0 || w < wait {
				wait = w
			}
		}
		p.mu.Unlock()
		if err := sleepCtx(ctx, wait); err != nil {
			return netip.Addr{}, err
		}
	}
}

// Take takes one send token of address a, waiting for it if needed. An
// address outside the paced pool (a reserved one) is not paced.
func (p *SourcePool) Take(ctx context.Context, a netip.Addr) error {
	for {
		p.mu.Lock()
		b := p.buckets[a]
		if b == nil {
			p.mu.Unlock()
			return nil
		}
		w := b.take(p.now(), p.rate, p.burst)
		p.mu.Unlock()
		if w == 0 {
			return nil
		}
		if err := sleepCtx(ctx, w); err != nil {
			return err
		}
	}
}

// take refills the bucket and takes a token, returning 0, or returns how
// long until a token is available.
func (b *bucket) take(now time.Time, rate, burst float64) time.Duration {
	b.tokens += now.Sub(b.last).Seconds() * rate
	if b.tokens > burst {
		b.tokens = burst
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / rate * float64(time.Second))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		d = time.Millisecond
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DefaultSources returns the default pool for target: the
// netrange.ConformSources loopback addresses for an IPv4 loopback target,
// the unspecified address of the target's family (one source, chosen by
// the system) otherwise.
func DefaultSources(target netip.Addr) []netip.Addr {
	if out := netrange.DefaultSources(target, netrange.ConformSources); out != nil {
		return out
	}
	if target.Is6() && !target.Is4In6() {
		return []netip.Addr{netip.IPv6Unspecified()}
	}
	return []netip.Addr{netip.IPv4Unspecified()}
}
