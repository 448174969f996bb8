package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
)

// listStub is an in-process udp-lobby target that answers every
// LOBBY_LIST_ROOMS with an empty room list (spec profile), allocating
// nothing, and calls done once it has answered limit of them.
type listStub struct {
	conn   *net.UDPConn
	served atomic.Int64
	limit  int64
	done   func()
	exited chan struct{}
}

func newListStub(tb testing.TB, limit int64, done func()) *listStub {
	tb.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	s := &listStub{conn: c, limit: limit, done: done, exited: make(chan struct{})}
	go s.serve()
	tb.Cleanup(func() { c.Close(); <-s.exited })
	return s
}

func (s *listStub) addr() netip.AddrPort { return s.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (s *listStub) serve() {
	defer close(s.exited)
	in, out := make([]byte, 2048), make([]byte, 0, 64)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(in)
		if err != nil {
			return
		}
		h, err := udpwire.DecodeHeader(in[:n], udpwire.ProfileSpec)
		if err != nil || h.Type != udpwire.LobbyListRooms {
			continue
		}
		out, _ = udpwire.AppendRoomList(out[:0], udpwire.ProfileSpec, h.Seq, nil)
		_, _ = s.conn.WriteToUDPAddrPort(out, from)
		if s.served.Add(1) == s.limit {
			s.done()
		}
	}
}

// BenchmarkClosedIteration runs the closed model as `run` does (engine.Run:
// the udp-lobby client, the recorders, the session callbacks) with list_rooms
// flows of 1 and of 50 steps against an in-process stub, one op being one
// request: the run is interrupted once the stub has answered b.N. A 1-step
// flow pays the per-iteration work (session start and end, bookkeeping) on
// every request, a 50-step flow on one in 50, so the ratio of their ns/op
// (and the difference of their allocs/op) is the per-iteration cost. It
// also reports CPU µs per request (the process's, stub included).
func BenchmarkClosedIteration(b *testing.B) {
	for _, clients := range []int{1, 100} {
		for _, steps := range []int{1, 50} {
			b.Run(fmt.Sprintf("clients=%d/steps=%d", clients, steps), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				// The reachability check's list_rooms is answered too.
				stub := newListStub(b, int64(b.N)+1, cancel)
				y := fmt.Sprintf("protocol: udp-lobby\nseed: 1\nload: {model: closed, clients: %d, duration: 10m}\nflows:\n  - name: poll\n    steps: [%s]\n",
					clients, strings.TrimSuffix(strings.Repeat("list_rooms, ", steps), ", "))
				plan, err := scenario.Parse("bench.yaml", []byte(y))
				if err != nil {
					b.Fatal(err)
				}
				plan.Target = stub.addr().String()
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuSeconds()
				res, err := Run(ctx, Config{Plan: plan, Grace: time.Second})
				cpu := cpuSeconds() - cpu0
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				var ok int64
				for _, s := range res.Steps {
					ok += s.Successes
				}
				if ok < int64(b.N) || res.Totals.Failures != 0 {
					b.Fatalf("%d requests answered, %d failed: want at least %d, none failed", ok, res.Totals.Failures, b.N)
				}
				b.ReportMetric(cpu*1e6/float64(ok), "cpu-µs/req")
			})
		}
	}
}

// BenchmarkSlotFlowPick is a closed-model slot's flow pick for a plan of
// one flow: drawn from the slot's stream (as every pick was), and as
// pickFlow makes it (no draw).
func BenchmarkSlotFlowPick(b *testing.B) {
	plan := closedPlan(1, nil, time.Second, 1)
	s := &slot{rng: scenario.NewRand(plan.Seed, slotStreamBase)}
	var n int
	b.Run("drawn", func(b *testing.B) {
		for b.Loop() {
			n += plan.PickFlow(s.rng.Float64())
		}
	})
	b.Run("pickFlow", func(b *testing.B) {
		for b.Loop() {
			n += pickFlow(plan, s)
		}
	})
	_ = n
}
