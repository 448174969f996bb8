package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is this process's share of a run split over Count machines, as k6's
// execution segments: shard Index (0-based) of Count. The zero value and
// {0, 1} both mean "the whole run".
//
// The split is deterministic and needs no coordinator. Open model: every
// shard walks the same global arrival schedule and the same flow picks;
// arrival k runs on the shard that owns its group (session s of a flow with
// group size G is in group s/G; group g belongs to shard g mod Count), so
// groups never straddle machines and the shards together start exactly the
// arrivals of an unsharded run, each under its global client id. Closed
// model: client slot j (0 ≤ j < max_clients) belongs to shard j mod Count;
// when the scenario wants T clients, slots 0..T-1 run, so the shards' counts
// add up to T at every instant.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" with 0 ≤ i < n (n ≥ 1).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q is not i/n (e.g. 0/4)", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q is not i/n (e.g. 0/4)", s)
	}
	if n < 1 || n > 1_000_000 {
		return Shard{}, fmt.Errorf("%q: n must be 1-1000000", s)
	}
	if i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: i must be 0-%d (shards are numbered from 0)", s, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// String renders the shard as "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.count()) }

// Set implements flag.Value.
func (s *Shard) Set(v string) error {
	p, err := ParseShard(v)
	if err == nil {
		*s = p
	}
	return err
}

func (s Shard) count() int {
	if s.Count < 1 {
		return 1
	}
	return s.Count
}

// Whole reports whether the shard is the entire run.
func (s Shard) Whole() bool { return s.count() == 1 }

// Owns reports whether unit u (an open-model group number, or a closed-model
// client slot) belongs to this shard.
func (s Shard) Owns(u int) bool { return u%s.count() == s.Index }

// Part returns how many of the units 0..total-1 this shard owns: its share
// of a client count. The parts of all shards sum to total.
func (s Shard) Part(total int) int {
	n := s.count()
	if total <= s.Index {
		return 0
	}
	return (total - s.Index + n - 1) / n
}
