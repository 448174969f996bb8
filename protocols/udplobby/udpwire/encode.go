package udpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The Append functions write one complete datagram (header, payload,
// CRC-32 trailer) to the end of dst and return the extended slice, like
// strconv.AppendInt. They allocate only when dst lacks capacity: reuse a
// buffer (dst[:0]) on the hot path. The typed helpers take the profile as
// configured by the caller and do not validate it: any value other than
// ProfileRType17 encodes the spec header. Their tickId (rtype17) is 0; use
// Append with Message.TickID for another.

// appendHeader writes the header with payloadSize = originalSize = n.
func appendHeader(dst []byte, p Profile, pt PacketType, t MsgType, seq uint16, tick uint32, n int) []byte {
	if p == ProfileRType17 {
		dst = append(dst, Magic[0], Magic[1], Magic[2], Magic[3], Version, byte(pt), byte(t), byte(seq>>8), byte(seq),
			byte(tick>>24), byte(tick>>16), byte(tick>>8), byte(tick))
	} else {
		dst = append(dst, byte(pt), byte(t), byte(seq>>8), byte(seq))
	}
	return append(dst, byte(n>>8), byte(n), byte(n>>8), byte(n))
}

// appendCRC appends the CRC-32/IEEE of dst[start:], big-endian.
func appendCRC(dst []byte, start int) []byte {
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

func appendEmpty(dst []byte, p Profile, t MsgType, seq uint16) []byte {
	start := len(dst)
	dst = appendHeader(dst, p, t.Dir(), t, seq, 0, 0)
	return appendCRC(dst, start)
}

func appendRoomRef(dst []byte, p Profile, t MsgType, seq uint16, roomID uint32, port uint16) []byte {
	start := len(dst)
	dst = appendHeader(dst, p, t.Dir(), t, seq, 0, 6)
	dst = binary.BigEndian.AppendUint32(dst, roomID)
	dst = binary.BigEndian.AppendUint16(dst, port)
	return appendCRC(dst, start)
}

func appendU32(dst []byte, p Profile, t MsgType, seq uint16, v uint32) []byte {
	start := len(dst)
	dst = appendHeader(dst, p, t.Dir(), t, seq, 0, 4)
	dst = binary.BigEndian.AppendUint32(dst, v)
	return appendCRC(dst, start)
}

// AppendListRooms appends a LOBBY_LIST_ROOMS request (12 bytes in spec).
func AppendListRooms(dst []byte, p Profile, seq uint16) []byte {
	return appendEmpty(dst, p, LobbyListRooms, seq)
}

// AppendCreateRoom appends a LOBBY_CREATE_ROOM request (12 bytes in spec).
func AppendCreateRoom(dst []byte, p Profile, seq uint16) []byte {
	return appendEmpty(dst, p, LobbyCreateRoom, seq)
}

// AppendJoinRoom appends a LOBBY_JOIN_ROOM request (16 bytes in spec).
func AppendJoinRoom(dst []byte, p Profile, seq uint16, roomID uint32) []byte {
	return appendU32(dst, p, LobbyJoinRoom, seq, roomID)
}

// AppendRoomCreated appends a LOBBY_ROOM_CREATED reply (18 bytes in spec).
func AppendRoomCreated(dst []byte, p Profile, seq uint16, roomID uint32, port uint16) []byte {
	return appendRoomRef(dst, p, LobbyRoomCreated, seq, roomID, port)
}

// AppendJoinSuccess appends a LOBBY_JOIN_SUCCESS reply (18 bytes in spec).
func AppendJoinSuccess(dst []byte, p Profile, seq uint16, roomID uint32, port uint16) []byte {
	return appendRoomRef(dst, p, LobbyJoinSuccess, seq, roomID, port)
}

// AppendJoinFailed appends a LOBBY_JOIN_FAILED reply (12 bytes in spec).
func AppendJoinFailed(dst []byte, p Profile, seq uint16) []byte {
	return appendEmpty(dst, p, LobbyJoinFailed, seq)
}

// ErrTooManyRooms is returned when a room list exceeds MaxRooms entries.
var ErrTooManyRooms = fmt.Errorf("udplobby: room list longer than %d entries", MaxRooms)

// AppendRoomList appends a LOBBY_ROOM_LIST reply (14 + 11n bytes in spec).
// The rooms are written as given, not validated. It fails only when
// len(rooms) > MaxRooms, leaving dst unchanged.
func AppendRoomList(dst []byte, p Profile, seq uint16, rooms []Room) ([]byte, error) {
	if len(rooms) > MaxRooms {
		return dst, ErrTooManyRooms
	}
	start := len(dst)
	dst = appendHeader(dst, p, ServerToClient, LobbyRoomList, seq, 0, 2+RoomEntryLen*len(rooms))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(rooms)))
	for _, r := range rooms {
		dst = appendRoom(dst, r)
	}
	return appendCRC(dst, start), nil
}

