package simclient

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
)

// BenchmarkBaseRenew is a closed-model client's bookkeeping between two
// sessions on one socket: Renew (the spent session closed and out of its
// group, the next one's group of one, recorder, generator) and the end of
// the next session's flow (leaveGroup, as Play does).
func BenchmarkBaseRenew(b *testing.B) {
	sh, _ := baseShared(b, "  - name: f\n    steps: [list_rooms]\n")
	var s Base
	if err := s.Begin(sh, 0, &sh.Plan.Flows[0]); err != nil {
		b.Fatal(err)
	}
	s.Join()
	b.ReportAllocs()
	id := 0
	for b.Loop() {
		id++
		s = s.Renew(id, 0)
		s.leaveGroup()
	}
}

// BenchmarkObserve is one request's outcome told to the others tracker,
// in a run with a rate probe (kept) and without (none).
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct{ name, flows string }{
		{"probe", "  - steps: [list_rooms, {rate_probe: {from: 10/s, to: 100/s, over: 2s}}]\n"},
		{"none", "  - steps: [list_rooms]\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := metrics.NewCollector(time.Now())
			sh, err := NewShared(testPlan(b, tc.flows), netip.AddrPort{}, c, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sh.Close()
			now := c.Start().Add(time.Second)
			id := 0
			for b.Loop() {
				id++
				sh.Observe(id, now, 100*time.Microsecond, true)
			}
		})
	}
}

// BenchmarkStepFinish is the end of a successful step: Finish (the clock
// read for its end) and FinishAt given the reply's time.
func BenchmarkStepFinish(b *testing.B) {
	sh, _ := baseShared(b, "  - name: f\n    steps: [list_rooms]\n")
	var s Base
	if err := s.Begin(sh, 0, &sh.Plan.Flows[0]); err != nil {
		b.Fatal(err)
	}
	st := &s.Flow.Steps[0]
	intended := time.Now()
	done := intended.Add(time.Millisecond)
	b.Run("Finish", func(b *testing.B) {
		for b.Loop() {
			_ = s.Finish(0, st, intended, intended, nil)
		}
	})
	b.Run("FinishAt", func(b *testing.B) {
		for b.Loop() {
			_ = s.FinishAt(0, st, intended, intended, done, nil)
		}
	})
}
