package udpclient

import "testing"

// TestPollBudget: take gives at most max slots at once, give frees one
// for the next taker.
func TestPollBudget(t *testing.T) {
	for _, max := range []int64{1, 3} {
		b := &pollBudget{max: max}
		for i := range max {
			if !b.take() {
				t.Fatalf("max %d: take %d refused", max, i+1)
			}
		}
		if b.take() {
			t.Errorf("max %d: a take beyond max was granted", max)
		}
		b.give()
		if !b.take() {
			t.Errorf("max %d: take after a give was refused", max)
		}
		if b.take() {
			t.Errorf("max %d: a refused take left a slot behind", max)
		}
		if n := b.n.Load(); n != max {
			t.Errorf("max %d: %d slots counted taken, want %d", max, n, max)
		}
	}
}
