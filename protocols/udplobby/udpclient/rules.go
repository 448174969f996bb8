package udpclient

import (
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// Semantic rule ids the udp-lobby client reports besides its codec's
// decode rules: they judge meaning, not bytes (what a well-formed reply
// says given the request and what came before). The ids are stable; users
// grep for them.
const (
	// The lobby (udp-lobby.md).
	RuleUSeqEcho         = "U-SEQ-ECHO"          // a lobby reply's sequenceId matches no request this client sent
	RuleUReplyType       = "U-REPLY-TYPE"        // a lobby reply's type is not a legal answer to the pending request
	RuleUJoinPort        = "U-JOIN-PORT"         // JOIN_SUCCESS port differs from the port the room was created on
	RuleUPortRange       = "U-PORT-RANGE"        // an instance port outside the configured instance_ports range
	RuleUJoinRoom        = "U-JOIN-ROOM"         // JOIN_SUCCESS names another room than the one requested
	RuleUCreatedList     = "U-CREATED-LISTED"    // a room this client just created is missing from its next list
	RuleUMalformedAns    = "U-MALFORMED-REPLY"   // the lobby answered a malformed packet instead of dropping it
	RuleUReplySource     = "U-REPLY-SOURCE"      // a reply from an address or port the client never sent to
	RuleURoomPortChanged = "U-ROOM-PORT-CHANGED" // a room listed twice to the same client with two ports
	RuleURoomState       = "U-ROOM-STATE-ORDER"  // a room's listed state went back (e.g. Playing, then Waiting)
	RuleUReplyDup        = "U-REPLY-DUP"         // a second reply to a lobby request sent once and already answered
	// The game instance (udp-lobby.md §15).
	RuleISeqEcho      = "I-SEQ-ECHO"        // an instance reply's sequenceId matches no request this client sent
	RuleIReplyType    = "I-REPLY-TYPE"      // an instance reply is not a legal answer to the pending request
	RuleIPongEcho     = "I-PONG-ECHO"       // SERVER_PONG does not echo the ping's clientTime
	RuleICountdown    = "I-COUNTDOWN"       // SERVER_COUNTDOWN_TICK seconds do not decrease
	RuleIStateOrder   = "I-STATE-ORDER"     // game events out of order (GAME_START before joining, twice, GAME_END before GAME_START …)
	RuleIMalformedAns = "I-MALFORMED-REPLY" // an instance answered a malformed packet instead of dropping it
)

// semanticRules are the rules above, each with where docs/protocols
// states it.
var semanticRules = []simclient.RuleInfo{
	{ID: RuleUSeqEcho, Section: "udp-lobby.md §12", Summary: "a lobby reply's sequenceId matches no request this client sent (replies echo the request's sequenceId)"},
	{ID: RuleUReplyType, Section: "udp-lobby.md §11", Summary: "a lobby reply is not a legal answer to the request (LIST→ROOM_LIST, CREATE→ROOM_CREATED/JOIN_FAILED, JOIN→JOIN_SUCCESS/JOIN_FAILED)"},
	{ID: RuleUJoinPort, Section: "udp-lobby.md §7", Summary: "JOIN_SUCCESS returned another port than the room's ROOM_CREATED (run-wide room table)"},
	{ID: RuleUPortRange, Section: "udp-lobby.md §7", Summary: "an instance port outside the scenario's instance_ports range"},
	{ID: RuleUJoinRoom, Section: "udp-lobby.md §9", Summary: "JOIN_SUCCESS names another roomId than the one requested"},
	{ID: RuleUCreatedList, Section: "udp-lobby.md §5", Summary: "a room this client created is missing from the list it asked for right after (best effort, within 1 s)"},
	{ID: RuleUMalformedAns, Section: "udp-lobby.md §13", Summary: "the lobby replied to a malformed datagram instead of dropping it silently"},
	{ID: RuleUReplySource, Section: "udp-lobby.md §3.5", Summary: "a reply came from an address or port this client never sent to (replies come from the lobby's or the instance's port); one from the lobby's or instance's host on another port is still used unless on_violation is fail_step. A datagram from elsewhere that is no reply to this client (undecodable, or echoing no sequence id it used) is stray: counted in the harness section, not here"},
	{ID: RuleURoomPortChanged, Section: "udp-lobby.md §5", Summary: "a room listed to the same client twice with two different ports (a room's port is stable)"},
	{ID: RuleUReplyDup, Section: "udp-lobby.md §1", Summary: "a second reply to a lobby request the client sent once and that was already answered (one request, exactly one datagram); not judged when the scenario's impairment duplicates datagrams"},
	{ID: RuleURoomState, Section: "udp-lobby.md §5", Summary: "a room's listed state went back between two lists of the same client (Waiting → Countdown → Playing → Finished)"},
	{ID: RuleISeqEcho, Section: "udp-lobby.md §15", Summary: "an instance reply's sequenceId matches no request this client sent"},
	{ID: RuleIReplyType, Section: "udp-lobby.md §15", Summary: "an instance reply is not a legal answer (HELLO→HELLO, JOIN_REQUEST→JOIN_ACCEPT/JOIN_DENY, PING→PONG)"},
	{ID: RuleIPongEcho, Section: "udp-lobby.md §15", Summary: "SERVER_PONG does not echo the ping's clientTime"},
	{ID: RuleICountdown, Section: "udp-lobby.md §15", Summary: "SERVER_COUNTDOWN_TICK secondsLeft does not strictly decrease"},
	{ID: RuleIStateOrder, Section: "udp-lobby.md §15", Summary: "instance events out of order: ALL_READY/COUNTDOWN/GAME_START before this client joined, GAME_START twice, GAME_END before GAME_START"},
	{ID: RuleIMalformedAns, Section: "udp-lobby.md §15", Summary: "a game instance replied to a malformed datagram instead of dropping it silently"},
}

// rules is every rule id a udp-lobby run can report: its codec's and its
// client's, each with the section that states it.
func rules() []simclient.RuleInfo {
	out := make([]simclient.RuleInfo, 0, len(udpwire.Rules)+len(semanticRules))
	for _, r := range udpwire.Rules {
		out = append(out, simclient.RuleInfo{ID: string(r.ID), Section: r.Section, Summary: r.Summary})
	}
	return append(out, semanticRules...)
}
