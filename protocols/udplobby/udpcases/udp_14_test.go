package udpcases

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
)

// TestPerAddressVerdict holds udp-lobby/14/1's verdict to its rule on made-up
// flood figures: a pass needs the flood limited and the second source
// served, more often than overload (which drops every source alike) could
// explain; never a pass on the flood alone.
func TestPerAddressVerdict(t *testing.T) {
	fx := func(sent, answered, errs, sent2, answered2 int) *floodFx {
		f := &floodFx{src: "127.0.0.31", rate: 20000, sent: sent, answered: answered, errReplies: errs, quiet: true, tail: 2 * time.Second}
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
		// inconclusive: a skip whose reason holds actual.
		inconclusive bool
	}{
		{"per-address limit", fx(10000, 2500, 0, 20, 20), true, 0, "", false},
		{"limit by error replies", fx(10000, 0, 8000, 20, 19), true, 0, "", false},
		{"limit, second source lost a few", fx(1000, 40, 0, 8, 7), true, 0, "", false},
		{"no limit", fx(10000, 9000, 0, 20, 20), false, 0, "no rate limit observed", false},
		{"no limit, second starved", fx(10000, 6000, 0, 20, 0), false, 0, "no rate limit observed", false},
		{"overload", fx(10000, 1200, 0, 20, 3), false, conformance.Should, "traffic from every source was dropped", false},
		{"overload, second source just under 80%", fx(10000, 4000, 0, 20, 15), false, conformance.Should, "traffic from every source was dropped", false},
		{"error replies, second starved", fx(10000, 100, 500, 20, 2), false, conformance.Should, "a limit that is not per address, or overload", false},
		{"no second source", fx(10000, 100, 0, 0, 0), false, conformance.Should, "give --source-addrs with at least 4 addresses", false},
		// 8 of 8 is what overload answering 45% would do 0.17% of the time.
		{"too close to tell", fx(1000, 450, 0, 8, 8), false, conformance.Should, "too close to tell", false},
		{"far enough with more requests", fx(10000, 4500, 0, 20, 20), true, 0, "", false},
		// The flood's replies were still coming when its reader stopped (a
		// lobby slower than the flood, on a busy machine): the unread
		// ones are not drops, and a per-address pass would be a guess.
		{"replies still coming", func() *floodFx { f := fx(1000, 1, 0, 8, 8); f.quiet = false; return f }(), false, 0,
			"its replies were still coming 2s after the second source's were in", true},
		{"replies still coming, second starved", func() *floodFx { f := fx(1000, 100, 0, 8, 0); f.quiet = false; return f }(), false, 0,
			"the rest cannot be counted dropped", true},
		{"harness stalled reading the last replies", func() *floodFx {
			f := fx(1000, 1, 0, 8, 8)
			f.cannotTell = &conformance.StallError{Wait: 0, Stalled: 9 * time.Second, Limit: 8 * time.Second}
			return f
		}(), false, 0, "cannot be counted dropped: the harness stalled for 9s", true},
		// Replies all in: no limit is a warning however slowly the flood went
		// out, naming the rate this machine reached.
		{"no limit, flood behind", func() *floodFx { f := fx(1000, 1000, 0, 8, 8); f.dur = 2 * time.Second; return f }(), false, 0,
			"no rate limit observed at the 500/s this machine reached (20000/s asked)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fx.perAddress()
			if tt.inconclusive {
				var sk *conformance.SkipError
				if !errors.As(err, &sk) || !strings.HasPrefix(sk.Reason, conformance.Inconclusive) || !strings.Contains(sk.Reason, tt.actual) {
					t.Fatalf("got %v, want a skip \"%s…%s…\"", err, conformance.Inconclusive, tt.actual)
				}
				return
			}
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
