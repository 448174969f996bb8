package tcpwire

import "fmt"

// Salvage reads, from a payload p that did not decode (a wrong size, or a
// bad string, bool, status or slot number), the fields a client's flow
// needs where they can still be read, for a client that carries on after
// counting the violation. It returns the message (fields that could not be
// read are zero), a note on what was read and what is missing, and ok;
// ok is false when nothing usable is there: an unknown type, a payload too
// short for the field the flow needs, or a message no flow reads fields of.
//
// What is read:
//
//   - a payload of the right size: decoded with Options.Lenient;
//   - CONNECT_ACK (1+): Success from byte 1, PlayerHash if bytes 2-9 are there;
//   - CREATE_ROOM_ACK of exactly 6 bytes: Type, a status byte, RoomID u32,
//     the layout a server gets by giving it JOIN_ROOM_ACK's Status (seen
//     in the wild); no PlayerHash. The status is only noted: RoomID 0 is
//     the failure, as tcp-lobby.md says;
//   - CREATE_ROOM_ACK of another size from 5 bytes: RoomID at its offset
//     (bytes 1-4), PlayerHash if bytes 5-12 are there;
//   - JOIN_ROOM_ACK (2+): Status, then PlayerHash and the PlayerInfo
//     entries that are whole;
//   - LIST_ROOMS_ACK (2+): the RoomInfo entries that are whole, up to
//     RoomCount;
//   - COUNTDOWN (2+): Seconds; PLAYER_READY (9+): PlayerHash, and Ready
//     (true when byte 9 is missing: the frame announces readiness).
//
// Bytes beyond what a message holds are ignored.
func Salvage(p []byte) (m Message, note string, ok bool) {
	if len(p) == 0 || !Type(p[0]).Known() {
		return nil, "", false
	}
	t := Type(p[0])
	lenient := Options{Lenient: true}
	if _, err := CheckSize(p); err == nil {
		m := New(t)
		if m.DecodeOpts(p, lenient) == nil {
			return m, "decoded leniently", true
		}
		return nil, "", false
	}
	n := len(p)
	switch t {
	case TypeConnectAck:
		if n < 2 {
			break
		}
		a := &ConnectAck{Success: p[1] != 0}
		if n >= 10 {
			a.PlayerHash = le.Uint64(p[2:10])
			return a, fmt.Sprintf("%d-byte CONNECT_ACK: Success and PlayerHash read", n), true
		}
		return a, fmt.Sprintf("%d-byte CONNECT_ACK: Success read, no PlayerHash", n), true
	case TypeCreateRoomAck:
		return salvageCreateRoomAck(p)
	case TypeJoinRoomAck:
		return salvageJoinRoomAck(p)
	case TypeListRoomsAck:
		return salvageListRoomsAck(p)
	case TypeCountdown:
		if n >= 2 {
			return &Countdown{Seconds: p[1]}, fmt.Sprintf("%d-byte COUNTDOWN: Seconds read", n), true
		}
	case TypePlayerReady:
		if n >= 9 {
			a := &PlayerReady{PlayerHash: le.Uint64(p[1:9]), Ready: n < 10 || p[9] != 0}
			return a, fmt.Sprintf("%d-byte PLAYER_READY: PlayerHash and Ready read", n), true
		}
	}
	return nil, "", false
}

// salvageCreateRoomAck reads what it can of a CREATE_ROOM_ACK of a wrong
// size (see Salvage).
func salvageCreateRoomAck(p []byte) (Message, string, bool) {
	n := len(p)
	if n == 6 {
		a := &CreateRoomAck{RoomID: le.Uint32(p[2:6])}
		return a, fmt.Sprintf("6-byte CREATE_ROOM_ACK read as Type, Status 0x%02x, RoomID %d; no PlayerHash", p[1], a.RoomID), true
	}
	if n < 5 {
		return nil, "", false
	}
	a := &CreateRoomAck{RoomID: le.Uint32(p[1:5])}
	if n >= 13 {
		a.PlayerHash = le.Uint64(p[5:13])
		return a, fmt.Sprintf("%d-byte CREATE_ROOM_ACK: RoomID %d and PlayerHash read", n, a.RoomID), true
	}
	return a, fmt.Sprintf("%d-byte CREATE_ROOM_ACK: RoomID %d read, no PlayerHash", n, a.RoomID), true
}

// salvageJoinRoomAck reads Status, PlayerHash and the whole PlayerInfo
// entries of a JOIN_ROOM_ACK of a wrong size.
func salvageJoinRoomAck(p []byte) (Message, string, bool) {
	n := len(p)
	t := Type(p[0])
	lenient := Options{Lenient: true}
	if n < 2 {
		return nil, "", false
	}
	a := &JoinRoomAck{Status: JoinStatus(p[1])}
	if n < 10 {
		return a, fmt.Sprintf("%d-byte JOIN_ROOM_ACK: Status %v read, no PlayerHash or players", n, a.Status), true
	}
	a.PlayerHash = le.Uint64(p[2:10])
	if n >= SizeJoinRoomAckHeader {
		want := min(int(p[10]), MaxPlayers)
		for i := 0; i < want && SizeJoinRoomAckHeader+(i+1)*PlayerInfoSize <= n; i++ {
			if decodePlayer(&a.Players[i], p, t, SizeJoinRoomAckHeader+i*PlayerInfoSize, true, &lenient) != nil {
				break
			}
			a.Count++
		}
	}
	return a, fmt.Sprintf("%d-byte JOIN_ROOM_ACK: Status %v, PlayerHash and %d whole player entries read", n, a.Status, a.Count), true
}

// salvageListRoomsAck reads the whole RoomInfo entries of a
// LIST_ROOMS_ACK of a wrong size, up to RoomCount.
func salvageListRoomsAck(p []byte) (Message, string, bool) {
	n := len(p)
	t := Type(p[0])
	lenient := Options{Lenient: true}
	if n < 2 {
		return nil, "", false
	}
	a := &ListRoomsAck{}
	want := min(int(p[1]), MaxRooms)
	for i := 0; i < want && SizeListRoomsAckHeader+(i+1)*RoomInfoSize <= n; i++ {
		if decodeRoom(&a.Rooms[i], p, t, SizeListRoomsAckHeader+i*RoomInfoSize, &lenient) != nil {
			break
		}
		a.Count++
	}
	return a, fmt.Sprintf("%d-byte LIST_ROOMS_ACK: %d of %d rooms read whole", n, a.Count, p[1]), true
}