// AppendPing appends a CLIENT_PING carrying clientTime.
func AppendPing(dst []byte, p Profile, seq uint16, clientTime uint32) []byte {
	return appendU32(dst, p, ClientPing, seq, clientTime)
}

// AppendPong appends a SERVER_PONG echoing clientTime.
func AppendPong(dst []byte, p Profile, seq uint16, clientTime uint32) []byte {
	return appendU32(dst, p, ServerPong, seq, clientTime)
}

// AppendEmpty appends any message whose payload is empty (LIST_ROOMS,
// CREATE_ROOM, JOIN_FAILED, CLIENT_HELLO, SERVER_HELLO, …) with its own
// direction. For a type with a payload it fails and leaves dst unchanged.
func AppendEmpty(dst []byte, p Profile, t MsgType, seq uint16) ([]byte, error) {
	if n, ok := t.PayloadLen(); !ok || n != 0 {
		return dst, fmt.Errorf("udplobby: %v has a payload", t)
	}
	return appendEmpty(dst, p, t, seq), nil
}

// Append appends m as a well-framed datagram: header (payloadSize and
// originalSize computed, tickId from m.TickID in rtype17), payload, CRC.
// m.PacketType 0 means the type's own direction (MsgType.Dir); any other
// value is written as given, so tests can send a message the wrong way.
// It checks only what it cannot encode: an invalid profile, an unknown
// type, m.Compressed, a u8 Value over 255, a RoomList too long or not a
// whole number of entries. Semantic values (roomId 0, bad state) are written
// as given. On error dst is returned unchanged.
func Append(dst []byte, p Profile, m *Message) ([]byte, error) {
	if !p.Valid() {
		return dst, errProfile
	}
	info := &msgTable[m.Type]
	if info.kind == 0 {
		return dst, fmt.Errorf("udplobby: cannot encode unknown message type 0x%02x", uint8(m.Type))
	}
	if m.Compressed {
		return dst, errors.New("udplobby: cannot encode a compressed payload")
	}
	pt := m.PacketType
	if pt == 0 {
		pt = info.dir
	}
	n, _ := m.Type.PayloadLen()
	switch info.kind {
	case kindU8:
		if m.Value > 0xFF {
			return dst, fmt.Errorf("udplobby: %v value %d does not fit a byte", m.Type, m.Value)
		}
	case kindList:
		if len(m.Rooms.raw)%RoomEntryLen != 0 {
			return dst, errors.New("udplobby: room list bytes are not a whole number of entries")
		}
		if m.Rooms.Len() > MaxRooms {
			return dst, ErrTooManyRooms
		}
		n = 2 + len(m.Rooms.raw)
	}
	start := len(dst)
	dst = appendHeader(dst, p, pt, m.Type, m.Seq, m.TickID, n)
	switch info.kind {
	case kindRoomID:
		dst = binary.BigEndian.AppendUint32(dst, m.RoomID)
	case kindU32:
		dst = binary.BigEndian.AppendUint32(dst, m.Value)
	case kindRoomRef:
		dst = binary.BigEndian.AppendUint32(dst, m.RoomID)
		dst = binary.BigEndian.AppendUint16(dst, m.Port)
	case kindU8:
		dst = append(dst, byte(m.Value))
	case kindList:
		dst = binary.BigEndian.AppendUint16(dst, uint16(m.Rooms.Len()))
		dst = append(dst, m.Rooms.raw...)
	}
	return appendCRC(dst, start), nil
}

// AppendRaw appends a datagram built exactly from h and payload, with no
// checks: payloadSize, originalSize and the rtype17 compressed flag are
// written as given in h, whatever len(payload) is, and the CRC is computed
// over what was written. It exists to build malformed packets for
// conformance tests; use Append for real traffic.
func AppendRaw(dst []byte, p Profile, h Header, payload []byte) []byte {
	start := len(dst)
	if p == ProfileRType17 {
		v := byte(Version)
		if h.Compressed {
			v |= FlagCompressed
		}
		dst = append(dst, Magic[0], Magic[1], Magic[2], Magic[3], v)
	}
	dst = append(dst, byte(h.PacketType), byte(h.Type))
	dst = binary.BigEndian.AppendUint16(dst, h.Seq)
	if p == ProfileRType17 {
		dst = binary.BigEndian.AppendUint32(dst, h.TickID)
	}
	dst = binary.BigEndian.AppendUint16(dst, h.PayloadSize)
	dst = binary.BigEndian.AppendUint16(dst, h.OriginalSize)
	dst = append(dst, payload...)
	return appendCRC(dst, start)
}
