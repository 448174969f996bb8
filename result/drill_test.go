package result

import (
	"testing"
	"time"
)

func TestSuccessBack(t *testing.T) {
	s := time.Second
	tests := []struct {
		name            string
		ts              []Point
		at, from, since time.Duration
		baseline        float64
		baseSecs        int
		back            bool
		after           time.Duration
	}{
		{"back in the second after the recovery", pts([2]int64{100, 0}, [2]int64{100, 0}, [2]int64{50, 40}, [2]int64{90, 0}),
			2*s + 500*time.Millisecond, 2*s + 800*time.Millisecond, 0, 1, 2, true, 1500 * time.Millisecond},
		{"the recovery's own second counts when it is clean", pts([2]int64{100, 0}, [2]int64{100, 1}),
			1 * s, 1*s + 100*time.Millisecond, 0, 1, 1, true, 1 * s},
		{"within the tolerance of a lower baseline", pts([2]int64{100, 10}, [2]int64{100, 50}, [2]int64{100, 14}),
			1 * s, 1 * s, 0, 0.9, 1, true, 2 * s},
		{"below the tolerance is not back", pts([2]int64{100, 0}, [2]int64{100, 50}, [2]int64{100, 6}),
			1 * s, 1 * s, 0, 1, 1, false, 0},
		{"a second with no request is not back", pts([2]int64{100, 0}, [2]int64{0, 0}),
			1 * s, 1 * s, 0, 1, 1, false, 0},
		{"no second before the fault: baseline 1", pts([2]int64{10, 5}, [2]int64{10, 0}),
			500 * time.Millisecond, 600 * time.Millisecond, 0, 1, 0, true, 1500 * time.Millisecond},
		{"the previous fault's seconds are not the baseline", pts([2]int64{100, 0}, [2]int64{100, 80}, [2]int64{100, 0}, [2]int64{100, 0}, [2]int64{100, 0}),
			4 * s, 4 * s, 2 * s, 1, 2, true, 1 * s},
		{"only the window before the fault", append(pts(make([][2]int64, 12)...)[:0], append([]Point{{Second: 0, Requests: 100, Errors: 100}}, pts([2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{0, 0}, [2]int64{100, 0}, [2]int64{100, 0}, [2]int64{100, 0})[1:]...)...),
			12 * s, 12 * s, 0, 1, 2, true, 1 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, n, back, after := SuccessBack(tt.ts, tt.at, tt.from, tt.since)
			if b != tt.baseline || n != tt.baseSecs || back != tt.back || after != tt.after {
				t.Errorf("SuccessBack = %v, %d, %v, %s; want %v, %d, %v, %s", b, n, back, after, tt.baseline, tt.baseSecs, tt.back, tt.after)
			}
		})
	}
}

// pts builds a time series from seconds' (requests, errors) pairs, from
// second 0.
func pts(pairs ...[2]int64) []Point {
	var out []Point
	for i, p := range pairs {
		out = append(out, Point{Second: int64(i), Requests: p[0], Errors: p[1]})
	}
	return out
}
