package udpserver

import (
	"net"
	"runtime"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// TestManyEndpointsBounded sends requests from thousands of distinct
// endpoints (several loopback IPs, a fresh port each) to the lobby and to an
// instance: the session table and the rate limiter's keys stay within
// their caps, an instance never holds more than MaxPlayers players, a
// well-behaved client is still answered, and a second wave of as many new
// endpoints does not grow the heap.
func TestManyEndpointsBounded(t *testing.T) {
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1)}, sources(t, 3)...)
	cfg := testConfig()
	cfg.SocketBuffer = 4 << 20
	cfg.MaxSessions = 64
	cfg.MaxRateKeys = 32
	cfg.RateKey = RateKeyIPPort
	cfg.RateLimit = 1000
	cfg.RateBurst = 10
	s := start(t, cfg)
	good := dial(t, s.Addr(), cfg.Profile)
	id, port := good.create()
	list := udpwire.AppendListRooms(nil, cfg.Profile, 1)
	join := udpwire.AppendJoinRoom(nil, cfg.Profile, 2, id)
	hello, _ := udpwire.AppendEmpty(nil, cfg.Profile, udpwire.ClientJoinRequest, 3)

	const perWave = 3000
	wave := func() {
		for i := range perWave {
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ips[i%len(ips)]})
			if err != nil {
				t.Fatal(err)
			}
			req := list
			if i%8 == 0 {
				req = join
			}
			c.WriteToUDPAddrPort(req, s.Addr())
			c.WriteToUDPAddrPort(hello, at(port))
			c.Close()
		}
		good.list() // the lobby is one FIFO loop: everything before it is handled
		inst := dial(t, at(port), cfg.Profile)
		inst.expect(udpwire.ServerHello, inst.inst(udpwire.ClientHello, 0))
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	wave()
	before := heap()
	wave()
	after := heap()
	st := s.Stats()
	t.Logf("sessions %d (max %d), rate keys %d (max %d, %d evicted), players %d, held %d; heap %d → %d",
		st.Sessions, cfg.MaxSessions, st.RateKeys, cfg.MaxRateKeys, st.RateKeysEvicted, st.Players, st.HeldSeats, before, after)
	if st.Sessions > cfg.MaxSessions || st.Sessions < cfg.MaxSessions/2 {
		t.Errorf("sessions %d, want at most (and near) %d", st.Sessions, cfg.MaxSessions)
	}
	if st.RateKeys > cfg.MaxRateKeys || st.RateKeysEvicted == 0 {
		t.Errorf("rate keys %d (max %d), evicted %d: the cap was not exercised or not kept", st.RateKeys, cfg.MaxRateKeys, st.RateKeysEvicted)
	}
	if st.Players+st.HeldSeats > cfg.MaxPlayers {
		t.Errorf("room holds %d players + %d seats, max %d", st.Players, st.HeldSeats, cfg.MaxPlayers)
	}
	// 3000 more sessions and keys kept grow it by about 190 KiB.
	if after > before+96<<10 {
		t.Errorf("heap grew %d bytes over a second wave of %d endpoints", after-before, perWave)
	}
}
