package udpcases

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §5 LOBBY_ROOM_LIST, with its decisions.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/5/1", Protocol: ProtoUDP, Section: secRoomList, Rule: string(udpwire.RuleRoomListCount), Level: conformance.Must,
		Owns:        []string{"LOBBY_ROOM_LIST"},
		Desc:        "LOBBY_ROOM_LIST payload is u16 roomCount then 11-byte entries: payloadSize = 2 + 11 × roomCount",
		Requirement: "uint16_t: roomCount … For each room: uint32_t roomId, uint16_t playerCount, uint16_t maxPlayers, uint16_t port, uint8_t state (udp-lobby.md §5: the fields are normative, 11 bytes per entry)",
		Run:         udpRoomListLayout,
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/5/2", Protocol: ProtoUDP, Section: secRoomList, Rule: "U-ROOM-*", Level: conformance.Must,
		Desc:        "every room list entry is valid: roomId ≠ 0, port ≠ 0 (within --instance-ports), state 0-3, playerCount ≤ maxPlayers",
		Requirement: "A room list entry has playerCount <= maxPlayers and a valid state (udp-lobby.md §5); RoomState Waiting = 0, Countdown = 1, Playing = 2, Finished = 3",
		Run:         udpRoomListEntries,
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/5/3", Protocol: ProtoUDP, Section: secRoomList, Level: conformance.Must,
		Owns:        []string{"a created room in LOBBY_ROOM_LIST"},
		Desc:        "a created room appears in the next list, Waiting, with the port its creation returned",
		Requirement: "a created room appears in the next list (udp-lobby.md §5); \"Add room to lobbyManager_ with Waiting state\" (udp-lobby.md §5, from Lobby System §4.2)",
		Run:         udpRoomListAfterCreate,
	})
}

func udpRoomListLayout(t *conformance.T) error {
	rs, err := replies(t)
	if err != nil {
		return err
	}
	m, err := expect(rs.list, rs.listErr, "LOBBY_ROOM_LIST", udpwire.LobbyRoomList)
	if err != nil {
		return conformance.Precondition("list rooms", err)
	}
	if rooms, ok := m.rooms(); ok {
		t.Notef("%d rooms, payload %d bytes", len(rooms), len(m.payload))
		return nil
	}
	actual := fmt.Sprintf("payload of %d bytes: % x", len(m.payload), m.payload)
	if len(m.payload) > 64 {
		actual = fmt.Sprintf("payload of %d bytes: %s", len(m.payload), conformance.HexShort(m.payload))
	}
	if len(m.payload) >= 2 {
		n := int(m.payload[0])<<8 | int(m.payload[1])
		actual = fmt.Sprintf("roomCount %d but %d payload bytes (2 + 11 × %d = %d); %s", n, len(m.payload), n, 2+11*n, actual)
	}
	if d := listDiagnosis(headerProfile(t.Env), m); d != "" {
		actual += "; diagnosis: " + d
	}
	return conformance.Fail("payloadSize = 2 + 11 × roomCount", actual)
}

// listDiagnosis asks the wire package which known wrong layout the list
// fits (the Lobby System page's, or 13-byte padded entries), judging the payload only:
// the trailer and header are first made right in a copy.
func listDiagnosis(p udpwire.Profile, m rawMsg) string {
	payload := append([]byte(nil), m.payload...)
	if len(payload) > udpwire.MaxPayload {
		return ""
	}
	h := udpwire.Header{PacketType: udpwire.ServerToClient, Type: udpwire.LobbyRoomList, Seq: m.seq,
		PayloadSize: uint16(len(payload)), OriginalSize: uint16(len(payload))}
	b := udpwire.AppendRaw(nil, p, h, payload)
	var msg udpwire.Message
	err := udpwire.Decoder{Profile: p, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelLobby}.Decode(b, &msg)
	var e *udpwire.Error
	if !errors.As(err, &e) {
		return ""
	}
	switch e.Diagnosis {
	case udpwire.DiagLobbySystem:
		return "the payload fits the layout of the Lobby System page (u32 roomCount, 15-byte entries: roomId, port, state, u32 playerCount, u32 maxPlayers), not the layout of udp-lobby.md §5 (" + udpwire.DiagLobbySystem + ")"
	case udpwire.DiagPadded13:
		return "the entries are padded to the 13 bytes the protocol page's prose states (udp-lobby.md §5); the fields make 11 (" + udpwire.DiagPadded13 + ")"
	}
	return e.Diagnosis
}

func udpRoomListEntries(t *conformance.T) error {
	rs, err := replies(t)
	if err != nil {
		return err
	}
	m, err := expect(rs.list, rs.listErr, "LOBBY_ROOM_LIST", udpwire.LobbyRoomList)
	if err != nil {
		return conformance.Precondition("list rooms", err)
	}
	rooms, ok := m.rooms()
	if !ok {
		return conformance.Owned(ProtoUDP, "LOBBY_ROOM_LIST", conformance.Skipf("the room list does not have the canonical layout"))
	}
	if len(rooms) == 0 {
		return conformance.Skipf("the list holds no room to check")
	}
	var bad []string
	for i, r := range rooms {
		var e []string
		if r.ID == 0 {
			e = append(e, "roomId 0")
		}
		if r.Port == 0 {
			e = append(e, "port 0")
		} else if pr := udpOptions(t.Env).InstancePorts; !pr.IsZero() && !pr.Contains(r.Port) {
			e = append(e, fmt.Sprintf("port %d outside --instance-ports %v", r.Port, pr))
		}
		if !r.State.Valid() {
			e = append(e, fmt.Sprintf("state %d", uint8(r.State)))
		}
		if r.Players > r.MaxPlayers {
			e = append(e, fmt.Sprintf("playerCount %d > maxPlayers %d", r.Players, r.MaxPlayers))
		}
		if len(e) > 0 {
			bad = append(bad, fmt.Sprintf("room #%d (id %d): %s", i, r.ID, strings.Join(e, ", ")))
		}
	}
	if len(bad) > 0 {
		return conformance.Fail("valid entries", strings.Join(bad, "; "))
	}
	t.Notef("%d entries checked", len(rooms))
	return nil
}

func udpRoomListAfterCreate(t *conformance.T) error {
	rs, err := replies(t)
	if err != nil {
		return err
	}
	if rs.roomID == 0 {
		return conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED", conformance.Skipf("no room was created"))
	}
	m, err := expect(rs.list, rs.listErr, "LOBBY_ROOM_LIST", udpwire.LobbyRoomList)
	if err != nil {
		return conformance.Precondition("list rooms", err)
	}
	rooms, ok := m.rooms()
	if !ok {
		return conformance.Owned(ProtoUDP, "LOBBY_ROOM_LIST", conformance.Skipf("the room list does not have the canonical layout"))
	}
	r, ok := findRoom(rooms, rs.roomID)
	if !ok {
		return conformance.Failf(fmt.Sprintf("room %d (just created) in the list", rs.roomID), "%d rooms listed, room %d not among them", len(rooms), rs.roomID)
	}
	var bad []string
	if r.Port != rs.port {
		bad = append(bad, fmt.Sprintf("port %d, creation returned %d", r.Port, rs.port))
	}
	if r.State != udpwire.Waiting {
		bad = append(bad, fmt.Sprintf("state %v", r.State))
	}
	if len(bad) > 0 {
		return conformance.Fail(fmt.Sprintf("room %d listed Waiting on port %d", rs.roomID, rs.port), strings.Join(bad, ", "))
	}
	return nil
}
