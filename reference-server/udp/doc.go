// Package udp is the reference server's UDP lobby (seeds 003 and 001,
// PROTOCOLS.md §1) and its pool of game instances (PROTOCOLS.md §2).
//
// # Lobby
//
// One socket (default :8080), one read loop with a reused buffer. Every
// datagram is decoded strictly by wire/udplobby (length, CRC first, then
// direction and type); a malformed one is dropped silently and counted under
// its rule id (Stats.Drops["U-CRC"], …), without allocating
// (udplobby.Decoder.DecodeRule). Well-formed requests then pass the
// optional per-IP (or per-endpoint) token bucket, whose excess is dropped
// silently and counted as "rate-limited". IPv4 clients of a dual-stack
// socket are keyed by their plain IPv4 address. SocketBuffer sets
// SO_RCVBUF/SO_SNDBUF of the lobby and of every instance socket.
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
// reply to a CREATE or JOIN): a retry with the same sequence, type and
// roomId from the same endpoint gets the cached reply again instead of a
// second room or seat (Stats.Replayed); a JOIN of another room under a
// reused sequence is a new request. The table is bounded (MaxSessions; expired entries
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
// is cancelled when its last player leaves.
//
// Server-initiated messages are sent once (UDP may lose them). A player who
// sends CLIENT_READY while the room is counting down, playing or finished
// (a duplicate READY, or a first one from a player who joined late) is
// answered with the last state message the instance broadcast (the current
// COUNTDOWN_TICK, GAME_START or GAME_END), byte for byte with its original
// sequence, so a client that deduplicates by sequence sees it once
// (Stats.StateResent). A client waiting for GAME_START can therefore
// repeat READY as its retry. PINGs are not used for this: PONG stays the
// only answer to PING, and nothing is pushed unasked. Players silent for IdleTimeout
// get SERVER_DISCONNECT (reason DisconnectTimeout) and are removed. An
// instance empty (no players, no holds) or Finished for a CleanupInterval
// is closed (players get SERVER_DISCONNECT, reason DisconnectShutdown) and
// its port returns to the pool.
//
// Server.Allocate creates an instance with n held seats for a room started
// by the TCP lobby (it satisfies reference-server/tcp's InstancePool).
//
// # Limitations
//
//   - LZ4-compressed rtype17 payloads are dropped (U-COMPRESSED) rather than
//     decompressed; instances carry no game beyond the handshake.
//   - The lobby is one goroutine on one socket (one core). Two SO_REUSEPORT
//     lobby sockets, each with its own loop and session table (the kernel
//     keeps an endpoint on one socket), were measured on the 2-core
//     reference machine against 64 loopback clients: median 95k req/s
//     against 126k with one (0.76×, 16 interleaved runs), as the clients
//     need the second core; so it was not adopted. A reader/worker split
//     adds a channel hand-off per request to the same work and was not
//     pursued.
//   - A JOIN_SUCCESS holds its seat for SeatHold even if the player never
//     comes, and the countdown waits for held seats: a client may delay a
//     room's start by that long (MaxHoldsPerIP bounds how many seats one
//     source IP holds at once; MaxRoomsPerIP how many rooms it created are
//     alive; neither stops several addresses together).
//   - When the session table (MaxSessions) or the rate limiter
//     (MaxRateKeys) is full of live entries, an arbitrary one is evicted:
//     its retry is then acted on again, or its bucket starts full
//     (Stats.RateKeysEvicted).
package udp
