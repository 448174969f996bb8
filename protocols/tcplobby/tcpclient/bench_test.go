package tcpclient

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/cpufig"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/simclient"
)

// BenchmarkFlowBuiltIn and BenchmarkFlowScripted: the same session, a
// connect then 100 list requests then a disconnect, as built-in steps
// and as a script, against the reference lobby.
func BenchmarkFlowBuiltIn(b *testing.B) {
	benchFlow(b, "  - steps: [connect, "+strings.Repeat("list_rooms, ", 100)+"disconnect]\n")
}

func BenchmarkFlowScripted(b *testing.B) {
	benchFlow(b, `  - steps:
      - send: {message: CONNECT_REQ, fields: {playerName: bot0}}
      - expect: {message: CONNECT_ACK, where: "success"}
      - repeat: {count: 100}
        steps:
          - send: LIST_ROOMS_REQ
          - expect: LIST_ROOMS_ACK
      - send: DISCONNECT
`)
}

// benchFlow plays whole sessions of flow, one after another, and reports
// the time per list request (the connect's share included).
func benchFlow(b *testing.B, flow string) {
	p := plan(b, "defaults: {timeout: 5s}", flow)
	sh, err := simclient.NewShared(p, referenceServer(b), metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close()
	f, _ := simclient.Lookup("tcp-lobby")
	ctx := context.Background()
	b.ReportAllocs()
	start, cpu0 := time.Now(), cpufig.Process()
	for i := 0; b.Loop(); i++ {
		s, err := f(sh, i, &p.Flows[0], netip.MustParseAddr("127.0.0.1"))
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
