package udpclient

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/internal/testkit/cpufig"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// echoServer answers CLIENT_PING with SERVER_PONG and LOBBY_LIST_ROOMS
// with an empty LOBBY_ROOM_LIST (spec profile) by rewriting the request in
// place: it allocates nothing, so AllocsPerRun measures the client alone.
type echoServer struct {
	conn    *net.UDPConn
	served  atomic.Int64
	workers sync.WaitGroup
}

func newEchoServer(t testing.TB, workers int) *echoServer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = simclient.SetBuffers(c, 8<<20)
	e := &echoServer{conn: c}
	for range workers {
		e.workers.Add(1)
		go e.serve()
	}
	t.Cleanup(func() { c.Close(); e.workers.Wait() })
	return e
}

func (e *echoServer) addr() netip.AddrPort { return e.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (e *echoServer) serve() {
	defer e.workers.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := e.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if n < 12 {
			continue
		}
		b := buf[:n]
		switch udpwire.MsgType(b[1]) {
		case udpwire.ClientPing:
			b[1] = byte(udpwire.ServerPong)
		case udpwire.LobbyListRooms:
			b = buf[:14]
			b[1] = byte(udpwire.LobbyRoomList)
			binary.BigEndian.PutUint16(b[4:], 2)
			binary.BigEndian.PutUint16(b[6:], 2)
			b[8], b[9] = 0, 0
		default:
			continue
		}
		b[0] = byte(udpwire.ServerToClient)
		binary.BigEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		e.conn.WriteToUDPAddrPort(b, from)
		e.served.Add(1)
	}
}

