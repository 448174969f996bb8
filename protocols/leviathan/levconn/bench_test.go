package levconn

import (
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// exchange runs one request/response pair between a and b through their
// datagrams, advancing the clock by 1ms.
func exchange(a, b *Conn, now time.Time, payload []byte) {
	a.SendRequest(now, Critical, levwire.ReqJoinServer, payload)
	for dg := a.Poll(now); dg != nil; dg = a.Poll(now) {
		b.Receive(now, dg)
	}
	for _, e := range b.Events() {
		if e.Kind == EventMessage {
			b.SendResponse(now, Critical, levwire.ResNone, e.Msg.Number, nil)
		}
	}
	for dg := b.Poll(now); dg != nil; dg = b.Poll(now) {
		a.Receive(now, dg)
	}
	a.Events()
}

// BenchmarkExchange measures the engine's cost of one request/response
// pair, both sides (4 datagrams' worth of work: encode, decode, acks).
func BenchmarkExchange(b *testing.B) {
	x, y := newConn(b, Config{}), newConn(b, Config{})
	payload := levwire.JoinServer{MasterServerToken: -1}.Append(nil)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		exchange(x, y, now, payload)
	}
}

// TestExchangeDoesNotAllocate keeps the steady-state hot path free of
// allocations.
func TestExchangeDoesNotAllocate(t *testing.T) {
	x, y := newConn(t, Config{}), newConn(t, Config{})
	payload := levwire.JoinServer{MasterServerToken: -1}.Append(nil)
	now := t0
	for i := 0; i < 100; i++ { // warm up free lists and slices
		now = now.Add(time.Millisecond)
		exchange(x, y, now, payload)
	}
	if n := memfig.Allocs(200, func() {
		now = now.Add(time.Millisecond)
		exchange(x, y, now, payload)
	}); n != 0 {
		t.Fatalf("%.1f allocations per exchange", n)
	}
}
