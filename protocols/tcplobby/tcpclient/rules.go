package tcpclient

import (
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// Semantic rule ids the tcp-lobby client reports besides its codec's
// decode rules (tcp-lobby.md): they judge meaning, not bytes. The ids are
// stable; users grep for them.
const (
	RuleTReplyType     = "T-REPLY-TYPE"       // a frame that is neither the answer to the pending request nor a legal broadcast
	RuleTHash          = "T-HASH"             // a player hash of 0 on success, or a hash changed for the same player
	RuleTRoomList      = "T-ROOM-LIST"        // a RoomInfo with PlayerCount > MaxPlayers, MaxPlayers > 4, or RoomID 0
	RuleTJoinAck       = "T-JOIN-ACK"         // JOIN_ROOM_ACK SUCCESS without the joiner in its player list, or a failure carrying a hash/players
	RuleTBroadcast     = "T-BROADCAST"        // a broadcast names a player not in the room, or the sender missed its own PLAYER_READY
	RuleTCountdown     = "T-COUNTDOWN"        // COUNTDOWN seconds do not decrease, or GAME_START without a countdown
	RuleTGameStart     = "T-GAME-START"       // GAME_START with port 0, an unparsable IP, or players that are not the room's
	RuleTGameStartHost = "T-GAME-START-HOST"  // GAME_START names a host other than the target's that --allow-redirect does not allow
	RuleTDirection     = "T-DIRECTION"        // the server sent a client-to-server message type
	RuleTMalformedAns  = "T-MALFORMED-ANSWER" // a malformed frame was not answered with ERROR_MSG and a close
)

// semanticRules are the rules above, each with where docs/protocols
// states it.
var semanticRules = []simclient.RuleInfo{
	{ID: RuleTReplyType, Section: "tcp-lobby.md §5.1", Summary: "a frame that neither answers the pending request nor is a broadcast legal in the client's state"},
	{ID: RuleTHash, Section: "tcp-lobby.md §5.1", Summary: "player hash 0 on a successful CONNECT_ACK, CREATE_ROOM_ACK or JOIN_ROOM_ACK"},
	{ID: RuleTRoomList, Section: "tcp-lobby.md §5.1", Summary: "a RoomInfo with RoomID 0, MaxPlayers above 4, or PlayerCount above MaxPlayers"},
	{ID: RuleTJoinAck, Section: "tcp-lobby.md §5.1", Summary: "JOIN_ROOM_ACK SUCCESS whose players do not include the joiner, or a failure with a hash or players"},
	{ID: RuleTBroadcast, Section: "tcp-lobby.md §5.3", Summary: "a broadcast about a player not in the room, or READY_REQ not answered by the sender's own PLAYER_READY"},
	{ID: RuleTCountdown, Section: "tcp-lobby.md §5.4", Summary: "COUNTDOWN seconds not strictly decreasing, or GAME_START without any COUNTDOWN"},
	{ID: RuleTGameStart, Section: "tcp-lobby.md §5.4", Summary: "GAME_START twice, with UDP port 0, a ServerIP that is not an IP address, or players that are not the room's"},
	{ID: RuleTGameStartHost, Section: "tcp-lobby.md §5.4", Summary: "GAME_START names a host other than the target's (or a multicast or broadcast address) that --allow-redirect does not allow"},
	{ID: RuleTDirection, Section: "tcp-lobby.md §2.3", Summary: "the server sent a client-to-server message type (LIST_ROOMS_REQ, CREATE_ROOM_REQ, …)"},
	{ID: RuleTMalformedAns, Section: "tcp-lobby.md §7", Summary: "a malformed frame was not answered with ERROR_MSG followed by the server closing the connection"},
}

// rules is every rule id a tcp-lobby run can report: its codec's (whose
// table names no section) and its client's.
func rules() []simclient.RuleInfo {
	out := make([]simclient.RuleInfo, 0, len(tcpwire.Rules)+len(semanticRules))
	for _, r := range tcpwire.Rules {
		out = append(out, simclient.RuleInfo{ID: r.ID, Summary: r.Desc})
	}
	return append(out, semanticRules...)
}