// benchSession makes a session whose instance is the echo server.
func benchSession(t testing.TB, sh *simclient.Shared, id int, e *echoServer) *session {
	t.Helper()
	f, _ := simclient.Lookup("udp-lobby")
	ss, err := f(sh, id, &sh.Plan.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	s := ss.(*session)
	s.inst = e.addr()
	return s
}

func benchShared(t testing.TB, target netip.AddrPort) *simclient.Shared {
	t.Helper()
	p := plan(t, "", "  - steps: [{ping: 1}]\n")
	sh, err := simclient.NewShared(p, target, metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh
}

// TestRequestZeroAlloc keeps the ping and list request paths (encode, send,
// receive, decode, judge, record) free of allocations.
func TestRequestZeroAlloc(t *testing.T) {
	e := newEchoServer(t, 1)
	sh := benchShared(t, newEchoServer(t, 1).addr())
	s := benchSession(t, sh, 0, e)
	defer s.Close()
	pol := scenario.DefaultPolicy
	for _, tc := range []struct {
		name string
		p    pending
	}{
		{"ping", pending{typ: udpwire.ClientPing, to: s.inst, inst: true}},
		{"list", pending{typ: udpwire.LobbyListRooms, to: s.rt.lobby}},
	} {
		run := func() {
			p := tc.p
			p.intended = instant.Now()
			if _, err := s.request(&p, pol); err != nil {
				t.Fatal(err)
			}
		}
		run() // first use of the metrics key allocates its histograms
		if n := memfig.Allocs(200, run); n != 0 {
			t.Errorf("%s: %.1f allocations per request, want 0", tc.name, n)
		}
	}
}

// BenchmarkPing measures one client's ping round trip through the whole
// client path (one request in flight).
func BenchmarkPing(b *testing.B) {
	e := newEchoServer(b, 1)
	sh := benchShared(b, newEchoServer(b, 1).addr())
	s := benchSession(b, sh, 0, e)
	defer s.Close()
	pol := scenario.DefaultPolicy
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.request(&pending{typ: udpwire.ClientPing, to: s.inst, inst: true, intended: instant.Now()}, pol); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPingClients runs many clients, one goroutine and socket each,
// pinging in a closed loop; it reports requests per second.
func BenchmarkPingClients(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(itoa(n), func(b *testing.B) {
			e := newEchoServer(b, 1)
			sh := benchShared(b, newEchoServer(b, 1).addr())
			ss := make([]*session, n)
			for i := range ss {
				ss[i] = benchSession(b, sh, i, e)
			}
			defer func() {
				for _, s := range ss {
					s.Close()
				}
			}()
			pol := scenario.DefaultPolicy
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			cpu0 := cpufig.Process()
			var wg sync.WaitGroup
			ctx := context.Background()
			for _, s := range ss {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Add(-1) >= 0 && ctx.Err() == nil {
						if _, err := s.request(&pending{typ: udpwire.ClientPing, to: s.inst, inst: true, intended: instant.Now()}, pol); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			cpufig.PerRequest(b, cpu0, b.N)
		})
	}
}

func itoa(n int) string {
	if n >= 1000 {
		return itoa(n/1000) + "k"
	}
	b := []byte{}
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// BenchmarkBareEchoClients is the yardstick: the same clients as
// BenchmarkPingClients reduced to a raw write and read of a ping datagram,
// against the same echo server. lobbybench's rate divided by this one is
// the harness's efficiency.
func BenchmarkBareEchoClients(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(itoa(n), func(b *testing.B) {
			e := newEchoServer(b, 1)
			conns := make([]*net.UDPConn, n)
			for i := range conns {
				c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					b.Fatal(err)
				}
				conns[i] = c
				defer c.Close()
			}
			to := e.addr()
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ResetTimer()
			start := time.Now()
			cpu0 := cpufig.Process()
			var wg sync.WaitGroup
			for _, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out := udpwire.AppendPing(nil, udpwire.ProfileSpec, 1, 1)
					in := make([]byte, 2048)
					for left.Add(-1) >= 0 {
						if _, err := c.WriteToUDPAddrPort(out, to); err != nil {
							b.Error(err)
							return
						}
						if _, _, err := c.ReadFromUDPAddrPort(in); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			cpufig.PerRequest(b, cpu0, b.N)
		})
	}
}

// listFlow is a flow of n LOBBY_LIST_ROOMS requests a session, as
// built-in steps or as a script.
func listFlow(scripted bool, n int) string {
	if scripted {
		return fmt.Sprintf("  - steps:\n      - repeat: {count: %d}\n        steps:\n          - send: LOBBY_LIST_ROOMS\n          - expect: LOBBY_ROOM_LIST\n", n)
	}
	return "  - steps: [" + strings.Repeat("list_rooms, ", n-1) + "list_rooms]\n"
}

// flowPlayer returns a function that plays one whole session of flow
// against addr, a new session each call; the run's shared state closes
// when tb ends.
func flowPlayer(tb testing.TB, addr netip.AddrPort, flow string) func() {
	p := plan(tb, "defaults: {timeout: 2s}", flow)
	sh, err := simclient.NewShared(p, addr, metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sh.Close() })
	f, _ := simclient.Lookup("udp-lobby")
	i := 0
	return func() {
		s, err := f(sh, i, &p.Flows[0], clientSrc)
		if err != nil {
			tb.Fatal(err)
		}
		i++
		if err := s.Run(context.Background(), time.Now()); err != nil {
			tb.Fatal(err)
		}
		s.Close()
	}
}

// benchFlow plays whole sessions of 100 LOBBY_LIST_ROOMS requests
// (listFlow) against the echo server, one after another, and reports the
// CPU per request: what a scripted flow costs beside the built-in one.
func benchFlow(b *testing.B, scripted bool) {
	play := flowPlayer(b, newEchoServer(b, 1).addr(), listFlow(scripted, 100))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpufig.Process()
	for b.Loop() {
		play()
	}
	cpufig.PerRequest(b, cpu0, b.N*100)
}

// renewedPlayer returns a function that plays one session of flow
// against addr, each renewed from the one before as the engine's closed
// loop renews them (simclient.Renew: the socket and the script's state
// kept); the last one closes when tb ends.
func renewedPlayer(tb testing.TB, addr netip.AddrPort, flow string) func() {
	p := plan(tb, "defaults: {timeout: 2s}", flow)
	sh, err := simclient.NewShared(p, addr, metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	f, _ := simclient.Lookup("udp-lobby")
	var s simclient.Session
	tb.Cleanup(func() {
		if s != nil {
			s.Close()
		}
		sh.Close()
	})
	i := 0
	return func() {
		if s, err = simclient.Renew(f, sh, s, i, &p.Flows[0], clientSrc); err != nil {
			tb.Fatal(err)
		}
		i++
		if err := s.Run(context.Background(), time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
}

// benchRenewed plays renewed sessions of one LOBBY_LIST_ROOMS request
// (listFlow, renewedPlayer) against the echo server and reports the CPU
// per request: what a session costs beside its request, the 1-step row
// of make bench-run.
func benchRenewed(b *testing.B, scripted bool) {
	play := renewedPlayer(b, newEchoServer(b, 1).addr(), listFlow(scripted, 1))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpufig.Process()
	for b.Loop() {
		play()
	}
	cpufig.PerRequest(b, cpu0, b.N)
}

// BenchmarkRenewedBuiltIn and BenchmarkRenewedScripted: one list request
// a renewed session, as a built-in step and as a script.
func BenchmarkRenewedBuiltIn(b *testing.B) { benchRenewed(b, false) }

func BenchmarkRenewedScripted(b *testing.B) { benchRenewed(b, true) }

// BenchmarkFlowBuiltIn and BenchmarkFlowScripted: the same 100 list
// requests a session, as built-in steps and as a script.
func BenchmarkFlowBuiltIn(b *testing.B) { benchFlow(b, false) }

func BenchmarkFlowScripted(b *testing.B) { benchFlow(b, true) }

// TestScriptAllocsPerRequest: a scripted request (a send and the expect
// after it) allocates no more than the built-in step's: none (the
// datagram is encoded in the session's buffer). It allocated 13.6 (a map of
// variables per expect, of fields per send and per reply, a pending
// request, the failure errors.As looked for) and cost 1.5× the built-in
// flow's CPU in bench-run. Counted per request from the difference
// between sessions of 200 and of 100 requests, the sessions' own set-up
// cancelling out.
func TestScriptAllocsPerRequest(t *testing.T) {
	memfig.SkipUnderRace(t)
	addr := newEchoServer(t, 1).addr()
	perRequest := func(scripted bool) float64 {
		allocs := func(n int) float64 { return memfig.Allocs(20, flowPlayer(t, addr, listFlow(scripted, n))) }
		return (allocs(200) - allocs(100)) / 100
	}
	builtIn, scripted := perRequest(false), perRequest(true)
	t.Logf("allocations a request: built-in %.2f, scripted %.2f", builtIn, scripted)
	if scripted > builtIn+0.5 {
		t.Errorf("a scripted request allocates %.2f times, the built-in step %.2f: want none more (the datagram is the session's buffer)", scripted, builtIn)
	}
}

// TestScriptAllocsPerSession: a renewed session of one scripted request
// allocates little more than the built-in step's: it allocated 11 times
// (a catalog session and its map of answered ids, the environment's two
// closures, the Failure errors.As looked for) where the built-in step
// allocates none; the catalog session is renewed in place now
// (script.Renewer) and the closures kept, the datagram made in the
// session's buffer, and the session number boxed only when read: none.
func TestScriptAllocsPerSession(t *testing.T) {
	memfig.SkipUnderRace(t)
	addr := newEchoServer(t, 1).addr()
	perSession := func(scripted bool) float64 {
		play := renewedPlayer(t, addr, listFlow(scripted, 1))
		play() // the first session makes what the renewed ones keep
		return memfig.Allocs(200, play)
	}
	builtIn, scripted := perSession(false), perSession(true)
	t.Logf("allocations a renewed 1-request session: built-in %.2f, scripted %.2f", builtIn, scripted)
	if scripted > builtIn+0.5 {
		t.Errorf("a renewed scripted session allocates %.2f times, the built-in one %.2f: want none more", scripted, builtIn)
	}
}
