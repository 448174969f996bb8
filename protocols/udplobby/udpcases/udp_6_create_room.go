package udpcases

import (
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §6 LOBBY_CREATE_ROOM (and the duplicate detection of the Lobby System page §7).

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/6/1", Protocol: ProtoUDP, Section: secCreateRoom, Level: conformance.Must,
		Owns:        []string{"LOBBY_ROOM_CREATED"},
		Desc:        "LOBBY_CREATE_ROOM (12 bytes, empty payload) is answered with LOBBY_ROOM_CREATED",
		Requirement: "1. Client → Lobby: LOBBY_CREATE_ROOM 2. Lobby → Client: LOBBY_ROOM_CREATED (roomId, port) OR LOBBY_JOIN_FAILED",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			m, err := expect(rs.create, rs.createErr, "LOBBY_ROOM_CREATED", udpwire.LobbyRoomCreated)
			if err != nil && m.typ == udpwire.LobbyJoinFailed {
				return noFreeInstance(t, rs.createRefused)
			}
			return err
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/6/2", Protocol: ProtoUDP, Section: secCreateRoom, Level: conformance.Should,
		Desc:        "a retried LOBBY_CREATE_ROOM (same endpoint, same sequenceId) does not create a second room",
		Requirement: "Sequence numbers are used for: … Detecting duplicate packets (udp-lobby.md §12); sessions allow \"Duplicate packet detection\" (udp-lobby.md §6, from Lobby System §7)",
		Run:         udpDuplicateCreate,
	})
}

func udpDuplicateCreate(t *conformance.T) error {
	x, refused, err := createExchange(t, "LOBBY_CREATE_ROOM")
	m, err := expect(x, err, "LOBBY_ROOM_CREATED", udpwire.LobbyRoomCreated)
	if err != nil {
		if x != nil {
			x.sock.Close()
		}
		if m.typ == udpwire.LobbyJoinFailed {
			return noFreeInstance(t, refused)
		}
		return conformance.Precondition("create a room", err)
	}
	defer x.sock.Close()
	id1, _, _ := m.roomRef()
	// The same datagram again from the same socket: a client whose reply
	// was lost retries exactly so.
	if err := x.sock.Send(t.Env.Addr, x.req, "the same LOBBY_CREATE_ROOM again (retry)"); err != nil {
		return err
	}
	m2, err := recvMessage(t, x.sock, t.Env.Addr, "the same LOBBY_CREATE_ROOM again (retry)")
	if errors.Is(err, conformance.ErrSilence) {
		t.Notef("the retry was dropped without a reply: no second room, but a client whose first reply was lost never learns its room")
		return nil
	}
	if err != nil {
		return err
	}
	id2, _, _ := m2.roomRef()
	switch {
	case m2.typ == udpwire.LobbyRoomCreated && id2 == id1:
		t.Notef("the retry was answered with the same room %d", id1)
		return nil
	case m2.typ == udpwire.LobbyRoomCreated:
		return conformance.Failf(fmt.Sprintf("the retry answered with room %d again (or dropped)", id1), "a second room %d was created", id2)
	}
	return conformance.Failf(fmt.Sprintf("the retry answered with room %d again (or dropped)", id1), "%v", m2)
}
