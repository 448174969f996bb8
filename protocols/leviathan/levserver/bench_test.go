package levserver

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// BenchmarkHandshakeJoin measures complete Leviathan sessions per second
// against the endpoint with 1,000 concurrent clients on loopback: each
// client opens a socket, does Connect, Security, Authenticate, JoinServer,
// JoinGame (ServerAllow + StartWorldReceive) and closes (CloseConnection
// until acked);
// b.N sessions in all. Client and server share the machine's cores, so the
// figure is a floor for the server.
func BenchmarkHandshakeJoin(b *testing.B) {
	s := start(b, func(c *Config) {
		c.MaxPlayers = 1 << 20
		c.SocketBuffer = 8 << 20
		c.TickInterval = 20 * time.Millisecond
		c.Conn = levconn.Config{}
	})
	const workers = 1000
	var next, done atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				d, err := levconn.Dial(s.Addr(), levconn.DriverOptions{SocketBuffer: 256 << 10})
				if err != nil {
					failed.Add(1)
					continue
				}
				c := &client{t: b, d: d}
				if err := joinAll(c); err != nil {
					firstErr.CompareAndSwap(nil, err.Error()+" from "+d.LocalAddr().String())
					failed.Add(1)
				} else {
					done.Add(1)
				}
				// Close as levclient does: CloseConnection, Critical, and
				// wait for its ack, so the server never keeps a player
				// whose close was lost (and a reused port finds no stale
				// connection).
				if num, err := d.SendResponse(levconn.Critical, lv.ResCloseConnection, 0, nil); err == nil {
					deadline := time.Now().Add(5 * time.Second)
					for {
						e, err := d.Next(context.Background(), deadline)
						if err != nil || (e.Kind == levconn.EventConfirmed && e.Number == num) {
							break
						}
					}
				}
				d.Close()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d sessions failed; first: %v; server %+v", f, b.N, firstErr.Load(), s.Stats())
	}
	b.ReportMetric(float64(done.Load())/el.Seconds(), "joins/s")
}
