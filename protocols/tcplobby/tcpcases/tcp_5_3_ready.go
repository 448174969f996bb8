package tcpcases

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §5.3 Ready state management (and the PLAYER_JOIN broadcast it
// defines), with the broadcast decisions of tcp-lobby.md §5.3.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.3/1", Protocol: ProtoTCP, Section: secTCPReady, Level: conformance.Must,
		Owns:        []string{"PLAYER_READY"},
		Desc:        "READY_REQ makes PLAYER_READY (10 bytes, the sender's hash, Ready 1) reach every member, the sender included",
		Requirement: "PLAYER_READY (0x14) Broadcast when player ready state changes; PLAYER_READY … go to every member including the sender (tcp-lobby.md §5.3)",
		Run: func(t *conformance.T) error {
			g, err := tcpGameFx(t)
			if err != nil {
				return err
			}
			return g.checkBroadcast(tcpwire.TypePlayerReady, func(sender, receiver int) bool { return true },
				func(p []byte) (uint64, bool) {
					var m tcpwire.PlayerReady
					if decodeAs(p, &m) != nil || !m.Ready {
						return 0, false
					}
					return m.PlayerHash, true
				}, "PLAYER_READY about every member (the receiver included)")
		},
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.3/2", Protocol: ProtoTCP, Section: secTCPReady, Level: conformance.Must,
		Desc:        "a join makes PLAYER_JOIN (43 bytes, the joiner's PlayerInfo) reach the members already in the room",
		Requirement: "PLAYER_JOIN (0x12) Broadcast when new player joins room; PLAYER_JOIN goes to the members already in the room (tcp-lobby.md §5.3)",
		Run: func(t *conformance.T) error {
			g, err := tcpGameFx(t)
			if err != nil {
				return err
			}
			return g.checkBroadcast(tcpwire.TypePlayerJoin, func(joiner, receiver int) bool { return joiner > receiver && joiner > 0 },
				func(p []byte) (uint64, bool) {
					var m tcpwire.PlayerJoin
					if decodeAs(p, &m) != nil {
						return 0, false
					}
					return m.Player.Hash, true
				}, "PLAYER_JOIN about each later joiner")
		},
	})
}

// checkBroadcast checks that every receiver got a frame of typ about every
// sender for which want(sender, receiver) holds. A receiver that got
// ROOM_UPDATEs instead is a warning: the decisions accept either where the
// seed allows both.
func (g *tcpGame) checkBroadcast(typ tcpwire.Type, want func(sender, receiver int) bool, about func([]byte) (uint64, bool), expected string) error {
	var missing []string
	updatesOnly := true
	for r := range g.clients {
		got := map[uint64]bool{}
		for _, p := range g.received(r, typ) {
			if h, ok := about(p); ok {
				got[h] = true
			}
		}
		for s, h := range g.hashes {
			if want(s, r) && !got[h] {
				missing = append(missing, fmt.Sprintf("player %d got none about player %d", r+1, s+1))
				if len(g.received(r, tcpwire.TypeRoomUpdate)) == 0 {
					updatesOnly = false
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if updatesOnly {
		return conformance.Warnf(expected, "%v missing, ROOM_UPDATE sent instead: %s", typ, strings.Join(missing, "; "))
	}
	return conformance.Fail(expected, strings.Join(missing, "; "))
}
