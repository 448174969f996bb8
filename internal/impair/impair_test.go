package impair

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

const ms = time.Millisecond

var (
	t0   = time.Unix(1000, 0)
	addr = netip.MustParseAddrPort("127.0.0.1:9")
)

// offer is one datagram given to Apply at t0+at under cfg (the Impairer's
// config may change between datagrams to script a sequence).
type offer struct {
	at   time.Duration
	cfg  Config
	data string
}

// play offers the datagrams in order and returns what came out: "x@d" for
// a copy passed at once (d = its offer time) or popped when due (d = its
// due time), popping every copy due before the next offer, then draining.
func play(t *testing.T, offers []offer, maxHeld int) ([]string, Stats) {
	t.Helper()
	im := New(Config{Drop: 1}, rand.New(rand.NewPCG(1, 2)), maxHeld)
	var out []string
	drain := func(until time.Time) {
		for {
			h, ok := im.Pop(until)
			if !ok {
				return
			}
			if h.Addr != addr {
				t.Fatalf("held copy kept address %v, want %v", h.Addr, addr)
			}
			out = append(out, fmt.Sprintf("%s@%d", h.Data, h.Due.Sub(t0)/ms))
			im.Recycle(h.Data)
		}
	}
	for _, o := range offers {
		now := t0.Add(o.at)
		drain(now)
		im.cfg = o.cfg
		if im.Apply(now, addr, []byte(o.data)) {
			out = append(out, fmt.Sprintf("%s@%d", o.data, o.at/ms))
		}
	}
	drain(t0.Add(time.Hour))
	return out, im.Stats()
}

func TestApply(t *testing.T) {
	var (
		none    = Config{}
		drop    = Config{Drop: 1}
		delay5  = Config{Delay: 5 * ms}
		dup     = Config{Duplicate: 1}
		dup5    = Config{Duplicate: 1, Delay: 5 * ms}
		reorder = Config{Reorder: 1}
		reord5  = Config{Reorder: 1, Delay: 5 * ms}
		reodup  = Config{Reorder: 1, Duplicate: 1}
	)
	tests := []struct {
		name    string
		offers  []offer
		maxHeld int
		want    []string
		stats   Stats
	}{
		{
			// A zero-probability datagram passes at once, uncopied.
			name:   "untouched passes",
			offers: []offer{{0, none, "a"}, {1 * ms, none, "b"}},
			want:   []string{"a@0", "b@1"},
			stats:  Stats{Seen: 2},
		},
		{
			name:   "drop",
			offers: []offer{{0, drop, "a"}, {1 * ms, none, "b"}},
			want:   []string{"b@1"},
			stats:  Stats{Seen: 2, Dropped: 1},
		},
		{
			// A delayed datagram is held until its due time, and one
			// offered later but undelayed overtakes it.
			name:   "delay",
			offers: []offer{{0, delay5, "a"}, {1 * ms, none, "b"}},
			want:   []string{"b@1", "a@5"},
			stats:  Stats{Seen: 2, Delayed: 1},
		},
		{
			// An undelayed duplicate passes once and its copy is due now.
			name:   "duplicate",
			offers: []offer{{0, dup, "a"}},
			want:   []string{"a@0", "a@0"},
			stats:  Stats{Seen: 1, Duplicated: 1},
		},
		{
			name:   "delayed duplicate",
			offers: []offer{{0, dup5, "a"}},
			want:   []string{"a@5", "a@5"},
			stats:  Stats{Seen: 1, Duplicated: 1, Delayed: 1},
		},
		{
			// The next datagram passes the one held for reordering, which
			// follows it at once.
			name:   "reorder overtaken",
			offers: []offer{{0, reorder, "a"}, {3 * ms, none, "b"}},
			want:   []string{"b@3", "a@3"},
			stats:  Stats{Seen: 2, Reordered: 1},
		},
		{
			// A delayed successor releases the held one with it, just
			// after it: the order is still swapped.
			name:   "reorder overtaken by delayed",
			offers: []offer{{0, reorder, "a"}, {1 * ms, delay5, "b"}},
			want:   []string{"b@6", "a@6"},
			stats:  Stats{Seen: 2, Delayed: 1, Reordered: 1},
		},
		{
			// With no successor, ReorderHold beyond its delay.
			name:   "reorder expires",
			offers: []offer{{0, reord5, "a"}},
			want:   []string{"a@25"},
			stats:  Stats{Seen: 1, Delayed: 1, Reordered: 1},
		},
		{
			// A successor arriving after the hold expired changes nothing.
			name:   "reorder expired before successor",
			offers: []offer{{0, reorder, "a"}, {30 * ms, none, "b"}},
			want:   []string{"a@20", "b@30"},
			stats:  Stats{Seen: 2, Reordered: 1},
		},
		{
			// A reordered successor does not release the first: both wait.
			name:   "reordered successor",
			offers: []offer{{0, reorder, "a"}, {1 * ms, reorder, "b"}, {2 * ms, none, "c"}},
			want:   []string{"c@2", "a@2", "b@2"},
			stats:  Stats{Seen: 3, Reordered: 2},
		},
		{
			// The first copy is held back; the duplicate passes now.
			name:   "reordered duplicate",
			offers: []offer{{0, reodup, "a"}, {1 * ms, none, "b"}},
			want:   []string{"a@0", "b@1", "a@1"},
			stats:  Stats{Seen: 2, Duplicated: 1, Reordered: 1},
		},
		{
			// A full queue drops the copies beyond it.
			name:    "bounded queue",
			offers:  []offer{{0, delay5, "a"}, {0, delay5, "b"}, {0, delay5, "c"}},
			maxHeld: 2,
			want:    []string{"a@5", "b@5"},
			stats:   Stats{Seen: 3, Delayed: 3, Dropped: 1},
		},
		{
			// Copies due at the same time keep their offer order.
			name:   "stable order",
			offers: []offer{{0, delay5, "a"}, {0, delay5, "b"}, {0, delay5, "c"}},
			want:   []string{"a@5", "b@5", "c@5"},
			stats:  Stats{Seen: 3, Delayed: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := play(t, tt.offers, tt.maxHeld)
			if !slices.Equal(got, tt.want) {
				t.Errorf("out %v, want %v", got, tt.want)
			}
			if st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
		})
	}
}

