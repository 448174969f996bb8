// Package ratelimit is a set of per-key token buckets whose memory stays
// bounded whatever the number of distinct keys: the reference server keys it
// by client IP (or IP:port) to drop floods from one source without slowing
// the others.
//
// A bucket holds at most Burst tokens and refills at Rate tokens per second;
// each allowed event takes one token. A bucket that has refilled to Burst is
// indistinguishable from a fresh one, so it is forgotten at the next sweep.
// When the table is full of buckets still in use, an arbitrary one is
// evicted: the evicted key gets a fresh (full) bucket, which is the price of
// a memory bound. Size MaxKeys above the number of sources you expect.
package ratelimit

import (
	"fmt"
	"sync"
)

// Limiter is a bounded table of token buckets keyed by K. It is safe for
// concurrent use. A nil *Limiter allows everything.
type Limiter[K comparable] struct {
	mu        sync.Mutex
	perNano   float64 // tokens per nanosecond
	burst     float64
	max       int
	refillNs  int64 // time for an empty bucket to refill completely
	lastSweep int64
	buckets   map[K]bucket
	evicted   uint64
}

type bucket struct {
	tokens float64
	last   int64 // ns
}

// New returns a limiter allowing rate events per second per key with bursts
// of up to burst events, tracking at most maxKeys keys. It returns an error
// for a non-positive rate, burst or maxKeys.
func New[K comparable](rate float64, burst, maxKeys int) (*Limiter[K], error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("ratelimit: rate must be > 0, got %v", rate)
	}
	if burst < 1 {
		return nil, fmt.Errorf("ratelimit: burst must be >= 1, got %d", burst)
	}
	if maxKeys < 1 {
		return nil, fmt.Errorf("ratelimit: max keys must be >= 1, got %d", maxKeys)
	}
	perNano := rate / 1e9
	refill := int64(float64(burst)/perNano) + 1
	return &Limiter[K]{
		perNano:  perNano,
		burst:    float64(burst),
		max:      maxKeys,
		refillNs: refill,
		buckets:  make(map[K]bucket, min(maxKeys, 1024)),
	}, nil
}

// Allow reports whether one more event for key k is allowed at time now and,
// if so, takes a token. now is any monotonic clock in nanoseconds (e.g.
// time.Since(epoch)); it must not go backwards by more than noise.
func (l *Limiter[K]) Allow(k K, now int64) bool { return l.Spend(k, now, 0, 1) }

// Spend adds credit tokens to k's bucket at time now (never above the
// burst), then reports whether it holds cost tokens and, if so, takes
// them: a budget of bytes that grows with what k sends (the reference
// server's bound on what a source gets back) besides the steady refill.
func (l *Limiter[K]) Spend(k K, now int64, credit, cost float64) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	b, ok := l.buckets[k]
	if !ok {
		if len(l.buckets) >= l.max {
			l.makeRoom(now)
		}
		b = bucket{tokens: l.burst, last: now}
	} else if dt := now - b.last; dt > 0 {
		b.tokens += float64(dt) * l.perNano
		if b.tokens > l.burst {
			b.tokens = l.burst
		}
		b.last = now
	}
	b.tokens = min(b.tokens+credit, l.burst)
	allowed := b.tokens >= cost
	if allowed {
		b.tokens -= cost
	}
	l.buckets[k] = b
	l.mu.Unlock()
	return allowed
}

// makeRoom frees at least one slot: it sweeps refilled buckets (at most once
// per refill period, so a table full of busy keys does not cost a full scan
// per new key) and otherwise evicts an arbitrary bucket.
func (l *Limiter[K]) makeRoom(now int64) {
	if now-l.lastSweep >= l.refillNs {
		l.sweepLocked(now)
		if len(l.buckets) < l.max {
			return
		}
	}
	for k := range l.buckets {
		delete(l.buckets, k)
		l.evicted++
		break
	}
}

// Sweep forgets every bucket that has refilled completely by now (it would
// behave exactly like a fresh one) and returns how many it removed. Call it
// periodically to release memory after a burst of distinct keys.
func (l *Limiter[K]) Sweep(now int64) int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sweepLocked(now)
}

func (l *Limiter[K]) sweepLocked(now int64) int {
	l.lastSweep = now
	n := 0
	for k, b := range l.buckets {
		if b.tokens+float64(now-b.last)*l.perNano >= l.burst {
			delete(l.buckets, k)
			n++
		}
	}
	return n
}

// Len returns the number of keys currently tracked.
func (l *Limiter[K]) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// Evicted returns how many busy buckets were evicted because the table was
// full. A non-zero value means MaxKeys is too small for the traffic.
func (l *Limiter[K]) Evicted() uint64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted
}
