// Package tcpclient is the simulated client of the TCP lobby (tcp-lobby.md). It registers the "tcp-lobby" factory with simclient;
// its steps are listed in docs/scenario.md (with what connect measures)
// and the rules it checks in rules.go.
//
// A session owns one TCP connection, dialed from its source address by the
// first step that needs it (a refused dial fails that step with
// "conn_refused"), or ahead of the due time for an open-model flow that
// starts with connect. One goroutine reads and writes; frames are read into
// one reused buffer by a reader that survives read deadlines, and decode
// into one reused tcplobby.Decoder.
//
// TCP has no sequence ids: a request's reply is the next frame of the
// answering type, and every other frame is a broadcast judged on its own
// (READY_REQ is answered by the PLAYER_READY carrying the sender's own
// hash, START_REQ by the first COUNTDOWN or GAME_START). A CONNECT_ACK
// with Success 0 fails its step with "refused", a CREATE_ROOM_ACK with
// RoomID 0 with "room_full", a JOIN_ROOM_ACK status other than SUCCESS with
// "join_failed"; ERROR_MSG while a
// request is pending refuses it ("refused"); the server closing the
// connection fails it ("closed" or "conn_reset"). Steps use their timeout
// only: the transport retransmits. The room's members are tracked from
// JOIN_ROOM_ACK, ROOM_UPDATE and the broadcasts, so PLAYER_JOIN,
// PLAYER_READY, PLAYER_LEFT and GAME_START are checked against them, and
// GAME_START must follow a ready announcement for every member; each member
// also publishes its hash to its group (Group.SetHash) for diagnostics.
//
// malformed sends each packet on a fresh connection: the server must send
// ERROR_MSG and close within silence (else T-MALFORMED-ANSWER), and the
// valid packets and the final liveness check are LIST_ROOMS_REQ on fresh
// connections. rate_probe pipelines LIST_ROOMS_REQ on the session's
// connection: replies come in order, so each LIST_ROOMS_ACK or ERROR_MSG
// resolves the oldest outstanding request.
package tcpclient
