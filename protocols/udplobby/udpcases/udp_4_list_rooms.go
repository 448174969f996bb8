package udpcases

import (
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §4 LOBBY_LIST_ROOMS.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/4/1", Protocol: ProtoUDP, Section: secListRooms, Level: conformance.Must,
		Desc:        "LOBBY_LIST_ROOMS (12 bytes, empty payload) is answered with LOBBY_ROOM_LIST",
		Requirement: "1. Client → Lobby: LOBBY_LIST_ROOMS 2. Lobby → Client: LOBBY_ROOM_LIST (with N rooms)",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			_, err = expect(rs.list, rs.listErr, "LOBBY_ROOM_LIST", udpwire.LobbyRoomList)
			return err
		},
	})
}
