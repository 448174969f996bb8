// Package udpscript is the UDP lobby's script.Catalog: every message of
// udp-lobby.md (the lobby's of §2 on channel "lobby", the game instance's
// of §15 on channel "instance"), with its fields named as the document
// names them, made and read by udpwire's encoders and its strict Decoder,
// so that a scripted request is byte for byte what the built-in step
// sends and a scripted reply is judged by the rules a built-in step's is.
//
// Header fields a script may set on purpose, both Auto: sequenceId (not
// given: the session's counter, incremented per send from 1, as the
// built-in client numbers its requests; given: sent as given, the counter
// untouched, except in a rate_probe's send, which takes none: ProbeCheck) and tickId (rtype17 header only; not given: 0, as the
// built-in client sends). LOBBY_ROOM_LIST's roomCount is Auto too: not
// given, the number of rooms; given, written as given, even when it
// disagrees with the rooms (a malformed list on purpose). CLIENT_PING's
// clientTime is Auto: not given, the microseconds since the session's
// ping series began (udpclient.ClientTime, what the built-in ping step
// sends), a series being the CLIENT_PINGs a session sends with no other
// message between them, due at the first one's intended time
// (script.Scheduled), as the built-in step's series is; given, sent as
// given.
//
// A session's header profile is the scenario's header_profile
// (udpclient.Options): spec, rtype17, or auto, which sends the spec header
// until a received datagram is framed under one profile (its magic, its
// length, its CRC: udpwire.GuessProfile) and from then on uses that one.
package udpscript

import (
	"slices"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/script"
)

// Catalog is the UDP lobby's messages for scripted steps.
var Catalog script.Catalog = catalog{}

type catalog struct{}

// Channel names, as script.Message.Channel and Decode's channel.
const (
	ChannelLobby    = "lobby"
	ChannelInstance = "instance"
)

// Field names of the header and of the payloads, as udp-lobby.md names
// them (§3.1, §3.2, §2, §5, §15).
const (
	fSeq         = "sequenceId"
	fTick        = "tickId"
	fRoomID      = "roomId"
	fPort        = "port"
	fRoomCount   = "roomCount"
	fRooms       = "rooms"
	fPlayerCount = "playerCount"
	fMaxPlayers  = "maxPlayers"
	fState       = "state"
	fClientTime  = "clientTime"
	// framing (§3.1, §3.3): SendOnly
	fPacketType   = "packetType"
	fMessageType  = "messageType"
	fPayloadSize  = "payloadSize"
	fOriginalSize = "originalSize"
	fCRC          = "crc"
)

func intField(name string, bits int) script.Field {
	return script.Field{Name: name, Kind: script.Int, Bits: bits}
}

// headerFields are the header fields a script may set: every message has
// them (tickId only means something in the rtype17 header), the framing
// ones on a send only.
var headerFields = []script.Field{
	{Name: fSeq, Kind: script.Int, Bits: 16, Auto: true},
	{Name: fTick, Kind: script.Int, Bits: 32, Auto: true},
	framingField(fPacketType, 8), framingField(fMessageType, 8),
	framingField(fPayloadSize, 16), framingField(fOriginalSize, 16),
	framingField(fCRC, 32),
}

func framingField(name string, bits int) script.Field {
	return script.Field{Name: name, Kind: script.Int, Bits: bits, Auto: true, SendOnly: true}
}

// roomFields are one LOBBY_ROOM_LIST entry's, in wire order (§5).
var roomFields = []script.Field{
	intField(fRoomID, 32), intField(fPlayerCount, 16), intField(fMaxPlayers, 16),
	intField(fPort, 16), intField(fState, 8),
}

// payloadFields are each message type's payload fields in wire order;
// a type absent here has an empty payload.
var payloadFields = map[udpwire.MsgType][]script.Field{
	udpwire.LobbyRoomList: {
		{Name: fRoomCount, Kind: script.Int, Bits: 16, Auto: true},
		{Name: fRooms, Kind: script.List, Max: udpwire.MaxRooms, Elem: roomFields},
	},
	udpwire.LobbyRoomCreated:         {intField(fRoomID, 32), intField(fPort, 16)},
	udpwire.LobbyJoinRoom:            {intField(fRoomID, 32)},
	udpwire.LobbyJoinSuccess:         {intField(fRoomID, 32), intField(fPort, 16)},
	udpwire.ClientPing:               {{Name: fClientTime, Kind: script.Int, Bits: 32, Auto: true}},
	udpwire.ClientDisconnect:         {intField("reason", 8)},
	udpwire.ServerPong:               {intField(fClientTime, 32)},
	udpwire.ServerGameEnd:            {intField("winningPlayerId", 32)},
	udpwire.ServerDisconnect:         {intField("reason", 8)},
	udpwire.ServerPlayerDisconnected: {intField("playerId", 32)},
	udpwire.ServerCountdownTick:      {intField("secondsLeft", 8)},
}

// messages is every message type, lobby first, as udpwire.MsgTypes lists
// them; byName finds one's type.
var messages, byName = func() ([]script.Message, map[string]udpwire.MsgType) {
	var ms []script.Message
	names := map[string]udpwire.MsgType{}
	for _, t := range udpwire.MsgTypes {
		ms = append(ms, script.Message{
			Name:        t.String(),
			FromClient:  t.Dir() == udpwire.ClientToServer,
			CreatesRoom: t == udpwire.LobbyCreateRoom,
			Channel:     channelName(t.Channel()),
			Fields:      append(append([]script.Field{}, headerFields...), payloadFields[t]...),
		})
		names[t.String()] = t
	}
	return ms, names
}()

func channelName(c udpwire.Channel) string {
	if c == udpwire.ChannelInstance {
		return ChannelInstance
	}
	return ChannelLobby
}

// Messages returns every message type of udp-lobby.md.
func (catalog) Messages() []script.Message { return slices.Clone(messages) }
