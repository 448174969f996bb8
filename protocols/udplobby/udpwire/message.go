package udpwire

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// PacketType is the header's direction byte.
type PacketType uint8

const (
	// ClientToServer (0x01) marks a datagram sent by a client to the lobby
	// or to a game instance.
	ClientToServer PacketType = 0x01
	// ServerToClient (0x02) marks a datagram sent by the lobby or a game
	// instance to a client.
	ServerToClient PacketType = 0x02
)

// String returns "C→S", "S→C" or the hex value.
func (t PacketType) String() string {
	switch t {
	case ClientToServer:
		return "C→S"
	case ServerToClient:
		return "S→C"
	}
	return fmt.Sprintf("PacketType(0x%02x)", uint8(t))
}

// MsgType is the header's messageType byte.
type MsgType uint8

// Lobby messages (udp-lobby.md §2).
const (
	LobbyListRooms   MsgType = 0x40 // C→L, no payload
	LobbyRoomList    MsgType = 0x41 // L→C, u16 roomCount + 11-byte entries
	LobbyCreateRoom  MsgType = 0x42 // C→L, no payload
	LobbyRoomCreated MsgType = 0x43 // L→C, u32 roomId, u16 port
	LobbyJoinRoom    MsgType = 0x44 // C→L, u32 roomId
	LobbyJoinSuccess MsgType = 0x45 // L→C, u32 roomId, u16 port
	LobbyJoinFailed  MsgType = 0x46 // L→C, no payload
)

// Game-instance handshake messages (udp-lobby.md §15).
const (
	ClientHello              MsgType = 0x01 // C→I, no payload
	ClientJoinRequest        MsgType = 0x02 // C→I, no payload
	ClientReady              MsgType = 0x03 // C→I, no payload
	ClientPing               MsgType = 0x04 // C→I, u32 clientTime
	ClientDisconnect         MsgType = 0x07 // C→I, u8 reason
	ServerHello              MsgType = 0x10 // I→C, no payload
	ServerJoinAccept         MsgType = 0x11 // I→C, no payload
	ServerJoinDeny           MsgType = 0x12 // I→C, no payload
	ServerPong               MsgType = 0x13 // I→C, u32 clientTime (echoed)
	ServerGameStart          MsgType = 0x15 // I→C, no payload
	ServerGameEnd            MsgType = 0x16 // I→C, u32 winningPlayerId
	ServerDisconnect         MsgType = 0x1A // I→C, u8 reason
	ServerPlayerDisconnected MsgType = 0x1C // I→C, u32 playerId
	ServerAllReady           MsgType = 0x1F // I→C, no payload
	ServerCountdownTick      MsgType = 0x20 // I→C, u8 secondsLeft
)

// Channel says which family of messages a socket carries: the lobby's
// (0x40-0x46) or a game instance's (udp-lobby.md §15).
type Channel uint8

const (
	// ChannelAny accepts both lobby and instance messages.
	ChannelAny Channel = iota
	// ChannelLobby accepts only the seven lobby messages.
	ChannelLobby
	// ChannelInstance accepts only the game-instance handshake messages.
	ChannelInstance
)

// String returns "any", "lobby" or "instance".
func (c Channel) String() string {
	switch c {
	case ChannelAny:
		return "any"
	case ChannelLobby:
		return "lobby"
	case ChannelInstance:
		return "instance"
	}
	return fmt.Sprintf("Channel(%d)", uint8(c))
}

// payload kinds, used to check sizes and pick fields.
const (
	kindNone    = iota + 1 // empty payload
	kindRoomID             // u32 roomId
	kindRoomRef            // u32 roomId, u16 port
	kindU32                // u32 Value
	kindU8                 // u8 Value
	kindList               // room list
)

type msgInfo struct {
	name    string
	dir     PacketType
	channel Channel
	kind    uint8
}

