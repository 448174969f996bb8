package tcpserver

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// cycle runs one full-room cycle: four clients connect, one creates, three
// join, all ready, the host starts, the countdown runs, all four receive
// GAME_START, all four send DISCONNECT and see the server close.
func cycle(b *testing.B, s *Server) {
	cs := make([]*client, 4)
	for i := range cs {
		cs[i] = dial(b, s)
	}
	ack := cs[0].create("bench", "p1")
	if ack.RoomID == 0 {
		b.Fatal("create failed")
	}
	for i := 1; i < 4; i++ {
		if j := cs[i].join(ack.RoomID, "p"); j.Status != tcpwire.JoinSuccess {
			b.Fatalf("join: %v", j.Status)
		}
	}
	for _, c := range cs {
		c.send(&tcpwire.ReadyReq{})
	}
	// The host's START must follow every ready: wait until the host has
	// seen all four PLAYER_READY.
	for n := 0; n < 4; {
		if cs[0].next().Type() == tcpwire.TypePlayerReady {
			n++
		}
	}
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		for c.next().Type() != tcpwire.TypeGameStart {
		}
	}
	for _, c := range cs {
		c.send(&tcpwire.Disconnect{})
	}
	for _, c := range cs {
		for {
			_, err := c.read(ioTimeout)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatalf("waiting for close: %v", err)
			}
		}
		c.nc.Close()
	}
}

func benchConfig() Config {
	cfg := testConfig(&fakePool{addr: gameAddr})
	cfg.CountdownInterval = time.Microsecond
	return cfg
}

// BenchmarkFullRoomCycle is the sequential full-room cycle rate (one room at
// a time), including the clients' own work.
func BenchmarkFullRoomCycle(b *testing.B) {
	s := startServer(b, benchConfig())
	b.ReportAllocs()
	for b.Loop() {
		cycle(b, s)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkFullRoomCycleParallel runs 8 rooms' cycles at once (of the 16
// the server allows).
func BenchmarkFullRoomCycleParallel(b *testing.B) {
	s := startServer(b, benchConfig())
	b.ReportAllocs()
	b.SetParallelism(4) // 4 × GOMAXPROCS goroutines, 8 rooms on 2 cores
	var n atomic.Int64
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			cycle(b, s)
			n.Add(1)
		}
	})
	b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "cycles/s")
	if st := s.Stats(); st.GamesStarted != uint64(n.Load()) {
		b.Fatalf("games started %d, cycles %d", st.GamesStarted, n.Load())
	}
}
