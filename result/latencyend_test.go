package result

import "testing"

// TestLatencyEnd: where a run's latencies end, from its sockets' counts
// and across merged runs; nothing is said when no client said.
func TestLatencyEnd(t *testing.T) {
	for _, tc := range []struct {
		stamped, plain, missed int64
		want                   string
	}{
		{0, 0, 0, ""},
		{3, 0, 0, LatencyEndKernel},
		{0, 3, 0, LatencyEndUser},
		{3, 1, 0, LatencyEndMixed},
		{3, 0, 1, LatencyEndMixed},
	} {
		if got := LatencyEndOf(tc.stamped, tc.plain, tc.missed); got != tc.want {
			t.Errorf("LatencyEndOf(%d, %d, %d) = %q, want %q", tc.stamped, tc.plain, tc.missed, got, tc.want)
		}
	}
	for _, tc := range []struct{ a, b, want string }{
		{"", "", ""},
		{"", LatencyEndKernel, LatencyEndKernel},
		{LatencyEndUser, "", LatencyEndUser},
		{LatencyEndKernel, LatencyEndKernel, LatencyEndKernel},
		{LatencyEndKernel, LatencyEndUser, LatencyEndMixed},
		{LatencyEndMixed, LatencyEndKernel, LatencyEndMixed},
	} {
		if got := MergeLatencyEnd(tc.a, tc.b); got != tc.want {
			t.Errorf("MergeLatencyEnd(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