var msgTable = [256]msgInfo{
	LobbyListRooms:   {"LOBBY_LIST_ROOMS", ClientToServer, ChannelLobby, kindNone},
	LobbyRoomList:    {"LOBBY_ROOM_LIST", ServerToClient, ChannelLobby, kindList},
	LobbyCreateRoom:  {"LOBBY_CREATE_ROOM", ClientToServer, ChannelLobby, kindNone},
	LobbyRoomCreated: {"LOBBY_ROOM_CREATED", ServerToClient, ChannelLobby, kindRoomRef},
	LobbyJoinRoom:    {"LOBBY_JOIN_ROOM", ClientToServer, ChannelLobby, kindRoomID},
	LobbyJoinSuccess: {"LOBBY_JOIN_SUCCESS", ServerToClient, ChannelLobby, kindRoomRef},
	LobbyJoinFailed:  {"LOBBY_JOIN_FAILED", ServerToClient, ChannelLobby, kindNone},

	ClientHello:              {"CLIENT_HELLO", ClientToServer, ChannelInstance, kindNone},
	ClientJoinRequest:        {"CLIENT_JOIN_REQUEST", ClientToServer, ChannelInstance, kindNone},
	ClientReady:              {"CLIENT_READY", ClientToServer, ChannelInstance, kindNone},
	ClientPing:               {"CLIENT_PING", ClientToServer, ChannelInstance, kindU32},
	ClientDisconnect:         {"CLIENT_DISCONNECT", ClientToServer, ChannelInstance, kindU8},
	ServerHello:              {"SERVER_HELLO", ServerToClient, ChannelInstance, kindNone},
	ServerJoinAccept:         {"SERVER_JOIN_ACCEPT", ServerToClient, ChannelInstance, kindNone},
	ServerJoinDeny:           {"SERVER_JOIN_DENY", ServerToClient, ChannelInstance, kindNone},
	ServerPong:               {"SERVER_PONG", ServerToClient, ChannelInstance, kindU32},
	ServerGameStart:          {"SERVER_GAME_START", ServerToClient, ChannelInstance, kindNone},
	ServerGameEnd:            {"SERVER_GAME_END", ServerToClient, ChannelInstance, kindU32},
	ServerDisconnect:         {"SERVER_DISCONNECT", ServerToClient, ChannelInstance, kindU8},
	ServerPlayerDisconnected: {"SERVER_PLAYER_DISCONNECTED", ServerToClient, ChannelInstance, kindU32},
	ServerAllReady:           {"SERVER_ALL_READY", ServerToClient, ChannelInstance, kindNone},
	ServerCountdownTick:      {"SERVER_COUNTDOWN_TICK", ServerToClient, ChannelInstance, kindU8},
}

// MsgTypes lists every known message type, lobby first, in numeric order
// within each family.
var MsgTypes = func() []MsgType {
	var l, i []MsgType
	for t := range msgTable {
		switch msgTable[t].channel {
		case ChannelLobby:
			l = append(l, MsgType(t))
		case ChannelInstance:
			i = append(i, MsgType(t))
		}
	}
	return append(l, i...)
}()

// Known reports whether t is a lobby or instance message type.
func (t MsgType) Known() bool { return msgTable[t].kind != 0 }

// String returns the message's protocol name (e.g. "LOBBY_JOIN_ROOM") or
// its hex value when unknown.
func (t MsgType) String() string {
	if n := msgTable[t].name; n != "" {
		return n
	}
	return fmt.Sprintf("MsgType(0x%02x)", uint8(t))
}

// Dir returns the packetType the message is carried with: ClientToServer for
// requests, ServerToClient for replies; 0 for an unknown type.
func (t MsgType) Dir() PacketType { return msgTable[t].dir }

// Channel returns ChannelLobby or ChannelInstance for a known type, and
// ChannelAny for an unknown one.
func (t MsgType) Channel() Channel { return msgTable[t].channel }

// Event reports whether t is an instance's unsolicited message (ALL_READY,
// COUNTDOWN_TICK, GAME_START, GAME_END, PLAYER_DISCONNECTED, DISCONNECT),
// which answers no request and so echoes no request's sequence id.
func (t MsgType) Event() bool {
	switch t {
	case ServerAllReady, ServerCountdownTick, ServerGameStart,
		ServerGameEnd, ServerPlayerDisconnected, ServerDisconnect:
		return true
	}
	return false
}

// PayloadLen returns the fixed payload size of t. ok is false for
// LobbyRoomList (variable size, 2 + 11n) and for unknown types.
func (t MsgType) PayloadLen() (n int, ok bool) {
	switch msgTable[t].kind {
	case kindNone:
		return 0, true
	case kindRoomID, kindU32:
		return 4, true
	case kindRoomRef:
		return 6, true
	case kindU8:
		return 1, true
	}
	return 0, false
}

// RoomState is a room's lifecycle state as the lobby lists it.
type RoomState uint8

const (
	Waiting   RoomState = 0 // room created, waiting for players
	Countdown RoomState = 1 // countdown before the game starts
	Playing   RoomState = 2 // game in progress
	Finished  RoomState = 3 // game completed
)

// Valid reports whether s is one of the four defined states.
func (s RoomState) Valid() bool { return s <= Finished }

// String returns "Waiting", "Countdown", "Playing", "Finished" or
// "RoomState(n)".
func (s RoomState) String() string {
	switch s {
	case Waiting:
		return "Waiting"
	case Countdown:
		return "Countdown"
	case Playing:
		return "Playing"
	case Finished:
		return "Finished"
	}
	return fmt.Sprintf("RoomState(%d)", uint8(s))
}

