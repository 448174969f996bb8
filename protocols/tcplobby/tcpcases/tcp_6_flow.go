package tcpcases

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// tcp-lobby.md §6 Connection flow.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/6.3/1", Protocol: ProtoTCP, Section: secTCPFlow, Level: conformance.Must,
		Rule:        "T-GAME-START-HOST",
		Owns:        []string{"GAME_START"},
		Desc:        "four players ready, the host starts: COUNTDOWN 3, 2, 1 then GAME_START (220 bytes, the players, a UDP address on the target's host or one --allow-redirect allows) reach every member",
		Requirement: "[All players ready] START_REQ (Host only) … COUNTDOWN (3) (2) (1) … GAME_START (serverIP, udpPort, ...) to the client and Other Clients",
		Run:         runTCP6_3_1,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/6.3/2", Protocol: ProtoTCP, Section: secTCPFlow, Level: conformance.Should,
		Desc:        "the UDP address in GAME_START answers CLIENT_HELLO (the hand-over to the game instance)",
		Requirement: "[Transition to UDP Game Protocol]; On GAME_START, connect to UDP game server (§8.7); GAME_START carrying the UDP instance's address and port (tcp-lobby.md §5.4)",
		Run:         runTCP6_3_2,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/6.4/1", Protocol: ProtoTCP, Section: secTCPFlow, Level: conformance.Must,
		Desc:        "DISCONNECT makes PLAYER_LEFT (9 bytes, the leaver's hash) reach the remaining members",
		Requirement: "DISCONNECT → PLAYER_LEFT to Other Clients; PLAYER_LEFT (0x18) Broadcast when player leaves room, Total: 9 bytes",
		Run:         runTCP6_4_1,
	})
}

func runTCP6_3_1(t *conformance.T) error {
	g, err := tcpGameFx(t)
	if err != nil {
		return err
	}
	if g.startRefused != "" && !g.started[0] {
		return conformance.Skipf("the server could not start the game: %s", g.startRefused)
	}
	var bad []string
	for i := range g.clients {
		var secs []string
		for _, p := range g.received(i, tcpwire.TypeCountdown) {
			if len(p) == 2 {
				secs = append(secs, fmt.Sprint(p[1]))
			}
		}
		if strings.Join(secs, ",") != "3,2,1" {
			bad = append(bad, fmt.Sprintf("player %d got COUNTDOWN %s", i+1, orNone(secs)))
		}
		if !g.started[i] {
			bad = append(bad, fmt.Sprintf("player %d got no GAME_START within %v", i+1, tcpStartWait))
			continue
		}
		var m tcpwire.GameStart
		if err := decodeAs(g.gameStart[i], &m); err != nil {
			bad = append(bad, fmt.Sprintf("player %d: %v", i+1, err))
			continue
		}
		if int(m.PlayerCount) != len(g.clients) {
			bad = append(bad, fmt.Sprintf("player %d: GAME_START PlayerCount %d", i+1, m.PlayerCount))
		}
		have := map[uint64]bool{}
		for _, pi := range m.Players {
			have[pi.Hash] = true
		}
		for j, h := range g.hashes {
			if !have[h] {
				bad = append(bad, fmt.Sprintf("player %d: GAME_START lacks player %d", i+1, j+1))
			}
		}
		ip, err := netip.ParseAddr(m.ServerIP.String())
		if err != nil || m.UDPPort == 0 {
			bad = append(bad, fmt.Sprintf("player %d: GAME_START address %q port %d", i+1, m.ServerIP.String(), m.UDPPort))
		} else if _, err := t.Env.Follow(netip.AddrPortFrom(ip, m.UDPPort)); err != nil {
			bad = append(bad, fmt.Sprintf("player %d: GAME_START: %v", i+1, err))
		}
	}
	if len(bad) > 0 {
		return conformance.Fail("COUNTDOWN 3, 2, 1 and a GAME_START naming the 4 players and a UDP address lobbybench may follow, at every member", strings.Join(bad, "; "))
	}
	return nil
}

