package udpserver

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// mutate returns a datagram derived from the valid ones: random bytes, or a
// valid request with a byte flipped, truncated, extended or its header
// fields randomised; half of the derived ones get their CRC recomputed, so
// the flood also reaches the checks after the CRC and sends well-formed
// requests with odd fields (CREATE, JOIN of random rooms, READY, …).
func mutate(r *rand.Rand, valid [][]byte, p udpwire.Profile, dst []byte) []byte {
	if r.IntN(4) == 0 {
		dst = dst[:r.IntN(64)]
		for i := range dst {
			dst[i] = byte(r.Uint32())
		}
		return dst
	}
	dst = append(dst[:0], valid[r.IntN(len(valid))]...)
	switch r.IntN(5) {
	case 0:
		dst[r.IntN(len(dst))] ^= byte(1 + r.IntN(255))
	case 1:
		dst = dst[:r.IntN(len(dst))]
	case 2:
		for range 1 + r.IntN(8) {
			dst = append(dst, byte(r.Uint32()))
		}
	case 3: // random message type and packet type
		off := 1
		if p == udpwire.ProfileRType17 {
			off = 6
		}
		dst[off] = byte(r.Uint32())
		if r.IntN(2) == 0 {
			dst[off-1] = byte(1 + r.IntN(2))
		}
	case 4: // random payload bytes, size kept
		hl := p.HeaderLen()
		for i := hl; i < len(dst)-udpwire.CRCLen; i++ {
			dst[i] = byte(r.Uint32())
		}
	}
	if len(dst) >= udpwire.CRCLen && r.IntN(2) == 0 {
		end := len(dst) - udpwire.CRCLen
		binary.BigEndian.PutUint32(dst[end:], crc32.ChecksumIEEE(dst[:end]))
	}
	return dst
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// sources returns loopback IPs other than 127.0.0.1 that can be bound.
func sources(t *testing.T, n int) []net.IP {
	var ips []net.IP
	for i := 2; i < 2+n; i++ {
		ip := net.IPv4(127, 0, 0, byte(i))
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
		if err != nil {
			break
		}
		c.Close()
		ips = append(ips, ip)
	}
	if len(ips) == 0 {
		t.Skip("only 127.0.0.1 is bindable")
	}
	return ips
}

// TestFloodLobbyAndInstance floods the lobby and an instance with random and
// mutated-valid datagrams from several source addresses (bounded in count
// and time, paced below what the server drains), while a well-behaved
// client on 127.0.0.1 runs LIST and PING in lockstep. Every request of the
// good client must be answered correctly on the first try (nothing lost,
// no retry), the flooders must be rate-limited without slowing it, the
// server must survive, and Close must leave no goroutine behind.
func TestFloodLobbyAndInstance(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		t.Run(prof.String(), func(t *testing.T) { flood(t, prof) })
	}
	eventually(t, "server goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
}

func flood(t *testing.T, prof udpwire.Profile) {
	ips := sources(t, 4)
	cfg := testConfig()
	cfg.Profile = prof
	cfg.SocketBuffer = 4 << 20
	cfg.MaxInstances = 8
	cfg.RateLimit = 300 // per IP: the good client (≤ 200/s) stays under it, each flooder does not
	cfg.RateBurst = 30
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	good := dial(t, s.Addr(), prof)
	id, port := good.create()
	if good.join(id) != port {
		t.Fatal("join failed")
	}
	inst := dial(t, at(port), prof)
	inst.expect(udpwire.ServerJoinAccept, inst.inst(udpwire.ClientJoinRequest, 0))

	valid := [][]byte{
		udpwire.AppendListRooms(nil, prof, 1),
		udpwire.AppendCreateRoom(nil, prof, 2),
		udpwire.AppendJoinRoom(nil, prof, 3, id),
		udpwire.AppendJoinRoom(nil, prof, 4, 0),
		udpwire.AppendPing(nil, prof, 5, 6),
		udpwire.AppendJoinFailed(nil, prof, 7),
	}
	for _, typ := range []udpwire.MsgType{udpwire.ClientHello, udpwire.ClientJoinRequest, udpwire.ClientReady, udpwire.ClientDisconnect} {
		b, err := udpwire.Append(nil, prof, &udpwire.Message{Header: udpwire.Header{Type: typ, Seq: 9}})
		if err != nil {
			t.Fatal(err)
		}
		valid = append(valid, b)
	}

	const perTarget = 10000
	deadline := time.Now().Add(3 * time.Second)
	stop := make(chan struct{})
	flooding := make(chan struct{})
	var wg sync.WaitGroup
	var sent [2]int
	for ti, target := range []uint16{s.Addr().Port(), port} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(ti), uint64(prof)))
			var conns []*net.UDPConn
			for _, ip := range ips {
				for range 4 { // several ports per IP: several sessions per bucket
					c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
					if err != nil {
						t.Error(err)
						return
					}
					defer c.Close()
					conns = append(conns, c)
				}
			}
			buf := make([]byte, 0, 128)
			to := at(target)
			for sent[ti] < perTarget && time.Now().Before(deadline) {
				for range 32 {
					buf = mutate(r, valid, prof, buf)
					conns[r.IntN(len(conns))].WriteToUDPAddrPort(buf, to)
					sent[ti]++
				}
				if ti == 0 { // a greedy but well-formed client on ips[0]: rate-limited
					for range 8 {
						conns[0].WriteToUDPAddrPort(valid[0], to)
						sent[ti]++
					}
				}
				select { // pace: ~32 datagrams per ms at most
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
	}

	go func() { wg.Wait(); close(flooding) }()

	// The good client, in lockstep at most every 5 ms, for as long as the
	// flood lasts: every reply must come, first try.
	seqs := 0
	pace := time.NewTicker(5 * time.Millisecond)
	defer pace.Stop()
	for i := 0; ; i++ {
		select {
		case <-flooding:
		case <-pace.C:
		}
		if i >= 10 && (isClosed(flooding) || time.Now().After(deadline)) {
			break
		}
		rooms := good.list()
		found := false
		for _, r := range rooms {
			if r.Players > r.MaxPlayers || !r.State.Valid() {
				t.Fatalf("bad room entry %+v", r)
			}
			if r.ID == id {
				found = r.Port == port
			}
		}
		if !found {
			t.Fatalf("room %d (port %d) missing or moved in %+v", id, port, rooms)
		}
		seq := inst.inst(udpwire.ClientPing, uint32(i))
		for {
			m := inst.reply()
			if m.Type == udpwire.ServerPlayerDisconnected {
				continue // a flooder that got a seat left again: legitimate news
			}
			if m.Type != udpwire.ServerPong || m.Seq != seq || m.Value != uint32(i) {
				t.Fatalf("PING %d seq %d answered %v seq %d value %d", i, seq, m.Type, m.Seq, m.Value)
			}
			break
		}
		seqs++
	}
	close(stop)
	<-flooding
	st := s.Stats()
	var drops uint64
	for _, v := range st.Drops {
		drops += v
	}
	t.Logf("%d good rounds; flood %d lobby + %d instance datagrams; drops %v; requests %v", seqs, sent[0], sent[1], st.Drops, st.Requests)
	if drops == 0 || st.RateLimited == 0 {
		t.Fatalf("flood neither dropped nor rate-limited: %+v", st)
	}
	if st.Drops[string(udpwire.RuleCRC)] == 0 {
		t.Fatalf("no CRC drop counted: %v", st.Drops)
	}
	// The good client's room and seat survived the flood.
	s.mu.Lock()
	in := s.rooms[id]
	joined := in != nil && in.player(inst.conn.LocalAddr().(*net.UDPAddr).AddrPort()) != nil
	s.mu.Unlock()
	if !joined {
		t.Fatal("the good client lost its seat")
	}
}
