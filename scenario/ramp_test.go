package scenario

import (
	"math"
	"testing"
	"time"
)

const s = time.Second

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestProfileAt(t *testing.T) {
	tests := []struct {
		name    string
		start   float64
		stages  []Stage
		dur     time.Duration
		elapsed time.Duration
		want    float64
	}{
		{"constant", 100, nil, 10 * s, 5 * s, 100},
		{"ramp start", 0, []Stage{{100, 10 * s}}, 10 * s, 0, 0},
		{"ramp middle", 0, []Stage{{100, 10 * s}}, 10 * s, 5 * s, 50},
		{"ramp from start value", 20, []Stage{{200, 5 * s}}, 5 * s, 2500 * time.Millisecond, 110},
		{"second stage holds", 0, []Stage{{100, 2 * s}, {100, 2 * s}}, 4 * s, 3 * s, 100},
		{"ramp down", 0, []Stage{{100, 2 * s}, {0, 2 * s}}, 4 * s, 3 * s, 50},
		{"step change (for 0)", 0, []Stage{{50, 0}, {50, 2 * s}}, 2 * s, 0, 50},
		{"hold last after stages", 0, []Stage{{10, 1 * s}}, 5 * s, 4 * s, 10},
		{"cut by duration mid-ramp", 0, []Stage{{100, 10 * s}}, 5 * s, 4 * s, 40},
		{"after the end", 100, nil, 2 * s, 2 * s, 0},
		{"before start", 100, nil, 2 * s, -s, 0},
	}
	for _, tt := range tests {
		p := NewRamp(tt.start, tt.stages, tt.dur)
		if got := p.At(tt.elapsed); !near(got, tt.want) {
			t.Errorf("%s: At(%v) = %v, want %v", tt.name, tt.elapsed, got, tt.want)
		}
	}
}

func TestProfileHitsAndClients(t *testing.T) {
	p := NewRamp(0, []Stage{{100, 10 * s}, {100, 10 * s}}, 20*s)
	// Ramp 0→100 over 10s: 500 arrivals; then 100/s for 10s: 1000 more.
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 0}, {5 * s, 125}, {10 * s, 500}, {15 * s, 1000}, {20 * s, 1500}, {30 * s, 1500}} {
		if got := p.Hits(c.at); !near(got, c.want) {
			t.Errorf("Hits(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	if p.Total() != 1500 {
		t.Errorf("Total = %v", p.Total())
	}
	c := NewRamp(0, []Stage{{10, 10 * s}}, 10*s)
	if got := c.Clients(5*s, 0); got != 5 {
		t.Errorf("Clients(5s) = %d, want 5", got)
	}
	if got := c.Clients(5500*time.Millisecond, 0); got != 5 { // rounds down
		t.Errorf("Clients(5.5s) = %d, want 5", got)
	}
	if got := c.Clients(9*s, 3); got != 3 { // capped
		t.Errorf("Clients capped = %d, want 3", got)
	}
}

func TestPace(t *testing.T) {
	constant := NewRamp(10, nil, 1*s) // 10/s for 1s: hits at 0, .1, …, .9
	ramp := NewRamp(0, []Stage{{100, 10 * s}}, 10*s)
	tests := []struct {
		name     string
		p        Ramp
		elapsed  time.Duration
		hits     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"first hit is immediate", constant, 0, 0, 0, false},
		{"on schedule: wait for the next", constant, 0, 1, 100 * time.Millisecond, false},
		{"mid-interval", constant, 150 * time.Millisecond, 2, 50 * time.Millisecond, false},
		{"behind schedule: no wait", constant, 500 * time.Millisecond, 2, 0, false},
		{"last hit of the run", constant, 850 * time.Millisecond, 9, 50 * time.Millisecond, false},
		{"all hits sent: stop", constant, 950 * time.Millisecond, 10, 0, true},
		{"past the end: stop", constant, s, 3, 0, true},
		// ramp 0→100/s over 10s: Hits(t) = 5t², so hit k is due at sqrt(k/5).
		{"ramp: hit 0 at start", ramp, 0, 0, 0, false},
		{"ramp: hit 5 at 1s", ramp, 0, 5, s, false},
		{"ramp: hit 125 at 5s", ramp, 4 * s, 125, s, false},
		{"ramp: hit 499 just before the end", ramp, 9 * s, 499, time.Duration(math.Sqrt(499.0/5)*1e9) - 9*s, false},
		{"ramp: hit 500 falls at the end: stop", ramp, 9 * s, 500, 0, true},
		{"zero rate: stop", NewRamp(0, nil, s), 0, 0, 0, true},
	}
	for _, tt := range tests {
		wait, stop := tt.p.Pace(tt.elapsed, tt.hits)
		if stop != tt.wantStop || (wait-tt.wantWait).Abs() > time.Microsecond {
			t.Errorf("%s: Pace(%v, %d) = %v, %v; want %v, %v", tt.name, tt.elapsed, tt.hits, wait, stop, tt.wantWait, tt.wantStop)
		}
	}
}