func runTCP6_3_2(t *conformance.T) error {
	g, err := tcpGameFx(t)
	if err != nil {
		return err
	}
	if !g.started[0] {
		return conformance.Owned(ProtoTCP, "GAME_START", conformance.Skipf("no GAME_START"))
	}
	var m tcpwire.GameStart
	if decodeAs(g.gameStart[0], &m) != nil {
		return conformance.Owned(ProtoTCP, "Appendix A frame sizes", conformance.Skipf("GAME_START does not decode"))
	}
	ip, err := netip.ParseAddr(m.ServerIP.String())
	if err != nil || m.UDPPort == 0 {
		return conformance.Owned(ProtoTCP, "GAME_START", conformance.Skipf("GAME_START carries no usable address"))
	}
	// 0.0.0.0 means the lobby's own host (tcp-lobby.md §5.4); an
	// address elsewhere is not followed, and tcp-lobby/6.3/1 fails
	// it (T-GAME-START-HOST).
	dst, err := t.Env.Follow(netip.AddrPortFrom(ip, m.UDPPort))
	if err != nil {
		return conformance.Owned(ProtoTCP, "GAME_START", conformance.Skipf("%v", err))
	}
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		s, err := t.OpenUDP()
		if err != nil {
			return err
		}
		b, _ := udpwire.AppendEmpty(nil, prof, udpwire.ClientHello, instanceSeq())
		if err := s.Send(dst, b, "CLIENT_HELLO ("+prof.String()+" header)"); err != nil {
			s.Close()
			return err
		}
		r, err := s.Recv(dst, t.Env.Timeout)
		s.Close()
		if errors.Is(err, conformance.ErrSilence) {
			continue
		}
		if err != nil {
			return err
		}
		if typ, ok := instanceMsgType(r, prof); ok && typ == udpwire.ServerHello {
			t.Notef("%v answered SERVER_HELLO (%s header)", dst, prof)
			return nil
		}
		return conformance.Failf("SERVER_HELLO", "%s", conformance.HexShort(r))
	}
	return conformance.Failf(fmt.Sprintf("SERVER_HELLO from %v", dst), "no reply to CLIENT_HELLO in either header profile")
}

func runTCP6_4_1(t *conformance.T) error {
	host, ack, err := newRoom(t)
	if err != nil {
		return err
	}
	defer host.Close()
	guest, jack, err := joinRoom(t, ack.RoomID)
	if err != nil {
		return err
	}
	defer guest.Close()
	if err := guest.send(&tcpwire.Disconnect{}, "DISCONNECT"); err != nil {
		return err
	}
	p, err := host.waitFor(t.Env.Timeout, func(p []byte) bool {
		var m tcpwire.PlayerLeft
		return len(p) > 0 && tcpwire.Type(p[0]) == tcpwire.TypePlayerLeft && decodeAs(p, &m) == nil && m.PlayerHash == jack.PlayerHash
	})
	if errors.Is(err, conformance.ErrSilence) {
		return conformance.Failf(fmt.Sprintf("PLAYER_LEFT %#x at the host", jack.PlayerHash), "none within the timeout (received: %s)", typeNames(host.frames))
	}
	if err != nil {
		return err
	}
	if len(p) != tcpwire.SizePlayerLeft {
		return conformance.Failf("PLAYER_LEFT of 9 bytes", "%d bytes", len(p))
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func typeNames(frames [][]byte) string {
	var s []string
	for _, p := range frames {
		if len(p) > 0 {
			s = append(s, tcpwire.Type(p[0]).String())
		}
	}
	return orNone(s)
}

// instanceSeq numbers the CLIENT_HELLOs sent to the game's instance.
var instanceSeqs atomic.Uint32

func instanceSeq() uint16 { return uint16(instanceSeqs.Add(7919)) }

// instanceMsgType reads the message type of an instance's reply under
// profile p, leniently (whatever its CRC and sizes); ok is false when b
// is shorter than a header and CRC.
func instanceMsgType(b []byte, p udpwire.Profile) (typ udpwire.MsgType, ok bool) {
	if len(b) < p.HeaderLen()+udpwire.CRCLen {
		return 0, false
	}
	o := 0
	if p == udpwire.ProfileRType17 {
		o = 5
	}
	return udpwire.MsgType(b[o+1]), true
}
