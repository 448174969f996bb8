// Package tcpclient is the simulated client of the TCP lobby (seed 004,
// PROTOCOLS.md §3). It registers the "tcp-lobby" factory with simclient.
//
// A session owns one TCP connection, dialed from its source address at the
// first step that needs it (normally connect: dial + CONNECT_REQ); a
// refused dial fails that step with reason "conn_refused". In the closed
// model the next flow of the same client may carry the connection on
// (Reuse, through simclient.Renew): its connect step then skips the dial
// and sends CONNECT_REQ on the kept connection. In the open model a
// session whose flow starts with connect is dialed ahead (Prepare, in the
// background) and installs its connection the same way, so its connect
// step at the due time only sends CONNECT_REQ (waiting for a dial still
// under way). The connect step measures CONNECT_REQ → CONNECT_ACK from its
// intended time; each successful dial is recorded apart as the message
// tcp_dial (DialMessage). One goroutine reads and writes;
// frames are read into one reused 8 KiB buffer by a reader of its own that
// survives read deadlines (the sweeper wakes a read only when a request has
// timed out), and messages decode into one reused tcplobby.Decoder.
//
// # Requests and replies
//
// TCP has no sequence ids: a request's reply is the next frame of the
// answering type, every other frame being a broadcast judged on its own.
//
//	connect  CONNECT_REQ  → CONNECT_ACK (Success 0: "refused")
//	list     LIST_ROOMS_REQ → LIST_ROOMS_ACK
//	create   CREATE_ROOM_REQ → CREATE_ROOM_ACK (RoomID 0: "room_full"); publishes the room to the group
//	join     JOIN_ROOM_REQ → JOIN_ROOM_ACK (status ≠ SUCCESS: "join_failed")
//	ready    READY_REQ → the PLAYER_READY carrying the sender's own hash
//	start    START_REQ → the first COUNTDOWN (or GAME_START)
//	wait_countdown, wait_game_start  wait for COUNTDOWN / GAME_START (done at once if already seen)
//	disconnect  DISCONNECT, then close
//
// ERROR_MSG while a request is pending refuses it (reason "refused"); the
// server closing the connection fails it with "closed" (or "conn_reset").
// TCP steps use the timeout only: the transport retransmits.
//
// # Checks
//
// Frames are decoded strictly (tcplobby rule ids T-…), then judged with
// simclient's T- semantic rules: the server never sends client-to-server
// types; replies come only for a pending request; hashes are non-zero on
// success and stable; RoomInfo entries are sane; a successful JOIN_ROOM_ACK
// lists the joiner; PLAYER_JOIN, PLAYER_READY and PLAYER_LEFT name players
// the client knows to be in (or, for PLAYER_JOIN, not yet in) its room —
// the room's members are tracked from JOIN_ROOM_ACK, ROOM_UPDATE and those
// broadcasts; COUNTDOWN strictly decreases; GAME_START follows a countdown
// and a ready announcement (PLAYER_READY or ROOM_UPDATE) for every member,
// so a ready broadcast that never reached this client shows, carries a
// parsable IP and a non-zero port, and lists exactly the room's members. Each member also publishes its hash to its group
// (Group.SetHash) for diagnostics.
//
// # Robustness steps
//
// malformed: each packet goes on a fresh connection (a malformed frame
// must make the server answer ERROR_MSG and close, PROTOCOLS.md §3): the
// server must send ERROR_MSG and close within Silence, else the frame
// counts as an unexpected reply (T-MALFORMED-ANSWER). Valid packets and the
// final liveness probe are LIST_ROOMS_REQ on fresh connections.
// rate_probe ramps LIST_ROOMS_REQ on the session's connection on
// simclient.Probe's schedule, pipelined (replies come in order, so each
// LIST_ROOMS_ACK or ERROR_MSG resolves the oldest outstanding request; a
// closed connection loses the rest), and reports like udpclient's.
package tcpclient
