package tcpclient

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// FuzzFrames feeds an arbitrary byte stream, as the server's, through the
// frame reader and the judge of a session in a room with a pending
// request: untrusted bytes must never panic.
func FuzzFrames(f *testing.F) {
	gs := &tcpwire.GameStart{ServerIP: tcpwire.MakeIP("127.0.0.1"), UDPPort: 4000, PlayerCount: 1}
	gs.Players[0] = tcpwire.PlayerInfo{Number: 1, Hash: 7}
	for _, m := range []tcpwire.Message{&tcpwire.ConnectAck{Success: true, PlayerHash: 7}, &tcpwire.ListRoomsAck{Count: 1},
		&tcpwire.Countdown{Seconds: 3}, gs, &tcpwire.PlayerLeft{PlayerHash: 9}, tcpwire.NewErrorMsg(3, "not host")} {
		f.Add(tcpwire.AppendFrame(nil, m), uint8(tcpwire.TypeConnectAck))
	}
	f.Add([]byte{0, 0, 0, 0}, uint8(tcpwire.TypeListRoomsAck))
	f.Add([]byte{0xff, 0xff, 0, 0, 1}, uint8(tcpwire.TypeCountdown))
	pl, err := scenario.Parse("fuzz.yaml", []byte("protocol: tcp-lobby\nload: {clients: 1, duration: 1s}\nflows:\n  - steps: [list]\n"))
	if err != nil {
		f.Fatal(err)
	}
	sh, err := simclient.NewShared(pl, netip.MustParseAddrPort("127.0.0.1:9"), metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer sh.Close()
	fac, _ := simclient.Lookup("tcp-lobby")
	ss, err := fac(sh, 0, &pl.Flows[0], netip.Addr{})
	if err != nil {
		f.Fatal(err)
	}
	s := ss.(*session)
	f.Fuzz(func(t *testing.T, stream []byte, pend uint8) {
		a, b := net.Pipe()
		defer a.Close()
		go func() { b.Write(stream); b.Close() }()
		s.fc = &frameConn{c: a, sw: sh.Sweeper, waker: sh.Sweeper.Add(a), buf: make([]byte, 8200)}
		defer sh.Sweeper.Remove(s.fc.waker)
		s.room, s.hash, s.pend = 3, 7, tcpwire.Type(pend)
		s.members = map[uint64]bool{7: true}
		for {
			p, err := s.fc.next(time.Now().Add(time.Second))
			if err != nil {
				return
			}
			s.handle(p)
		}
	})
}
