// Package udp is the reference server's UDP lobby (seeds 003 and 001,
// PROTOCOLS.md §1) and its pool of game instances (PROTOCOLS.md §2).
//
// # Lobby
//
// One socket (default :8080), one read loop with a reused buffer. Every
// datagram is decoded strictly by wire/udplobby (length, CRC first, then
// direction and type); a malformed one is dropped silently and counted under
// its rule id (Stats.Drops["U-CRC"], …). Well-formed requests then pass the
// optional per-IP (or per-endpoint) token bucket, whose excess is dropped
// silently and counted as "rate-limited".
//
//   - LIST_ROOMS answers ROOM_LIST from a cached encoding regenerated only
//     when a room changes; rooms are sorted by id. A room's playerCount is
//     its joined players plus its held seats (see below), never more than
//     maxPlayers, so a JOIN fails exactly when the list shows the room full.
//   - CREATE_ROOM binds a new instance and answers ROOM_CREATED, or
//     JOIN_FAILED at MaxInstances (or when no pool port binds). Room ids
//     start at 1 and are never reused while the server runs; ports come from
//     BasePort..BasePort+MaxInstances-1, lowest free first, reused once an
//     instance is gone (or from the OS when BasePort is 0).
//   - JOIN_ROOM answers JOIN_SUCCESS with the room's port, or JOIN_FAILED
//     for roomId 0, a missing room, a full room, or a room that is Playing
//     or Finished. A JOIN_SUCCESS holds a seat for SeatHold, so a storm of
//     joins cannot oversubscribe a room; the seat is released if nobody
//     takes it in time.
//
// Sessions are keyed by client endpoint (last seen, last sequence, and the
// reply to a CREATE or JOIN): a retry with the same sequence and type from
// the same endpoint gets the cached reply again instead of a second room or
// seat (Stats.Replayed). The table is bounded (MaxSessions; expired entries
// swept, then arbitrary eviction), as is the rate limiter's.
//
// # Instances
//
// Each room is an instance with its own socket and read loop: CLIENT_HELLO
// → SERVER_HELLO, CLIENT_JOIN_REQUEST → SERVER_JOIN_ACCEPT (taking a held
// seat from the same IP first, else one Allocate held, else a free seat,
// else the oldest hold) or
// SERVER_JOIN_DENY (full, Playing, Finished), CLIENT_PING → SERVER_PONG
// (echoing clientTime), CLIENT_READY and CLIENT_DISCONNECT (no reply; the
// others get SERVER_PLAYER_DISCONNECTED). Replies echo the request's
// sequence; retries are harmless (a second JOIN_REQUEST from a player is
// accepted again, READY is idempotent).
//
// When every joined player is ready and no held seat is still awaited, the
// instance sends SERVER_ALL_READY and SERVER_COUNTDOWN_TICK 3, then 2 and 1
// and SERVER_GAME_START CountdownInterval apart (state Countdown, then
// Playing). With GameLength > 0, SERVER_GAME_END (winningPlayerId: the
// earliest remaining player) follows and the room is Finished. A countdown
// is cancelled when its last player leaves. Players silent for IdleTimeout
// get SERVER_DISCONNECT (reason DisconnectTimeout) and are removed. An
// instance empty (no players, no holds) or Finished for a CleanupInterval
// is closed (players get SERVER_DISCONNECT, reason DisconnectShutdown) and
// its port returns to the pool.
//
// Server.Allocate creates an instance with n held seats for a room started
// by the TCP lobby (it satisfies reference-server/tcp's InstancePool).
//
// Not implemented: LZ4-compressed rtype17 payloads are dropped (U-COMPRESSED)
// rather than decompressed; instances carry no game beyond the handshake.
package udp
