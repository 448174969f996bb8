package refserver_test

import (
	"context"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
)

// TestCloseLeavesNothing: with a UDP room joined, a TCP client connected
// and a countdown timer pending, Close stops both lobbies, frees the
// instance port and leaves no goroutine behind.
func TestCloseLeavesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := refserver.Loopback()
	refudp.ConfigOf(cfg).CountdownInterval = time.Hour // a timer still pending at Close
	s, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	uc := udpSocket(t)
	created := udpReq(t, uc, s.Addr(udpwire.ProtocolName), udpwire.AppendCreateRoom(nil, udpwire.ProfileSpec, 1))
	inst := netip.AddrPortFrom(s.Addr(udpwire.ProtocolName).Addr(), created.Port)
	udpReq(t, uc, inst, mustEmpty(t, udpwire.ClientJoinRequest, 2))
	uc.WriteToUDPAddrPort(mustEmpty(t, udpwire.ClientReady, 3), inst)
	for _, want := range []udpwire.MsgType{udpwire.ServerAllReady, udpwire.ServerCountdownTick} {
		if m := udpRead(t, uc); m.Type != want {
			t.Fatalf("got %v, want %v", m.Type, want)
		}
	}
	tc, err := net.Dial("tcp", s.Addr(tcpwire.ProtocolName).String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := tc.Write(tcpwire.AppendFrame(nil, &tcpwire.ListRoomsReq{})); err != nil {
		t.Fatal(err)
	}

	s.Close()
	if m := udpRead(t, uc); m.Type != udpwire.ServerDisconnect {
		t.Fatalf("player got %v at Close, want SERVER_DISCONNECT", m.Type)
	}
	// The instance port is free again.
	l, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(inst))
	if err != nil {
		t.Fatalf("instance port still bound after Close: %v", err)
	}
	l.Close()
	tc.Close()
	deadline := time.Now().Add(ioTimeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustEmpty(t *testing.T, typ udpwire.MsgType, seq uint16) []byte {
	t.Helper()
	b, err := udpwire.AppendEmpty(nil, udpwire.ProfileSpec, typ, seq)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func udpRead(t *testing.T, c *net.UDPConn) udpwire.Message {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(ioTimeout))
	n, _, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	var m udpwire.Message
	if err := (udpwire.Decoder{Dir: udpwire.ServerToClient}).Decode(buf[:n], &m); err != nil {
		t.Fatal(err)
	}
	return m
}
