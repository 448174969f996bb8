package refserver_test

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	reftcp "github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
)

const ioTimeout = 10 * time.Second

func fast() refserver.Config {
	c := refserver.Loopback()
	refudp.ConfigOf(c).CountdownInterval = time.Millisecond
	reftcp.ConfigOf(c).CountdownInterval = time.Millisecond
	return c
}

// udpReq sends one datagram to addr from a fresh socket and decodes the reply.
func udpReq(t *testing.T, conn *net.UDPConn, addr netip.AddrPort, req []byte) udpwire.Message {
	t.Helper()
	if _, err := conn.WriteToUDPAddrPort(req, addr); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	conn.SetReadDeadline(time.Now().Add(ioTimeout))
	n, _, err := conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	var m udpwire.Message
	if err := (udpwire.Decoder{Dir: udpwire.ServerToClient}).Decode(buf[:n], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func udpSocket(t *testing.T) *net.UDPConn {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTCPHandsOverToUDP plays a one-player TCP room to GAME_START and then
// joins the UDP instance its address names: the contract between the two
// lobbies.
func TestTCPHandsOverToUDP(t *testing.T) {
	s, err := refserver.Start(context.Background(), fast())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Addr(udpwire.ProtocolName).IsValid() || !s.Addr(tcpwire.ProtocolName).IsValid() || s.Addr(udpwire.ProtocolName).Port() == 0 || s.Addr(tcpwire.ProtocolName).Port() == 0 {
		t.Fatalf("addresses %v %v", s.Addr(udpwire.ProtocolName), s.Addr(tcpwire.ProtocolName))
	}
	nc, err := net.Dial("tcp", s.Addr(tcpwire.ProtocolName).String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(ioTimeout))
	fw := tcpwire.NewFrameWriter(nc)
	fr := tcpwire.NewFrameReader(bufio.NewReader(nc), 1<<16)
	for _, m := range []tcpwire.Message{
		&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("r"), PlayerName: tcpwire.MakeName("p")},
		&tcpwire.ReadyReq{},
		&tcpwire.StartReq{},
	} {
		if err := fw.WriteMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	var gs *tcpwire.GameStart
	for gs == nil {
		p, err := fr.Next()
		if err != nil {
			t.Fatal(err)
		}
		m, err := tcpwire.Decode(p)
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *tcpwire.GameStart:
			gs = m
		case *tcpwire.ErrorMsg:
			t.Fatalf("ERROR_MSG %+v", m)
		}
	}
	inst, err := netip.ParseAddrPort(gs.ServerIP.String() + ":" + itoa(int(gs.UDPPort)))
	if err != nil {
		t.Fatalf("GAME_START address %q:%d: %v", gs.ServerIP.String(), gs.UDPPort, err)
	}
	// The instance is a room of the UDP lobby, with the TCP player's seat held.
	u := udpSocket(t)
	l := udpReq(t, u, s.Addr(udpwire.ProtocolName), udpwire.AppendListRooms(nil, udpwire.ProfileSpec, 1))
	rooms := l.Rooms.AppendRooms(nil)
	if len(rooms) != 1 || rooms[0].Port != inst.Port() || rooms[0].Players != 1 {
		t.Fatalf("UDP list %v, want one room on port %d with 1 held seat", rooms, inst.Port())
	}
	m := udpReq(t, u, inst, udpwire.AppendRaw(nil, udpwire.ProfileSpec,
		udpwire.Header{PacketType: udpwire.ClientToServer, Type: udpwire.ClientJoinRequest, Seq: 9}, nil))
	if m.Type != udpwire.ServerJoinAccept || m.Seq != 9 {
		t.Fatalf("instance answered %v seq %d", m.Type, m.Seq)
	}
	st := s.Stats()
	if refudp.StatsOf(st) == nil || reftcp.StatsOf(st) == nil || refudp.StatsOf(st).InstancesCreated != 1 || reftcp.StatsOf(st).GamesStarted != 1 || refudp.StatsOf(st).Players != 1 {
		t.Fatalf("stats %+v %+v", refudp.StatsOf(st), reftcp.StatsOf(st))
	}
	var b strings.Builder
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"udp-lobby.requests.LOBBY_LIST_ROOMS 1\n", "udp-lobby.instances 1\n", "tcp-lobby.games.started 1\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteText lacks %q:\n%s", want, b.String())
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestStartErrors(t *testing.T) {
	if _, err := refserver.Start(context.Background(), refserver.Config{}); err == nil {
		t.Error("started with nothing enabled")
	}
	tc := reftcp.DefaultConfig()
	tc.Addr = "127.0.0.1:0"
	if _, err := refserver.Start(context.Background(), refserver.Config{Parts: map[string]any{tcpwire.ProtocolName: &tc}}); err == nil {
		t.Error("TCP without UDP and without a pool started")
	}
	c := refserver.Loopback()
	refudp.ConfigOf(c).MaxInstances = 0
	if _, err := refserver.Start(context.Background(), c); err == nil || !strings.Contains(err.Error(), "MaxInstances") {
		t.Errorf("invalid UDP config: %v", err)
	}
	// A TCP failure must not leak the UDP server: its port is free again.
	c = refserver.Loopback()
	reftcp.ConfigOf(c).Addr = "256.0.0.1:0"
	if _, err := refserver.Start(context.Background(), c); err == nil {
		t.Error("bad TCP address accepted")
	}
}

func TestPartsAlone(t *testing.T) {
	c := refserver.Loopback()
	delete(c.Parts, tcpwire.ProtocolName)
	s, err := refserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr(tcpwire.ProtocolName).IsValid() || s.Part(tcpwire.ProtocolName) != nil || reftcp.StatsOf(s.Stats()) != nil {
		t.Error("TCP disabled yet present")
	}
	s.Close()

	c = refserver.Loopback()
	delete(c.Parts, udpwire.ProtocolName)
	reftcp.ConfigOf(c).Pool = reftcp.StaticPool{Addr: netip.MustParseAddrPort("127.0.0.1:9")}
	s, err = refserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr(udpwire.ProtocolName).IsValid() || refudp.StatsOf(s.Stats()) != nil {
		t.Error("UDP disabled yet present")
	}
	s.Close()
}

func TestContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := refserver.Start(ctx, refserver.Loopback())
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(ioTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(tcpwire.ProtocolName).String(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("TCP lobby still accepting after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close() // idempotent after the context closed it
}

// BenchmarkStartClose is the cost the embedded mode adds to a run.
func BenchmarkStartClose(b *testing.B) {
	for b.Loop() {
		s, err := refserver.Start(context.Background(), refserver.Loopback())
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
