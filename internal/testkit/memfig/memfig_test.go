package memfig

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// TestLeast: a try that could not measure (NaN) is tried again, up to
// three more times, and never taken for a figure.
func TestLeast(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		tries []float64
		want  float64 // NaN: none measured
		calls int
	}{
		{"all measured", []float64{5, 3, 4}, 3, 3},
		{"one lost", []float64{nan, 5, 3, 4}, 3, 4},
		{"lost ones are never the least", []float64{nan, 5, nan, 6, 7}, 5, 5},
		{"three more at most", []float64{nan, nan, nan, nan, nan, nan, 1}, nan, 6},
		{"one measured of six", []float64{nan, nan, nan, nan, nan, 2}, 2, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			h, s := Least(3, func() (float64, float64) {
				v := tc.tries[calls]
				calls++
				return v, v
			})
			same := h == tc.want || math.IsNaN(h) && math.IsNaN(tc.want)
			if !same || h != s && !math.IsNaN(h) || calls != tc.calls {
				t.Errorf("Least = %v, %v after %d tries; want %v after %d", h, s, calls, tc.want, tc.calls)
			}
		})
	}
}

// endsAt is a session whose run ends with err at once, or waits for its
// context when err is nil.
type endsAt struct{ err error }

func (e endsAt) Run(ctx context.Context, _ time.Time) error {
	if e.err != nil {
		return e.err
	}
	<-ctx.Done()
	return ctx.Err()
}

func (endsAt) Close() error { return nil }

// TestParkedSessionEnded: a session whose run ended before they were all
// parked makes Parked give up at once, with NaN (not a minute's wait and
// not a partial figure); Stop's cancellation is not an end.
func TestParkedSessionEnded(t *testing.T) {
	lost := errors.New("expected SERVER_JOIN_ACCEPT: nothing came")
	start := func() *Played {
		return Play(t, 3, func(i int) (Session, error) {
			if i == 1 {
				return endsAt{lost}, nil
			}
			return endsAt{}, nil
		})
	}
	h, s := Parked(t, 3, start, func() bool { return false })
	if !math.IsNaN(h) || !math.IsNaN(s) {
		t.Errorf("Parked = %v, %v with a session ended: want NaN", h, s)
	}

	p := Play(t, 2, func(int) (Session, error) { return endsAt{}, nil })
	p.Stop()
	if k, err := p.Ended(); k != 0 {
		t.Errorf("after Stop, %d sessions ended (%v): want none", k, err)
	}
}