// TestPaceCount drives each pacer with a simulated clock and checks it sends
// the integral of its rate, no more, no fewer.
func TestPaceCount(t *testing.T) {
	tests := []struct {
		name string
		p    Ramp
		want uint64
	}{
		{"constant 10/s 1s", NewRamp(10, nil, s), 10},
		{"ramp 0→100/s 10s", NewRamp(0, []Stage{{100, 10 * s}}, 10*s), 500},
		{"ramp up, hold, down", NewRamp(20, []Stage{{200, 5 * s}, {200, 10 * s}, {0, 2 * s}}, 17*s), 2750},
		{"pause in the middle", NewRamp(10, []Stage{{10, s}, {0, 0}, {0, s}, {10, 0}, {10, s}}, 3*s), 20},
	}
	for _, tt := range tests {
		var elapsed time.Duration
		var hits uint64
		for hits < 1e6 {
			wait, stop := tt.p.Pace(elapsed, hits)
			if stop {
				break
			}
			elapsed += wait
			hits++
		}
		if hits != tt.want {
			t.Errorf("%s: sent %d, want %d", tt.name, hits, tt.want)
		}
	}
}

func TestDue(t *testing.T) {
	p := NewRamp(0, []Stage{{100, 10 * s}}, 10*s) // hit k due at sqrt(k/5) s
	for k, want := range map[uint64]time.Duration{0: 0, 5: s, 20: 2 * s, 320: 8 * s} {
		if got, ok := p.Due(k); !ok || (got-want).Abs() > time.Microsecond {
			t.Errorf("Due(%d) = %v, %v; want %v", k, got, ok, want)
		}
	}
	if _, ok := p.Due(500); ok {
		t.Error("Due(500) is at the end of the run, want false")
	}
}

func BenchmarkPace(b *testing.B) {
	p := NewRamp(20, []Stage{{200, 5 * s}, {200, 10 * s}, {0, 2 * s}}, 17*s)
	for i := 0; b.Loop(); i++ {
		p.Pace(time.Duration(i%17)*s, uint64(i%2700))
	}
}

// TestProfileManySegments: with thousands of segments (a load curve), the
// lookups (binary searches) agree with the definition: Hits(Due(k)) = k,
// Due increases with k, and At is the linear interpolation of the stages
// at their ends and midpoints.
func TestProfileManySegments(t *testing.T) {
	r := NewRand(3, 0)
	var stages []Stage
	var ends []time.Duration
	total := time.Duration(0)
	for i := range 3000 {
		st := Stage{Target: math.Floor(r.Float64() * 50), For: time.Duration(1+r.IntN(2000)) * time.Millisecond}
		switch i % 10 {
		case 3:
			st.Target = 0 // silent stretches
		case 7:
			st.For = 0 // step changes
		}
		stages = append(stages, st)
		total += st.For
		ends = append(ends, total)
	}
	p := NewRamp(5, stages, total)
	prev := time.Duration(-1)
	for k := uint64(0); ; k += 97 {
		d, ok := p.Due(k)
		if !ok {
			if float64(k) < p.Total()-1 {
				t.Fatalf("Due(%d) ended before the total %.1f", k, p.Total())
			}
			break
		}
		if d < prev {
			t.Fatalf("Due(%d) = %v before Due(%d) = %v", k, d, k-97, prev)
		}
		prev = d
		if h := p.Hits(d); k > 0 && math.Abs(h-float64(k)) > 1e-6*float64(k)+0.05 {
			t.Fatalf("Hits(Due(%d) = %v) = %.4f", k, d, h)
		}
	}
	// At the end of stage i (not a step, not the last) the target is stage
	// i's, just before it the ramp from the previous target.
	from := 5.0
	for i, st := range stages[:len(stages)-1] {
		if st.For > 0 {
			mid := ends[i] - st.For/2
			if got, want := p.At(mid), (from+st.Target)/2; math.Abs(got-want) > 1e-6 {
				t.Fatalf("stage %d: At(%v) = %v, want %v", i, mid, got, want)
			}
		}
		from = st.Target
	}
}
