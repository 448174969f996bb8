package simclient

import (
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// Semantic rule ids sessions report besides the wire packages' decode rules
// (udplobby U-…/I-…, tcplobby T-…, leviathan L-…). They judge meaning, not bytes: what a
// well-formed reply says given the request and what came before. The ids
// are stable; users grep for them.
const (
	// UDP lobby (udp-lobby.md).
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
	// Game instance (udp-lobby.md §15).
	RuleISeqEcho      = "I-SEQ-ECHO"        // an instance reply's sequenceId matches no request this client sent
	RuleIReplyType    = "I-REPLY-TYPE"      // an instance reply is not a legal answer to the pending request
	RuleIPongEcho     = "I-PONG-ECHO"       // SERVER_PONG does not echo the ping's clientTime
	RuleICountdown    = "I-COUNTDOWN"       // SERVER_COUNTDOWN_TICK seconds do not decrease
	RuleIStateOrder   = "I-STATE-ORDER"     // game events out of order (GAME_START before joining, twice, GAME_END before GAME_START …)
	RuleIMalformedAns = "I-MALFORMED-REPLY" // an instance answered a malformed packet instead of dropping it
	// TCP lobby (tcp-lobby.md).
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
	// Leviathan (leviathan.md), reported by
	// protocols/leviathan/levclient under these same ids (its RuleResponseTo, …).
	RuleLResponseTo   = "L-RESPONSE-TO"     // a reply's ResponseTo is not the MessageNumber of the request it answers
	RuleLReplyType    = "L-REPLY-TYPE"      // a reply's type (or ServerAllow's AcceptedType) is not a legal answer to the request
	RuleLCheckValue   = "L-CONNECT-CHECK"   // a Connect reply carries another CheckValue than 42
	RuleLAckReading   = "L-ACK-READING"     // the server's ack bits fit only the other ack-bit reading
	RuleLMalformedAns = "L-MALFORMED-REPLY" // the server answered a malformed datagram instead of dropping it
	RuleLMalformed    = "L-MALFORMED"       // a server datagram the client could not decode, without a more specific wire rule
	RuleLPktDup       = "L-PKT-DUP"         // an Ln datagram received twice, byte for byte (same PKT_ID)
)

// RuleInfo describes a semantic rule.
type RuleInfo struct {
	ID      string
	Section string // where docs/protocols states it, e.g. "udp-lobby.md §12"
	Summary string
}

// Rules lists the semantic rules sessions report.
var Rules = []RuleInfo{
	{RuleUSeqEcho, "udp-lobby.md §12", "a lobby reply's sequenceId matches no request this client sent (replies echo the request's sequenceId)"},
	{RuleUReplyType, "udp-lobby.md §11", "a lobby reply is not a legal answer to the request (LIST→ROOM_LIST, CREATE→ROOM_CREATED/JOIN_FAILED, JOIN→JOIN_SUCCESS/JOIN_FAILED)"},
	{RuleUJoinPort, "udp-lobby.md §7", "JOIN_SUCCESS returned another port than the room's ROOM_CREATED (run-wide room table)"},
	{RuleUPortRange, "udp-lobby.md §7", "an instance port outside the scenario's instance_ports range"},
	{RuleUJoinRoom, "udp-lobby.md §9", "JOIN_SUCCESS names another roomId than the one requested"},
	{RuleUCreatedList, "udp-lobby.md §5", "a room this client created is missing from the list it asked for right after (best effort, within 1 s)"},
	{RuleUMalformedAns, "udp-lobby.md §13", "the lobby replied to a malformed datagram instead of dropping it silently"},
	{RuleUReplySource, "udp-lobby.md §3.5", "a reply came from an address or port this client never sent to (replies come from the lobby's or the instance's port); one from the lobby's or instance's host on another port is still used unless on_violation is fail_step. A datagram from elsewhere that is no reply to this client (undecodable, or echoing no sequence id it used) is stray: counted in the harness section, not here"},
	{RuleURoomPortChanged, "udp-lobby.md §5", "a room listed to the same client twice with two different ports (a room's port is stable)"},
	{RuleUReplyDup, "udp-lobby.md §1", "a second reply to a lobby request the client sent once and that was already answered (one request, exactly one datagram); not judged when the scenario's impairment duplicates datagrams"},
	{RuleURoomState, "udp-lobby.md §5", "a room's listed state went back between two lists of the same client (Waiting → Countdown → Playing → Finished)"},
	{RuleISeqEcho, "udp-lobby.md §15", "an instance reply's sequenceId matches no request this client sent"},
	{RuleIReplyType, "udp-lobby.md §15", "an instance reply is not a legal answer (HELLO→HELLO, JOIN_REQUEST→JOIN_ACCEPT/JOIN_DENY, PING→PONG)"},
	{RuleIPongEcho, "udp-lobby.md §15", "SERVER_PONG does not echo the ping's clientTime"},
	{RuleICountdown, "udp-lobby.md §15", "SERVER_COUNTDOWN_TICK secondsLeft does not strictly decrease"},
	{RuleIStateOrder, "udp-lobby.md §15", "instance events out of order: ALL_READY/COUNTDOWN/GAME_START before this client joined, GAME_START twice, GAME_END before GAME_START"},
	{RuleIMalformedAns, "udp-lobby.md §15", "a game instance replied to a malformed datagram instead of dropping it silently"},
	{RuleTReplyType, "tcp-lobby.md §5.1", "a frame that neither answers the pending request nor is a broadcast legal in the client's state"},
	{RuleTHash, "tcp-lobby.md §5.1", "player hash 0 on a successful CONNECT_ACK, CREATE_ROOM_ACK or JOIN_ROOM_ACK"},
	{RuleTRoomList, "tcp-lobby.md §5.1", "a RoomInfo with RoomID 0, MaxPlayers above 4, or PlayerCount above MaxPlayers"},
	{RuleTJoinAck, "tcp-lobby.md §5.1", "JOIN_ROOM_ACK SUCCESS whose players do not include the joiner, or a failure with a hash or players"},
	{RuleTBroadcast, "tcp-lobby.md §5.3", "a broadcast about a player not in the room, or READY_REQ not answered by the sender's own PLAYER_READY"},
	{RuleTCountdown, "tcp-lobby.md §5.4", "COUNTDOWN seconds not strictly decreasing, or GAME_START without any COUNTDOWN"},
	{RuleTGameStart, "tcp-lobby.md §5.4", "GAME_START twice, with UDP port 0, a ServerIP that is not an IP address, or players that are not the room's"},
	{RuleTGameStartHost, "tcp-lobby.md §5.4", "GAME_START names a host other than the target's (or a multicast or broadcast address) that --allow-redirect does not allow"},
	{RuleTDirection, "tcp-lobby.md §2.3", "the server sent a client-to-server message type (LIST_ROOMS_REQ, CREATE_ROOM_REQ, …)"},
	{RuleTMalformedAns, "tcp-lobby.md §7", "a malformed frame was not answered with ERROR_MSG followed by the server closing the connection"},
	{RuleLResponseTo, "leviathan.md §3", "a reply's ResponseTo is not the MessageNumber of the request it answers (StartWorldReceive and Echo's Response None: 0 or that number)"},
	{RuleLReplyType, "leviathan.md §3", "a response naming the request in ResponseTo is not a legal answer (Connect→Connect, Security→Security, Authenticate→Authenticate, JoinServer→ServerAllow(ConnectAccepted)/ServerDisallow, JoinGame→ServerAllow(Done)/ServerDisallow, Serverstatus→ServerStatus), or ServerAllow carries the wrong AcceptedType"},
	{RuleLCheckValue, "leviathan.md §2", "a Connect reply's CheckValue is not 42 (the engine ignores such a reply)"},
	{RuleLAckReading, "leviathan.md §4", "the server's ack fields acknowledge ids this client never sent under the configured ack-bit reading but fit the other one (engine vs seed+1)"},
	{RuleLMalformedAns, "leviathan.md §6", "the server answered a malformed datagram (truncated, unknown type, random bytes) with a message instead of dropping it"},
	{RuleLPktDup, "leviathan.md §1", "an Ln datagram received twice, byte for byte, with one PKT_ID: a resend takes a new PKT_ID, so the server (or a proxy) sent one datagram twice (conformance: leviathan/1/3)"},
	{RuleLMalformed, "leviathan.md §1", "a datagram from the server could not be decoded and the codec gave no more specific L- rule"},
}

// DescribeRule returns the summary of a semantic rule id, or "".
func DescribeRule(id string) string {
	for _, r := range Rules {
		if r.ID == id {
			return r.Summary
		}
	}
	return ""
}

// ReplyViolation is the one place the three clients decide what a reply
// that broke rule does to the request it answers. It records the
// violation (rule, the reply's bytes data, the request req or nil, detail)
// on rec and returns nil when the session carries on: the reply is usable
// (the fields the flow needs could be read from it) and the scenario's
// on_violation is continue (the default). Otherwise it returns the
// *RequestError (result.ReasonViolation) the request fails with: the
// reply is unusable, or on_violation is fail_step.
func (sh *Shared) ReplyViolation(rec *metrics.Recorder, rule string, data, req []byte, detail string, usable bool) *RequestError {
	if usable && sh.Plan.OnViolation != scenario.ViolationFailStep {
		rec.Violation(rule, time.Now(), data, req, detail+" (carried on with the fields read)")
		return nil
	}
	rec.Violation(rule, time.Now(), data, req, detail)
	return &RequestError{Reason: result.ReasonViolation, Err: fmt.Errorf("%s: %s", rule, detail)}
}
