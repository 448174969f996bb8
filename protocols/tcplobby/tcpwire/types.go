package tcpwire

import "strconv"

// Type is the packet type, the first payload byte (tcp-lobby.md §2.3).
type Type uint8

// Packet types of tcp-lobby.md §2.3.
const (
	TypeListRoomsReq  Type = 0x01
	TypeListRoomsAck  Type = 0x02
	TypeCreateRoomReq Type = 0x03
	TypeCreateRoomAck Type = 0x04
	TypeJoinRoomReq   Type = 0x05
	TypeJoinRoomAck   Type = 0x06
	TypeRoomUpdate    Type = 0x07
	TypeConnectReq    Type = 0x10
	TypeConnectAck    Type = 0x11
	TypePlayerJoin    Type = 0x12
	TypeReadyReq      Type = 0x13
	TypePlayerReady   Type = 0x14
	TypeStartReq      Type = 0x15
	TypeGameStart     Type = 0x16
	TypeDisconnect    Type = 0x17
	TypePlayerLeft    Type = 0x18
	TypeCountdown     Type = 0x19
	TypeErrorMsg      Type = 0x1F
)

// Constants of tcp-lobby.md §3.2 and §A.
const (
	DefaultPort     = 7777
	DefaultMaxFrame = 4096 // tcp-lobby.md §2.2: longer frames are rejected
	HeaderSize      = 4    // u32 little-endian payload length
	NameSize        = 32   // PLAYER_NAME_SIZE = ROOM_NAME_SIZE
	IPSize          = 16   // GameStartInfo.ServerIP char[16]
	MaxPlayers      = 4
	MaxRooms        = 16

	PlayerInfoSize    = 42
	RoomInfoSize      = 39
	GameStartInfoSize = 219

	SizeListRoomsReq       = 1
	SizeListRoomsAckHeader = 2 // + RoomCount × 39
	SizeCreateRoomReq      = 65
	SizeCreateRoomAck      = 13
	SizeJoinRoomReq        = 37
	SizeJoinRoomAckHeader  = 11 // + PlayerCount × 42
	SizeRoomUpdateHeader   = 2  // + PlayerCount × 42
	SizeConnectReq         = 33
	SizeConnectAck         = 10
	SizePlayerJoin         = 43
	SizeReadyReq           = 1
	SizePlayerReady        = 10
	SizeStartReq           = 1
	SizeGameStart          = 220
	SizeDisconnect         = 1
	SizePlayerLeft         = 9
	SizeCountdown          = 2
	SizeErrorMsgHeader     = 2                                                 // + message bytes (rest of the frame)
	MaxSizeListRoomsAck    = SizeListRoomsAckHeader + MaxRooms*RoomInfoSize    // 626
	MaxSizeJoinRoomAck     = SizeJoinRoomAckHeader + MaxPlayers*PlayerInfoSize // 179
	MaxSizeRoomUpdate      = SizeRoomUpdateHeader + MaxPlayers*PlayerInfoSize  // 170
	MaxErrorText           = DefaultMaxFrame - SizeErrorMsgHeader              // 4094
)

var typeNames = [256]string{
	TypeListRoomsReq:  "LIST_ROOMS_REQ",
	TypeListRoomsAck:  "LIST_ROOMS_ACK",
	TypeCreateRoomReq: "CREATE_ROOM_REQ",
	TypeCreateRoomAck: "CREATE_ROOM_ACK",
	TypeJoinRoomReq:   "JOIN_ROOM_REQ",
	TypeJoinRoomAck:   "JOIN_ROOM_ACK",
	TypeRoomUpdate:    "ROOM_UPDATE",
	TypeConnectReq:    "CONNECT_REQ",
	TypeConnectAck:    "CONNECT_ACK",
	TypePlayerJoin:    "PLAYER_JOIN",
	TypeReadyReq:      "READY_REQ",
	TypePlayerReady:   "PLAYER_READY",
	TypeStartReq:      "START_REQ",
	TypeGameStart:     "GAME_START",
	TypeDisconnect:    "DISCONNECT",
	TypePlayerLeft:    "PLAYER_LEFT",
	TypeCountdown:     "COUNTDOWN",
	TypeErrorMsg:      "ERROR_MSG",
}

