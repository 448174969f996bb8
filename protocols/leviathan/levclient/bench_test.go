package levclient

import (
	"context"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/cpufig"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/simclient"
)

// BenchmarkFlowBuiltIn and BenchmarkFlowScripted: the same session, the
// handshake then 100 echoes then a close, as built-in steps and as a
// script, against the reference server.
func BenchmarkFlowBuiltIn(b *testing.B) {
	benchFlow(b, `      - connect: {name: bench}
      - join_server
      - echo: {count: 100, interval: 0s} # back to back, as the script
      - close`)
}

func BenchmarkFlowScripted(b *testing.B) {
	benchFlow(b, `      - send: Request Connect
      - expect: Response Connect
      - send: Request Security
      - expect: Response Security
      - send: {message: Request Authenticate, fields: {UserName: bench}}
      - expect: Response Authenticate
      - send: Request JoinServer
      - expect: Response ServerAllow
      - repeat: {count: 100}
        steps:
          - send: Request Echo
          - expect: Response None
      - send: Response CloseConnection`)
}

// benchFlow plays whole sessions of steps, one after another, with the
// fast engine, and reports the time per echo (the handshake's share
// included).
func benchFlow(b *testing.B, steps string) {
	p := plan(b, "", steps)
	sh, err := simclient.NewShared(p, startServer(b, nil).Addr(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close()
	if !SetEngineConfig(sh, fastEngine) {
		b.Fatal("engine config not taken")
	}
	// Cancellable, as a run's is: a session's reads must end with it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	start, cpu0 := time.Now(), cpufig.Process()
	for i := 0; b.Loop(); i++ {
		s, err := New(sh, i, &p.Flows[0], clientSrc)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Run(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*100), "ns/req")
	cpufig.PerRequest(b, cpu0, b.N*100)
}
