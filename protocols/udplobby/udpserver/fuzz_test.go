package udpserver

import (
	"net/netip"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// FuzzLobbyHandler feeds arbitrary datagrams to the lobby handler: it must
// never panic, must answer only well-formed requests, and every answer must
// be a well-formed reply echoing the request's sequence.
func FuzzLobbyHandler(f *testing.F) {
	p := udpwire.ProfileSpec
	f.Add(udpwire.AppendListRooms(nil, p, 1))
	f.Add(udpwire.AppendCreateRoom(nil, p, 2))
	f.Add(udpwire.AppendJoinRoom(nil, p, 3, 1))
	f.Add(udpwire.AppendJoinRoom(nil, p, 4, 0))
	f.Add(udpwire.AppendJoinFailed(nil, p, 5))
	f.Add([]byte{})
	cfg := testConfig()
	cfg.MaxInstances = 4
	s, err := Listen(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	from := netip.MustParseAddrPort("127.0.0.1:9")
	strict := udpwire.Decoder{Profile: p, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelLobby}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		out := s.handleLobby(pkt, from, s.now(), nil)
		var req udpwire.Message
		reqErr := strict.Decode(pkt, &req)
		if reqErr != nil {
			if len(out) != 0 {
				t.Fatalf("answered a malformed datagram (%v): % x", reqErr, out)
			}
			return
		}
		var rep udpwire.Message
		if err := (udpwire.Decoder{Profile: p, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelLobby}).Decode(out, &rep); err != nil {
			t.Fatalf("bad reply % x to % x: %v", out, pkt, err)
		}
		if rep.Seq != req.Seq {
			t.Fatalf("reply seq %d, request %d", rep.Seq, req.Seq)
		}
	})
}

// FuzzInstanceHandler does the same for an instance socket's handler; a
// CLIENT_READY once the countdown started is answered with the last state
// message, which keeps its original sequence.
func FuzzInstanceHandler(f *testing.F) {
	p := udpwire.ProfileSpec
	for _, t := range []udpwire.MsgType{udpwire.ClientHello, udpwire.ClientJoinRequest, udpwire.ClientReady} {
		b, _ := udpwire.AppendEmpty(nil, p, t, 1)
		f.Add(b)
	}
	f.Add(udpwire.AppendPing(nil, p, 7, 42))
	cfg := testConfig()
	cfg.CountdownInterval = 1 << 40 // never fires during the fuzz
	s, err := Listen(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	in, reason := s.newInstance(netip.Addr{}, 0, s.now())
	if in == nil {
		f.Fatal(reason)
	}
	from := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var m udpwire.Message
		if s.idec.Decode(pkt, &m) != nil {
			return // the read loop drops it before handle
		}
		s.mu.Lock()
		out := in.handle(&m, from, s.now(), nil)
		s.mu.Unlock()
		if len(out) == 0 {
			return
		}
		var rep udpwire.Message
		if err := (udpwire.Decoder{Profile: p, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelInstance}).Decode(out, &rep); err != nil {
			t.Fatalf("bad reply % x (%v) to % x", out, err, pkt)
		}
		if m.Type == udpwire.ClientReady {
			// The only answer to READY is the last state message again,
			// byte for byte, with the sequence it was first sent under.
			s.mu.Lock()
			last := string(in.last)
			s.mu.Unlock()
			switch rep.Type {
			case udpwire.ServerAllReady, udpwire.ServerCountdownTick, udpwire.ServerGameStart, udpwire.ServerGameEnd:
			default:
				t.Fatalf("READY answered with %v", rep.Type)
			}
			if string(out) != last {
				t.Fatalf("READY answered % x, last state message % x", out, last)
			}
			return
		}
		if rep.Seq != m.Seq {
			t.Fatalf("reply % x to % x: seq %d, want %d", out, pkt, rep.Seq, m.Seq)
		}
	})
}
