package udpclient

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// FuzzHandle feeds arbitrary datagrams, as if from the lobby or from the
// instance, to a session with a pending request: judging untrusted bytes
// must never panic, and a verdict is always one of the four.
func FuzzHandle(f *testing.F) {
	p := udpwire.ProfileSpec
	f.Add(udpwire.AppendListRooms(nil, p, 1), false, uint8(udpwire.LobbyListRooms))
	f.Add(udpwire.AppendRoomCreated(nil, p, 1, 5, 9000), false, uint8(udpwire.LobbyCreateRoom))
	f.Add(udpwire.AppendJoinSuccess(nil, p, 1, 5, 9000), false, uint8(udpwire.LobbyJoinRoom))
	rl, _ := udpwire.AppendRoomList(nil, p, 1, []udpwire.Room{{ID: 1, Players: 1, MaxPlayers: 4, Port: 9000}})
	f.Add(rl, false, uint8(udpwire.LobbyListRooms))
	f.Add(udpwire.AppendPong(nil, p, 1, 7), true, uint8(udpwire.ClientPing))
	tick, _ := udpwire.Append(nil, p, &udpwire.Message{Header: udpwire.Header{Type: udpwire.ServerCountdownTick}, Value: 2})
	f.Add(tick, true, uint8(udpwire.ClientHello))
	f.Add([]byte{0x02, 0x41, 0, 1}, false, uint8(udpwire.LobbyListRooms))

	pl, err := scenarioPlan()
	if err != nil {
		f.Fatal(err)
	}
	sh, err := simclient.NewShared(pl, netip.MustParseAddrPort("127.0.0.1:9"), metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer sh.Close()
	fac, _ := simclient.Lookup("udp-lobby")
	ss, err := fac(sh, 0, &pl.Flows[0], netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		f.Fatal(err)
	}
	defer ss.Close()
	s := ss.(*session)
	lobby := s.rt.lobby
	inst := netip.MustParseAddrPort("127.0.0.1:9000")
	f.Fuzz(func(t *testing.T, data []byte, fromInst bool, typ uint8) {
		s.inst = inst
		s.seq, s.sent = 1, 1
		s.p = pending{active: true, typ: udpwire.MsgType(typ), seq: 1, inst: fromInst, to: lobby, value: 7, roomID: 5}
		from := lobby
		if fromInst {
			from = inst
		}
		if v := s.handle(data, from); v > replyRefused {
			t.Fatalf("verdict %d", v)
		}
	})
}

func scenarioPlan() (*scenario.Plan, error) {
	return scenario.Parse("fuzz.yaml", []byte("protocol: udp-lobby\nload: {clients: 1, duration: 1s}\nflows:\n  - steps: [list_rooms]\n"))
}