// Types lists the 18 packet types in type-id order.
var Types = []Type{
	TypeListRoomsReq, TypeListRoomsAck, TypeCreateRoomReq, TypeCreateRoomAck,
	TypeJoinRoomReq, TypeJoinRoomAck, TypeRoomUpdate, TypeConnectReq, TypeConnectAck,
	TypePlayerJoin, TypeReadyReq, TypePlayerReady, TypeStartReq, TypeGameStart,
	TypeDisconnect, TypePlayerLeft, TypeCountdown, TypeErrorMsg,
}

// TypeNamed returns the packet type the seed calls name
// ("LIST_ROOMS_ACK"), and whether there is one.
func TypeNamed(name string) (Type, bool) {
	for _, t := range Types {
		if t.String() == name {
			return t, true
		}
	}
	return 0, false
}

// Known reports whether t is one of the 18 packet types.
func (t Type) Known() bool { return typeNames[t] != "" }

// String returns the seed's name, e.g. "JOIN_ROOM_ACK", or "0xNN".
func (t Type) String() string {
	if n := typeNames[t]; n != "" {
		return n
	}
	return "0x" + strconv.FormatUint(uint64(t)|0x100, 16)[1:]
}

// FixedSize returns the payload size of a fixed-size type and true, or 0 and
// false for the variable types (LIST_ROOMS_ACK, JOIN_ROOM_ACK, ROOM_UPDATE,
// ERROR_MSG) and unknown types.
func (t Type) FixedSize() (int, bool) {
	switch t {
	case TypeListRoomsReq, TypeReadyReq, TypeStartReq, TypeDisconnect:
		return 1, true
	case TypeCreateRoomReq:
		return SizeCreateRoomReq, true
	case TypeCreateRoomAck:
		return SizeCreateRoomAck, true
	case TypeJoinRoomReq:
		return SizeJoinRoomReq, true
	case TypeConnectReq:
		return SizeConnectReq, true
	case TypeConnectAck:
		return SizeConnectAck, true
	case TypePlayerJoin:
		return SizePlayerJoin, true
	case TypePlayerReady:
		return SizePlayerReady, true
	case TypeGameStart:
		return SizeGameStart, true
	case TypePlayerLeft:
		return SizePlayerLeft, true
	case TypeCountdown:
		return SizeCountdown, true
	}
	return 0, false
}

// CheckSize validates the framing-level shape of a payload without decoding
// it: non-empty, known type, and a length that matches the type (fixed size
// of Appendix A, header + count × entry with count within MAX_ROOMS /
// MAX_PLAYERS, or ERROR_MSG's 2-byte minimum). It returns the type. A server
// uses it to answer ERROR_MSG and close before dispatching. It never allocates
// on success.
func CheckSize(p []byte) (Type, error) {
	if len(p) == 0 {
		return 0, errf(RuleFrameEmpty, 0, -1, "empty payload")
	}
	t := Type(p[0])
	if !t.Known() {
		return t, errf(RuleTypeUnknown, 0, 0, "unknown packet type 0x%02x", p[0])
	}
	if n, ok := t.FixedSize(); ok {
		if len(p) != n {
			return t, errf(RuleSizeFixed, t, -1, "payload is %d bytes, want %d", len(p), n)
		}
		return t, nil
	}
	switch t {
	case TypeListRoomsAck:
		return t, checkCount(p, t, SizeListRoomsAckHeader, 1, RoomInfoSize, MaxRooms, RuleCountRooms)
	case TypeJoinRoomAck:
		return t, checkCount(p, t, SizeJoinRoomAckHeader, 10, PlayerInfoSize, MaxPlayers, RuleCountPlayers)
	case TypeRoomUpdate:
		return t, checkCount(p, t, SizeRoomUpdateHeader, 1, PlayerInfoSize, MaxPlayers, RuleCountPlayers)
	case TypeErrorMsg:
		if len(p) < SizeErrorMsgHeader {
			return t, errf(RuleSizeError, t, -1, "payload is %d bytes, want at least %d", len(p), SizeErrorMsgHeader)
		}
	}
	return t, nil
}

func checkCount(p []byte, t Type, hdr, countOff, entry, maxCount int, countRule string) error {
	if len(p) < hdr {
		return errf(RuleSizeCount, t, -1, "payload is %d bytes, shorter than the %d-byte header", len(p), hdr)
	}
	n := int(p[countOff])
	if n > maxCount {
		return errf(countRule, t, countOff, "count %d exceeds %d", n, maxCount)
	}
	if want := hdr + n*entry; len(p) != want {
		return errf(RuleSizeCount, t, -1, "payload is %d bytes, want %d for count %d", len(p), want, n)
	}
	return nil
}
