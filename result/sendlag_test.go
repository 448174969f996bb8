package result

import "testing"

// WorstSendLag names the step with the highest send lag p99, the first
// of equals, skipping steps that recorded none.
func TestWorstSendLag(t *testing.T) {
	step := func(name string, n, p99 int64) Series {
		return Series{Name: name, SendLag: Latency{Count: n, P99US: p99}}
	}
	for _, tc := range []struct {
		name  string
		steps []Series
		us    int64
		step  string
	}{
		{"no steps", nil, 0, ""},
		{"none recorded", []Series{step("a", 0, 0)}, 0, ""},
		{"a zero lag is still a figure", []Series{step("a", 5, 0)}, 0, "a"},
		{"the worst", []Series{step("a", 5, 40), step("b", 5, 900), step("c", 0, 0), step("d", 5, 100)}, 900, "b"},
		{"the first of equals", []Series{step("a", 5, 900), step("b", 5, 900)}, 900, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			us, s := (&Run{Steps: tc.steps}).WorstSendLag()
			if us != tc.us || s != tc.step {
				t.Errorf("got %d µs in %q, want %d in %q", us, s, tc.us, tc.step)
			}
		})
	}
}
