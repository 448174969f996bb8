package udpcases

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/conformance"
)

// TestPerAddressVerdict holds udp-lobby/14/1's verdict to its rule on made-up
// flood figures: a pass needs the flood limited and the second source
// served, more often than overload (which drops every source alike) could
// explain; never a pass on the flood alone.
func TestPerAddressVerdict(t *testing.T) {
	fx := func(sent, answered, errs, sent2, answered2 int) *floodFx {
		f := &floodFx{src: "127.0.0.31", rate: 20000, sent: sent, answered: answered, errReplies: errs}
		f.second.addr, f.second.sent, f.second.answered = "127.0.0.32", sent2, answered2
		if sent2 == 0 {
			f.second.missing = "no second reserved source address: " + needFourSources
		}
		return f
	}
	tests := []struct {
		name string
		fx   *floodFx
		// level is 0 for a pass, else the VerifyError's Level (0: the
		// case's own, Should: a warning whatever the level).
		pass   bool
		level  conformance.Level
		actual string
	}{
		{"per-address limit", fx(10000, 2500, 0, 20, 20), true, 0, ""},
		{"limit by error replies", fx(10000, 0, 8000, 20, 19), true, 0, ""},
		{"limit, second source lost a few", fx(1000, 40, 0, 8, 7), true, 0, ""},
		{"no limit", fx(10000, 9000, 0, 20, 20), false, 0, "no rate limit observed"},
		{"no limit, second starved", fx(10000, 6000, 0, 20, 0), false, 0, "no rate limit observed"},
		{"overload", fx(10000, 1200, 0, 20, 3), false, conformance.Should, "traffic from every source was dropped"},
		{"overload, second source just under 80%", fx(10000, 4000, 0, 20, 15), false, conformance.Should, "traffic from every source was dropped"},
		{"error replies, second starved", fx(10000, 100, 500, 20, 2), false, conformance.Should, "a limit that is not per address, or overload"},
		{"no second source", fx(10000, 100, 0, 0, 0), false, conformance.Should, "give --source-addrs with at least 4 addresses"},
		// 8 of 8 is what overload answering 45% would do 0.17% of the time.
		{"too close to tell", fx(1000, 450, 0, 8, 8), false, conformance.Should, "too close to tell"},
		{"far enough with more requests", fx(10000, 4500, 0, 20, 20), true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fx.perAddress()
			if tt.pass {
				if err != nil {
					t.Fatalf("got %v, want a pass", err)
				}
				return
			}
			var v *conformance.VerifyError
			if !errors.As(err, &v) {
				t.Fatalf("got %v, want a *VerifyError", err)
			}
			if v.Level != tt.level || !strings.Contains(v.Actual, tt.actual) {
				t.Errorf("level %v, actual %q; want level %v with %q", v.Level, v.Actual, tt.level, tt.actual)
			}
			if tt.level == conformance.Should && !strings.Contains(v.Expected, secondServedWant) {
				t.Errorf("expected %q does not name %q", v.Expected, secondServedWant)
			}
		})
	}
}

func TestBinomialTail(t *testing.T) {
	tests := []struct {
		n, k int
		p    float64
		want float64
	}{
		{4, 4, 0.5, 1.0 / 16},
		{8, 7, 0.5, 9.0 / 256},
		{10, 0, 0.3, 1},
		{10, 11, 0.3, 0},
		{5, 1, 0, 0},
		{5, 5, 1, 1},
		{20, 16, 0.5, 6196.0 / 1048576},
	}
	for _, tt := range tests {
		if got := binomialTail(tt.n, tt.k, tt.p); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("binomialTail(%d, %d, %v) = %v, want %v", tt.n, tt.k, tt.p, got, tt.want)
		}
	}
}
