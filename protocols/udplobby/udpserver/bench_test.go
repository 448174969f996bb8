package udpserver

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// benchServer starts a quiet server with 100 rooms on addr.
func benchServer(b *testing.B, addr string) *Server {
	cfg := testConfig()
	cfg.Addr = addr
	cfg.SocketBuffer = 4 << 20
	s := start(b, cfg)
	for i := 0; i < 100; i++ {
		if _, reason := s.newInstance(netip.Addr{}, 0, s.now()); reason != "" {
			b.Fatal(reason)
		}
	}
	return s
}

// BenchmarkLobbyHandler measures the request handler alone (decode,
// session, reply encode), without sockets, against 100 rooms, and the drop
// of a malformed datagram. Run with -benchmem: every case must report 0
// allocs/op.
func BenchmarkLobbyHandler(b *testing.B) {
	for _, kind := range []string{"list", "join", "bad-crc"} {
		b.Run(kind, func(b *testing.B) {
			s := benchServer(b, "127.0.0.1:0")
			p := s.cfg.Profile
			var reqs [][]byte
			for i := 0; i < 256; i++ {
				switch kind {
				case "list":
					reqs = append(reqs, udpwire.AppendListRooms(nil, p, uint16(i)))
				case "join":
					reqs = append(reqs, udpwire.AppendJoinRoom(nil, p, uint16(i), uint32(1+i%100)))
				default: // dropped: no reply
					r := udpwire.AppendJoinRoom(nil, p, uint16(i), uint32(1+i%100))
					r[len(r)-1] ^= 1
					reqs = append(reqs, r)
				}
			}
			eps := make([]netip.AddrPort, 64)
			for i := range eps {
				eps[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(40000+i))
			}
			out := make([]byte, 0, 2048)
			now := s.now()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out = s.handleLobby(reqs[i&255], eps[i&63], now+int64(i), out[:0])
				if (len(out) == 0) != (kind == "bad-crc") {
					b.Fatalf("%s: reply % x", kind, out)
				}
			}
		})
	}
}

// BenchmarkLobbyLoopback measures request throughput over real loopback
// sockets: `clients` goroutines, each with its own socket and one request in
// flight, alternate LIST_ROOMS and JOIN_ROOM against 100 rooms. One op is
// one request answered; req/s is reported. The wildcard cases bind the
// server to 0.0.0.0, where every read and write carries the pktinfo control
// message that makes replies leave from the address the client wrote to.
func BenchmarkLobbyLoopback(b *testing.B) {
	for _, bc := range []struct{ name, addr string }{{"", "127.0.0.1:0"}, {"wildcard/", "0.0.0.0:0"}} {
		for _, clients := range []int{1, 16, 64} {
			b.Run(bc.name+itoa(clients)+"clients", func(b *testing.B) { lobbyLoopback(b, bc.addr, clients) })
		}
	}
}

func lobbyLoopback(b *testing.B, addr string, clients int) {
	s := benchServer(b, addr)
	to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), s.Addr().Port())
	p := s.cfg.Profile
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	b.ReportAllocs()
	b.ResetTimer()
	begin := time.Now()
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			buf := make([]byte, 4096)
			req := make([]byte, 0, 64)
			seq := uint16(0)
			for next.Add(1) <= int64(b.N) {
				seq++
				if seq&1 == 0 {
					req = udpwire.AppendListRooms(req[:0], p, seq)
				} else {
					req = udpwire.AppendJoinRoom(req[:0], p, seq, uint32(1+(int(seq)+g)%100))
				}
				for {
					if _, err := c.WriteToUDPAddrPort(req, to); err != nil {
						errs <- err
						return
					}
					c.SetReadDeadline(time.Now().Add(time.Second))
					n, _, err := c.ReadFromUDPAddrPort(buf)
					if err != nil { // lost: retry (same seq, so it is replayed, not redone)
						continue
					}
					if n < 4 || buf[2] != byte(seq>>8) || buf[3] != byte(seq) {
						continue
					}
					break
				}
			}
		}(g)
	}
	wg.Wait()
	el := time.Since(begin)
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
