package udpcases

import (
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §8 LOBBY_JOIN_ROOM.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/8/1", Protocol: ProtoUDP, Section: secJoinRoom, Level: conformance.Must,
		Owns:        []string{"LOBBY_JOIN_SUCCESS"},
		Desc:        "LOBBY_JOIN_ROOM (16 bytes) of a Waiting room with space is answered with LOBBY_JOIN_SUCCESS",
		Requirement: "If room exists: Verify room is not full, Verify room is in Waiting or Countdown state, Build LOBBY_JOIN_SUCCESS packet with port (udp-lobby.md §8, from Lobby System §4.3)",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			if rs.roomID == 0 {
				return conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED", conformance.Skipf("no room was created"))
			}
			_, err = expect(rs.joinOK, rs.joinOKErr, "LOBBY_JOIN_SUCCESS", udpwire.LobbyJoinSuccess)
			return err
		},
	})
}
