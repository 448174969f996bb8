package udpcases

import (
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §9 LOBBY_JOIN_SUCCESS.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/9/1", Protocol: ProtoUDP, Section: secJoinSuccess, Rule: string(udpwire.RulePayloadSize), Level: conformance.Must,
		Desc:        "LOBBY_JOIN_SUCCESS is 18 bytes: payloadSize 6, the requested roomId, port ≠ 0",
		Requirement: "roomId (4 bytes): Confirmed room ID; port (2 bytes): UDP port where the game instance is listening … Total Size: 8 + 6 + 4 = 18 bytes",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			if rs.joinOK == nil || rs.joinOK.reply.typ != udpwire.LobbyJoinSuccess {
				return conformance.Owned(ProtoUDP, "LOBBY_JOIN_SUCCESS", conformance.Skipf("no LOBBY_JOIN_SUCCESS to look at"))
			}
			return checkRoomRef(t, rs.joinOK.reply, rs.roomID)
		},
	})
}
