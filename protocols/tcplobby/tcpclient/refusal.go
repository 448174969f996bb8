package tcpclient

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// The hints below say what each refusal of tcp-lobby.md means and, where
// the reference server (protocols/tcplobby/tcpserver) has one, the counter
// that tells its causes apart (printed as tcp-lobby.… by serve when it
// stops, by run for the embedded server) and the setting behind it
// (lobbybench serve's flags; the scenario's embedded_server keys).

// createRefusedHint is what CREATE_ROOM_ACK RoomID 0 means: the reply
// carries no reason, so both of the reference server's causes are named.
const createRefusedHint = "RoomID 0 means the create failed (tcp-lobby.md §5.1): every room is taken " +
	"(MAX_ROOMS, 16, fixed by the protocol; tcp-lobby.errors.rooms-exhausted in the reference server's counters) " +
	"or the creator's address is at its room quota (tcp-lobby.md §R; tcp-lobby.errors.rooms-per-ip; " +
	"lobbybench serve --tcp-max-rooms-per-ip, default 4, 0: no cap; the embedded server has no quota); " +
	"a room is freed when its last player leaves (§8.5); lobbybench describe forecasts the rooms a scenario holds at once"

// joinStatusHints is what each failed JOIN_ROOM_ACK Status means.
var joinStatusHints = map[tcpwire.JoinStatus]string{
	tcpwire.JoinRoomFull: "the room holds its MAX_PLAYERS (4) players, fixed by the protocol (tcp-lobby.md §5.1; tcp-lobby.errors.room-full in the reference server's counters)",
	tcpwire.JoinRoomNotFound: "no room has that id: never created, or removed when its last player left (tcp-lobby.md §5.1, §8.5; " +
		"tcp-lobby.errors.room-not-found in the reference server's counters)",
	tcpwire.JoinRoomInGame: "the room's game is starting or started: the reference server refuses joins from the host's START_REQ on, countdown included " +
		"(tcp-lobby.md §5.1; tcp-lobby.errors.room-in-game in the reference server's counters)",
}

// joinRefusedHint is what a failed JOIN_ROOM_ACK with status st means.
func joinRefusedHint(st tcpwire.JoinStatus) string {
	if h, ok := joinStatusHints[st]; ok {
		return h
	}
	return "a status tcp-lobby.md §5.1 does not define (T-JOIN-STATUS): the server's own reason"
}

// connectRefusedHint is what CONNECT_ACK Success 0 means.
const connectRefusedHint = "CONNECT_ACK carries no reason (tcp-lobby.md §5.2); the reference server sends it only for an empty player name " +
	"(tcp-lobby.errors.invalid-name in its counters)"

// poolHint is what the reference server's "no game instance available"
// means: its instance pool is the UDP lobby's (or --instance-addr's).
const poolHint = "the reference server found no UDP game instance for the room's GAME_START (tcp-lobby.md §5.4; tcp-lobby.errors.pool-error in its counters; " +
	"the room is back to waiting, so the host may START_REQ again); it takes them from the UDP lobby's pool: " +
	"its instance limit and how long it keeps an emptied instance govern it " +
	"(lobbybench serve: --max-instances, --cleanup-interval; the embedded server: embedded_server max_instances, cleanup_interval)"

// serverErrorHints are the texts of the reference server's ERROR_MSG 0x06
// (server error), each with what governs it; a 0x06 with another text
// gets serverErrorHint.
var serverErrorHints = []struct{ prefix, hint string }{
	{"no game instance available", poolHint},
	{"server full", "the reference server's connection table is full (lobbybench serve --max-conns, default 10000; tcp-lobby.conns.rejected in its counters)"},
	{"too many connections from your address", "the reference server holds its most connections from this source address " +
		"(tcp-lobby.md §R; lobbybench serve --max-conns-per-ip, default 1000, 0: no cap; the embedded server has no cap; " +
		"tcp-lobby.conns.rejected_per_ip in its counters); run spreads clients over source addresses, 100 to each"},
	{"idle timeout", "the reference server closed a connection that sent no whole frame for its idle timeout " +
		"(lobbybench serve --tcp-idle-timeout, default 2m; tcp-lobby.closes.idle-timeout in its counters)"},
	{"server shutting down", "the reference server is stopping (tcp-lobby.closes.shutdown in its counters)"},
}

// serverErrorHint is what an ERROR_MSG 0x06 whose text the reference
// server does not send means.
const serverErrorHint = "a server error (tcp-lobby.md §5.5), which the server sends before it closes the connection (§7.1); " +
	"the reference server sends it for a full connection table (lobbybench serve --max-conns), too many connections from one address (--max-conns-per-ip), " +
	"a malformed frame (§7), an idle connection (--tcp-idle-timeout), no game instance for GAME_START (--max-instances, --cleanup-interval) or its shutdown"

// errorCodeHints is what each common ERROR_MSG code means (tcp-lobby.md
// §5.5) and when the reference server sends it; 0x06 is serverErrorHints'.
var errorCodeHints = map[tcpwire.ErrorCode]string{
	tcpwire.ErrCodeRoomFull: "room full (tcp-lobby.md §5.5): the room holds its MAX_PLAYERS (4) players (the reference server says it with JOIN_ROOM_ACK ROOM_FULL instead)",
	tcpwire.ErrCodeRoomNotFound: "room not found (tcp-lobby.md §5.5): the reference server sends it to a READY_REQ or START_REQ from a player in no room " +
		"(tcp-lobby.errors.not-in-room in its counters): an earlier create or join of the flow failed, or the player left",
	tcpwire.ErrCodeNotHost: "not host (tcp-lobby.md §5.4): only the room's creator (or, after it left, the next player, §8.6) may START_REQ " +
		"(tcp-lobby.errors.not-host in the reference server's counters)",
	tcpwire.ErrCodeNotAllReady: "not all players ready (tcp-lobby.md §5.4): every member must have sent READY_REQ before the host's START_REQ " +
		"(tcp-lobby.errors.not-all-ready in the reference server's counters); a barrier before start waits for them",
	tcpwire.ErrCodeInvalidName: "invalid player name (tcp-lobby.md §5.5): the reference server refuses an empty name (tcp-lobby.errors.invalid-name in its counters)",
}

// errorMsgHint is what ERROR_MSG m means.
func errorMsgHint(m *tcpwire.ErrorMsg) string {
	if m.Code == tcpwire.ErrCodeServerError {
		for _, h := range serverErrorHints {
			if strings.HasPrefix(m.Text, h.prefix) {
				return h.hint
			}
		}
		return serverErrorHint
	}
	if h, ok := errorCodeHints[m.Code]; ok {
		return h
	}
	return "a code tcp-lobby.md §5.5 does not list: the server's own (its text says what it means)"
}

// errorMsgReply names ERROR_MSG m with the server's own words.
func errorMsgReply(m *tcpwire.ErrorMsg) string {
	return fmt.Sprintf("ERROR_MSG 0x%02x %q", uint8(m.Code), m.Text)
}

// errorRefusal is the refusal of request by ERROR_MSG m.
func errorRefusal(request string, m *tcpwire.ErrorMsg) *simclient.Refusal {
	return &simclient.Refusal{Request: request, Reply: errorMsgReply(m), Hint: errorMsgHint(m)}
}