// Room is one entry of LOBBY_ROOM_LIST.
type Room struct {
	ID         uint32
	Players    uint16
	MaxPlayers uint16
	Port       uint16
	State      RoomState
}

// RoomEntryLen is the size of one LOBBY_ROOM_LIST entry on the wire:
// u32 roomId, u16 playerCount, u16 maxPlayers, u16 port, u8 state.
const RoomEntryLen = 11

// MaxRooms is the most entries a LOBBY_ROOM_LIST can carry: payloadSize is a
// u16, so 2 + 11n <= 65535.
const MaxRooms = (MaxPayload - 2) / RoomEntryLen

// RoomList is the entries of a LOBBY_ROOM_LIST in wire form (11 bytes each,
// without the roomCount prefix). A decoded RoomList aliases the datagram it
// was decoded from: copy the rooms out (AppendRooms) before reusing that
// buffer. The zero value is an empty list.
type RoomList struct {
	raw []byte
}

// MakeRoomList appends the wire form of rooms to buf and returns a RoomList
// over the appended bytes, for use in Message.Rooms. It does not validate
// the rooms, so it can build deliberately bad lists for tests.
func MakeRoomList(buf []byte, rooms []Room) RoomList {
	start := len(buf)
	for _, r := range rooms {
		buf = appendRoom(buf, r)
	}
	return RoomList{raw: buf[start:len(buf):len(buf)]}
}

func appendRoom(b []byte, r Room) []byte {
	b = binary.BigEndian.AppendUint32(b, r.ID)
	b = binary.BigEndian.AppendUint16(b, r.Players)
	b = binary.BigEndian.AppendUint16(b, r.MaxPlayers)
	b = binary.BigEndian.AppendUint16(b, r.Port)
	return append(b, byte(r.State))
}

// Len returns the number of rooms.
func (l RoomList) Len() int { return len(l.raw) / RoomEntryLen }

// At returns room i; it panics if i is out of range, like a slice index.
func (l RoomList) At(i int) Room {
	e := l.raw[i*RoomEntryLen : (i+1)*RoomEntryLen]
	return Room{
		ID:         binary.BigEndian.Uint32(e[0:4]),
		Players:    binary.BigEndian.Uint16(e[4:6]),
		MaxPlayers: binary.BigEndian.Uint16(e[6:8]),
		Port:       binary.BigEndian.Uint16(e[8:10]),
		State:      RoomState(e[10]),
	}
}

// AppendRooms appends every room to dst and returns the extended slice.
func (l RoomList) AppendRooms(dst []Room) []Room {
	n := len(dst)
	dst = slices.Grow(dst, l.Len())[:n+l.Len()]
	out := dst[n:]
	raw := l.raw
	for i := range out {
		e := raw[i*RoomEntryLen : i*RoomEntryLen+RoomEntryLen]
		out[i] = Room{
			ID:         binary.BigEndian.Uint32(e[0:4]),
			Players:    binary.BigEndian.Uint16(e[4:6]),
			MaxPlayers: binary.BigEndian.Uint16(e[6:8]),
			Port:       binary.BigEndian.Uint16(e[8:10]),
			State:      RoomState(e[10]),
		}
	}
	return dst
}

// Bytes returns the entries in wire form (aliasing, not a copy).
func (l RoomList) Bytes() []byte { return l.raw }

// Header is a decoded datagram header. PayloadSize and OriginalSize are as
// read from the wire; the encoders compute them and ignore these fields.
type Header struct {
	PacketType   PacketType
	Type         MsgType
	Seq          uint16
	TickID       uint32 // ProfileRType17 only; always 0 in ProfileSpec
	Compressed   bool   // ProfileRType17 version bit 7 (LZ4); never decoded as true
	PayloadSize  uint16
	OriginalSize uint16
}

// Message is one lobby or instance message. Only the fields of its type are
// meaningful; the others must be zero for Append to reproduce it:
//
//	LobbyRoomCreated, LobbyJoinSuccess:  RoomID, Port
//	LobbyJoinRoom:                       RoomID
//	LobbyRoomList:                       Rooms
//	ClientPing, ServerPong:              Value = clientTime
//	ServerGameEnd:                       Value = winningPlayerId
//	ServerPlayerDisconnected:            Value = playerId
//	ClientDisconnect, ServerDisconnect:  Value = reason (0-255)
//	ServerCountdownTick:                 Value = secondsLeft (0-255)
//
// Message is a plain value: decoding into a reused *Message does not
// allocate.
type Message struct {
	Header
	RoomID uint32
	Port   uint16
	Value  uint32
	Rooms  RoomList
}
