package udpcases

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §7 LOBBY_ROOM_CREATED.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/7/1", Protocol: ProtoUDP, Section: secRoomCreated, Rule: string(udpwire.RulePayloadSize), Level: conformance.Must,
		Owns:        []string{"LOBBY_ROOM_CREATED payload"},
		Desc:        "LOBBY_ROOM_CREATED is 18 bytes: payloadSize 6, u32 roomId ≠ 0, u16 port ≠ 0",
		Requirement: "payloadSize: 6 … uint32_t: roomId, uint16_t: port … Total Size: 8 + 6 + 4 = 18 bytes",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			if rs.create == nil || rs.create.reply.typ != udpwire.LobbyRoomCreated {
				return conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED", conformance.Skipf("LOBBY_CREATE_ROOM was not answered with LOBBY_ROOM_CREATED"))
			}
			return checkRoomRef(t, rs.create.reply, 0)
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/7/2", Protocol: ProtoUDP, Section: secRoomCreated, Rule: string(udpwire.RuleRoomPort), Level: conformance.Must,
		Desc:        "the port of LOBBY_ROOM_CREATED lies within the target's instance range (--instance-ports)",
		Requirement: "a returned port must be non-zero, stable for the room, within the target's configured instance range when one is given (udp-lobby.md §7)",
		Run: func(t *conformance.T) error {
			pr := udpOptions(t.Env).InstancePorts
			if pr.IsZero() {
				return conformance.Skipf("no --instance-ports given")
			}
			rs, err := replies(t)
			if err != nil {
				return err
			}
			if rs.port == 0 {
				return conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED", conformance.Skipf("no room was created"))
			}
			if !pr.Contains(rs.port) {
				return conformance.Failf("a port in "+pr.String(), "port %d", rs.port)
			}
			return nil
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/7/3", Protocol: ProtoUDP, Section: secRoomCreated, Level: conformance.Must,
		Owns:        []string{"a stable room port"},
		Desc:        "the room's port is stable: the list and a LOBBY_JOIN_SUCCESS give the port its creation returned",
		Requirement: "the port a join returns equals the port its creation returned (udp-lobby.md §7)",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			if rs.port == 0 {
				return conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED", conformance.Skipf("no room was created"))
			}
			var bad []string
			checked := 0
			if rs.list != nil {
				if rooms, ok := rs.list.reply.rooms(); ok {
					if r, ok := findRoom(rooms, rs.roomID); ok {
						checked++
						if r.Port != rs.port {
							bad = append(bad, fmt.Sprintf("the list gives port %d", r.Port))
						}
					}
				}
			}
			if rs.joinOK != nil && rs.joinOK.reply.typ == udpwire.LobbyJoinSuccess {
				if _, p, ok := rs.joinOK.reply.roomRef(); ok {
					checked++
					if p != rs.port {
						bad = append(bad, fmt.Sprintf("LOBBY_JOIN_SUCCESS gives port %d", p))
					}
				}
			}
			if checked == 0 {
				return conformance.Owned(ProtoUDP, "a created room in LOBBY_ROOM_LIST", conformance.Skipf("neither the list nor a join showed the room"))
			}
			if len(bad) > 0 {
				return conformance.Fail(fmt.Sprintf("port %d everywhere for room %d", rs.port, rs.roomID), strings.Join(bad, "; "))
			}
			return nil
		},
	})
}

// checkRoomRef checks the size and fields of ROOM_CREATED / JOIN_SUCCESS;
// wantID, when non-zero, is the roomId the reply must carry.
func checkRoomRef(t *conformance.T, m rawMsg, wantID uint32) error {
	var bad []string
	want := headerProfile(t.Env).PacketLen(6)
	if len(m.b) != want {
		bad = append(bad, fmt.Sprintf("%d bytes, want %d", len(m.b), want))
	}
	if m.psize != 6 {
		bad = append(bad, fmt.Sprintf("payloadSize %d, want 6", m.psize))
	}
	id, port, ok := m.roomRef()
	if !ok {
		bad = append(bad, fmt.Sprintf("payload of %d bytes cannot hold roomId and port", len(m.payload)))
	} else {
		if id == 0 {
			bad = append(bad, "roomId 0")
		}
		if wantID != 0 && id != wantID {
			bad = append(bad, fmt.Sprintf("roomId %d, requested %d", id, wantID))
		}
		if port == 0 {
			bad = append(bad, "port 0")
		}
	}
	if len(bad) > 0 {
		return conformance.Fail(fmt.Sprintf("%v of %d bytes with payloadSize 6, non-zero roomId and port", m.typ, want), strings.Join(bad, ", "))
	}
	t.Notef("roomId %d, port %d", id, port)
	return nil
}