func TestZeroAndNil(t *testing.T) {
	if im := New(Config{}, rand.New(rand.NewPCG(1, 1)), 0); im != nil {
		t.Fatal("New with a zero Config returned an Impairer")
	}
	if im := New(Config{Drop: 0.5}, nil, 0); im != nil {
		t.Fatal("New without a generator returned an Impairer")
	}
	var im *Impairer
	if !im.Next().IsZero() {
		t.Error("nil Next not zero")
	}
	if _, ok := im.Pop(t0); ok {
		t.Error("nil Pop returned a copy")
	}
	im.Recycle(make([]byte, 4))
	if im.Stats() != (Stats{}) {
		t.Error("nil Stats not zero")
	}
}

// TestStatistics checks the seeded shares, the delay range, and that a
// fixed seed reproduces the same decisions.
func TestStatistics(t *testing.T) {
	cfg := Config{Drop: 0.1, Duplicate: 0.05, Reorder: 0.02, Delay: 2 * ms, Jitter: ms}
	run := func(seed uint64) (Stats, []decision) {
		im := New(cfg, rand.New(rand.NewPCG(seed, 7)), 0)
		var ds []decision
		for range 100000 {
			ds = append(ds, im.decide())
		}
		return im.stats, ds
	}
	st, a := run(1)
	_, b := run(1)
	if !slices.Equal(a, b) {
		t.Fatal("decisions differ between two runs with the same seed")
	}
	if _, c := run(2); slices.Equal(a, c) {
		t.Fatal("decisions equal under two different seeds")
	}
	share := func(n int64) float64 { return float64(n) / float64(st.Seen) }
	if s := share(st.Dropped); s < 0.095 || s > 0.105 {
		t.Errorf("drop share %.4f, want 0.10", s)
	}
	kept := float64(st.Seen - st.Dropped)
	if s := float64(st.Duplicated) / kept; s < 0.045 || s > 0.055 {
		t.Errorf("duplicate share %.4f, want 0.05", s)
	}
	if s := float64(st.Reordered) / kept; s < 0.017 || s > 0.023 {
		t.Errorf("reorder share %.4f, want 0.02", s)
	}
	for _, d := range a {
		if !d.drop && (d.delay < ms || d.delay > 3*ms) {
			t.Fatalf("delay %s outside 2ms ± 1ms", d.delay)
		}
	}
}

// steady offers and drains datagrams the way the clients do, n times.
func steady(im *Impairer, now *time.Time, data []byte, n int) {
	for range n {
		*now = now.Add(ms)
		im.Apply(*now, addr, data)
		for {
			h, ok := im.Pop(*now)
			if !ok {
				break
			}
			im.Recycle(h.Data)
		}
	}
}

// TestSteadyStateAllocs checks that once the queue and free list have
// grown, holding and releasing copies allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	cfg := Config{Drop: 0.05, Duplicate: 0.1, Reorder: 0.05, Delay: 3 * ms, Jitter: 2 * ms}
	im := New(cfg, rand.New(rand.NewPCG(3, 4)), 0)
	now, data := t0, make([]byte, 64)
	steady(im, &now, data, 1000)
	if n := memfig.Allocs(100, func() { steady(im, &now, data, 10) }); n != 0 {
		t.Errorf("%v allocations per 10 datagrams in the steady state, want 0", n)
	}
}

func BenchmarkApply(b *testing.B) {
	cfg := Config{Drop: 0.01, Duplicate: 0.01, Reorder: 0.01, Delay: 3 * ms, Jitter: 2 * ms}
	im := New(cfg, rand.New(rand.NewPCG(3, 4)), 0)
	now, data := t0, make([]byte, 64)
	steady(im, &now, data, 1000)
	b.ReportAllocs()
	for b.Loop() {
		steady(im, &now, data, 1)
	}
}
