package scenario

import (
	"math"
	"slices"
	"testing"
	"time"
)

// times draws the whole schedule of l under seed (bounded: at most limit).
func times(t *testing.T, l LoadShape, seed int64, limit int) []time.Duration {
	t.Helper()
	s := l.Schedule(seed)
	var out []time.Duration
	for range limit {
		d, ok := s.Next()
		if !ok {
			if _, again := s.Next(); again {
				t.Fatal("the schedule went on after it ended")
			}
			return out
		}
		out = append(out, d)
	}
	t.Fatalf("the schedule did not end within %d arrivals", limit)
	return nil
}

func poissonLoad(start float64, stages []Stage, dur time.Duration) LoadShape {
	return LoadShape{Model: Open, Start: start, Stages: stages, Duration: dur, Arrivals: ArrivalsPoisson}
}

// TestUniformScheduleIsTheProfile: the default schedule is today's, arrival
// k at Ramp.Due(k), whatever the seed.
func TestUniformScheduleIsTheProfile(t *testing.T) {
	for _, arr := range []Arrivals{"", ArrivalsUniform} {
		l := LoadShape{Model: Open, Start: 0, Stages: []Stage{{100, 10 * s}, {20, 5 * s}}, Duration: 20 * s, Arrivals: arr}
		got := times(t, l, 7, 1e6)
		if !slices.Equal(got, times(t, l, 8, 1e6)) {
			t.Errorf("%q: the uniform schedule depends on the seed", arr)
		}
		p := l.Ramp()
		for k, d := range got {
			if want, _ := p.Due(uint64(k)); d != want {
				t.Fatalf("%q: arrival %d at %v, Ramp.Due says %v", arr, k, d, want)
			}
		}
		if _, ok := p.Due(uint64(len(got))); ok {
			t.Errorf("%q: the schedule ended at %d arrivals, the profile has more", arr, len(got))
		}
	}
}

// TestPoissonSeed: the same seed gives the same times, another seed others.
func TestPoissonSeed(t *testing.T) {
	l := poissonLoad(50, []Stage{{200, 5 * s}}, 10*s)
	a, b, c := times(t, l, 42, 1e6), times(t, l, 42, 1e6), times(t, l, 43, 1e6)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("seed 42 twice: %d and %d arrivals, or different times", len(a), len(b))
	}
	if slices.Equal(a, c) {
		t.Error("seeds 42 and 43 gave the same arrival times")
	}
	same := 0
	for i := range min(len(a), len(c)) {
		if a[i] == c[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 42 and 43 share %d arrival times", same)
	}
}

// TestPoissonCounts: over windows of a piecewise-linear profile the number
// of arrivals is Poisson with mean the integral of the rate there (μ), so
// it must lie within μ ± 4√μ (a 4σ bound: each check fails by chance with
// probability under 1e-4, and the draws are fixed by the seed, so a pass
// is reproducible). The arrivals are in order, inside [0, duration).
func TestPoissonCounts(t *testing.T) {
	tests := []struct {
		name   string
		start  float64
		stages []Stage
		dur    time.Duration
		seed   int64
	}{
		{"constant", 100, nil, 1000 * s, 1},
		{"ramp up, hold, ramp down", 0, []Stage{{200, 300 * s}, {200, 200 * s}, {10, 300 * s}}, 800 * s, 2},
		{"step and a silent stretch", 50, []Stage{{50, 100 * s}, {0, 0}, {0, 100 * s}, {300, 0}, {300, 100 * s}}, 300 * s, 3},
		{"cut mid-ramp by duration", 0, []Stage{{400, 600 * s}}, 400 * s, 4},
		{"slow rate", 0.5, nil, 4000 * s, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := poissonLoad(tt.start, tt.stages, tt.dur)
			p := l.Ramp()
			got := times(t, l, tt.seed, 1e7)
			if !slices.IsSorted(got) {
				t.Error("arrival times are not in order")
			}
			if len(got) > 0 && (got[0] < 0 || got[len(got)-1] >= tt.dur) {
				t.Errorf("arrivals from %v to %v, outside [0, %v)", got[0], got[len(got)-1], tt.dur)
			}
			const windows = 10
			for w := range windows + 1 {
				from, to := tt.dur*time.Duration(w)/windows, tt.dur*time.Duration(w+1)/windows
				if w == windows { // the whole run
					from, to = 0, tt.dur
				}
				mu := p.Hits(to) - p.Hits(from)
				n := 0
				for _, d := range got {
					if d >= from && d < to {
						n++
					}
				}
				if bound := 4 * math.Sqrt(mu); math.Abs(float64(n)-mu) > bound {
					t.Errorf("[%v, %v): %d arrivals, want %.1f ± %.1f", from, to, n, mu, bound)
				}
				if mu == 0 && n != 0 {
					t.Errorf("[%v, %v): %d arrivals where the rate is 0", from, to, n)
				}
			}
		})
	}
}

// TestPoissonGaps: at a constant rate λ the gaps are Exp(λ): mean 1/λ and
// standard deviation 1/λ, so the mean of n gaps is 1/λ ± 4/(λ√n); and
// their coefficient of variation is 1 (the uniform schedule's is 0).
func TestPoissonGaps(t *testing.T) {
	for _, rate := range []float64{2, 100, 5000} {
		dur := time.Duration(20000/rate*1e9) * time.Nanosecond // about 20,000 arrivals
		got := times(t, poissonLoad(rate, nil, dur), 9, 1e6)
		gaps := make([]float64, 0, len(got))
		for i := 1; i < len(got); i++ {
			gaps = append(gaps, (got[i] - got[i-1]).Seconds())
		}
		n := float64(len(gaps))
		mean, sq := 0.0, 0.0
		for _, g := range gaps {
			mean += g
		}
		mean /= n
		for _, g := range gaps {
			sq += (g - mean) * (g - mean)
		}
		sd := math.Sqrt(sq / (n - 1))
		if bound := 4 / (rate * math.Sqrt(n)); math.Abs(mean-1/rate) > bound {
			t.Errorf("%g/s: mean gap %.6gs over %d gaps, want %.6g ± %.2g", rate, mean, len(gaps), 1/rate, bound)
		}
		// The sample CV of n exponential gaps has standard error about 1/√n.
		if cv := sd / mean; math.Abs(cv-1) > 4/math.Sqrt(n) {
			t.Errorf("%g/s: gaps' coefficient of variation %.3f, want 1 ± %.3f (exponential)", rate, cv, 4/math.Sqrt(n))
		}
	}
}
