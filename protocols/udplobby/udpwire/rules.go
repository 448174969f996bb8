package udpwire

// RuleID names a decode rule. The ids are stable: the conformance suite and
// the load engine report violations by them, and users grep for them.
type RuleID string

// Framing rules, common to the lobby and the instances (udp-lobby.md §3).
const (
	RuleShort           RuleID = "U-SHORT"          // datagram shorter than header + CRC
	RuleLength          RuleID = "U-LENGTH"         // datagram length ≠ header + payloadSize + 4
	RuleCRC             RuleID = "U-CRC"            // CRC-32/IEEE trailer does not match header+payload
	RuleMagic           RuleID = "U-MAGIC"          // rtype17 magic is not A3 5F C8 1D
	RuleVersion         RuleID = "U-VERSION"        // rtype17 version bits 0-6 are not 1
	RuleCompressed      RuleID = "U-COMPRESSED"     // rtype17 LZ4 flag set: compressed payloads are unsupported
	RuleOriginalSize    RuleID = "U-ORIGINAL-SIZE"  // originalSize ≠ payloadSize on an uncompressed packet
	RulePacketType      RuleID = "U-PACKET-TYPE"    // packetType is neither 0x01 nor 0x02
	RuleDirection       RuleID = "U-DIRECTION"      // packetType is not the direction the receiver expects
	RuleTypeUnknown     RuleID = "U-TYPE-UNKNOWN"   // messageType is not a lobby message (0x40-0x46)
	RuleTypeDirection   RuleID = "U-TYPE-DIRECTION" // lobby message carried with the other packetType
	RulePayloadSize     RuleID = "U-PAYLOAD-SIZE"   // payloadSize wrong for the lobby message type
	RuleRoomListCount   RuleID = "U-ROOMLIST-COUNT" // roomCount disagrees with payloadSize (2 + 11n); see Error.Diagnosis
	RuleRoomID          RuleID = "U-ROOM-ID"        // roomId 0 in a lobby reply or room list entry
	RuleRoomPort        RuleID = "U-ROOM-PORT"      // port 0 in a lobby reply or room list entry
	RuleRoomState       RuleID = "U-ROOM-STATE"     // room state not 0-3 (Waiting, Countdown, Playing, Finished)
	RuleRoomPlayers     RuleID = "U-ROOM-PLAYERS"   // room list entry has playerCount > maxPlayers
	RuleInstTypeUnknown RuleID = "I-TYPE-UNKNOWN"   // messageType is not a game-instance message (udp-lobby.md §15)
	RuleInstDirection   RuleID = "I-TYPE-DIRECTION" // instance message carried with the other packetType
	RuleInstPayload     RuleID = "I-PAYLOAD-SIZE"   // payloadSize wrong for the instance message type
)

// RuleInfo describes one rule for listings (e.g. `lobbybench conformance
// --dryrun`) and reports.
type RuleInfo struct {
	ID      RuleID
	Section string // where docs/protocols states it, e.g. "udp-lobby.md §3.4"
	Summary string // one line
}

// Rules lists every rule this package can report, in the order the decoder
// checks them.
var Rules = []RuleInfo{
	{RuleShort, "udp-lobby.md §3.4", "datagram shorter than header + CRC"},
	{RuleMagic, "udp-lobby.md §3.4", "rtype17 magic is not A3 5F C8 1D"},
	{RuleVersion, "udp-lobby.md §3.4", "rtype17 version (bits 0-6) is not 1"},
	{RuleLength, "udp-lobby.md §3.4", "datagram length is not header + payloadSize + 4"},
	{RuleCRC, "udp-lobby.md §3.4", "CRC-32/IEEE over header+payload does not match the big-endian trailer"},
	{RuleCompressed, "udp-lobby.md §3.4", "rtype17 LZ4-compressed payload: unsupported, not decoded"},
	{RuleOriginalSize, "udp-lobby.md §3.4", "originalSize differs from payloadSize on an uncompressed packet"},
	{RulePacketType, "udp-lobby.md §3.4", "packetType is neither 0x01 (client→server) nor 0x02 (server→client)"},
	{RuleDirection, "udp-lobby.md §3.4", "packetType is not the direction the receiver expects"},
	{RuleTypeUnknown, "udp-lobby.md §3.4", "messageType is not a lobby message (0x40-0x46)"},
	{RuleTypeDirection, "udp-lobby.md §3.4", "lobby request carried as server→client, or reply as client→server"},
	{RulePayloadSize, "udp-lobby.md §3.4", "payloadSize is wrong for the lobby message type"},
	{RuleRoomListCount, "udp-lobby.md §5", "ROOM_LIST roomCount disagrees with payloadSize = 2 + 11×roomCount"},
	{RuleRoomID, "udp-lobby.md §5", "roomId 0 in ROOM_CREATED, JOIN_SUCCESS or a room list entry"},
	{RuleRoomPort, "udp-lobby.md §5", "port 0 in ROOM_CREATED, JOIN_SUCCESS or a room list entry"},
	{RuleRoomState, "udp-lobby.md §5", "room state is not 0-3 (Waiting, Countdown, Playing, Finished)"},
	{RuleRoomPlayers, "udp-lobby.md §5", "room list entry has playerCount > maxPlayers"},
	{RuleInstTypeUnknown, "udp-lobby.md §15", "messageType is not a game-instance message"},
	{RuleInstDirection, "udp-lobby.md §15", "instance request carried as server→client, or reply as client→server"},
	{RuleInstPayload, "udp-lobby.md §15", "payloadSize is wrong for the instance message type"},
}

// Describe returns the one-line summary of id, or "" if id is not a rule of
// this package.
func (id RuleID) Describe() string {
	for _, r := range Rules {
		if r.ID == id {
			return r.Summary
		}
	}
	return ""
}

// Diagnoses of a LOBBY_ROOM_LIST that fails the canonical layout
// (Error.Diagnosis, with RuleRoomListCount). udp-lobby.md §5.
const (
	// DiagLobbySystem means the payload fits the Lobby System layout (udp-lobby.md §5), u32 roomCount and
	// 15-byte entries (u32 roomId, u16 port, u8 state, u32 playerCount,
	// u32 maxPlayers).
	DiagLobbySystem = "lobby-system-layout"
	// DiagPadded13 means the payload fits 2 + 13×roomCount, i.e. entries padded
	// to the "13 bytes per room" the protocol page's prose states (udp-lobby.md §5).
	DiagPadded13 = "padded-13"
)
