// Package udpserver is the reference server's UDP lobby (udp-lobby.md
// §1-14 and §16) and its pool of game instances (udp-lobby.md §15). What
// `lobbybench serve` offers of it is in docs/serve.md; Config documents every
// limit with its default.
//
// # Lobby
//
// One socket, one read loop with a reused buffer. Datagrams are decoded
// strictly (CRC first); a malformed one is dropped silently and counted by
// rule id without allocating, then the optional token bucket drops the
// excess. IPv4 clients of a dual-stack socket are keyed by their plain IPv4
// address. LIST answers from a cached encoding, rebuilt only when a room
// changes, rooms sorted by id; a room's playerCount counts its held seats,
// never above maxPlayers, so a JOIN fails exactly when the list shows the
// room full. CREATE also answers JOIN_FAILED when no pool port binds, and
// JOIN when the room is Finished.
//
// A retry (same endpoint, sequence, type and roomId) gets the cached reply
// of a CREATE or JOIN again instead of a second room or seat; a JOIN of
// another room under a reused sequence is a new request. When the session
// table is full of live entries an arbitrary one is evicted, and its retry
// is then acted on again (the rate limiter's table likewise: the evicted
// bucket starts full).
//
// # Instances
//
// Each room is an instance with its own socket and read loop. A
// JOIN_REQUEST takes a seat held for the same IP first, else a seat held by
// Allocate, else a free seat, else the oldest hold; a repeated JOIN_REQUEST
// is accepted again and READY is idempotent. The countdown starts when
// every joined player is ready and no held seat is still awaited (so a held
// seat can delay a start by up to SeatHold), and is cancelled when its last
// player leaves; GAME_END names the earliest remaining player. Messages the
// instance initiates are sent once. A READY while counting down, playing or
// finished is answered with the last state message the instance broadcast,
// byte for byte with its original sequence, so a client waiting for
// GAME_START can repeat READY as its retry and, deduplicating by sequence,
// sees each message once; PONG stays the only answer to PING and nothing is
// pushed unasked. Idle players get SERVER_DISCONNECT (DisconnectTimeout);
// an instance closed by cleanup sends it with DisconnectShutdown.
// Server.Allocate creates an instance with n held seats for a room the TCP
// lobby started (tcp.InstancePool).
//
// # Limitations
//
//   - LZ4-compressed rtype17 payloads are dropped (U-COMPRESSED), and
//     instances carry no game beyond the handshake.
//   - The lobby is one goroutine on one socket. Two SO_REUSEPORT lobby
//     sockets measured 0.76× of one on the 2-core reference machine (64
//     loopback clients, 16 interleaved runs: the clients need the second
//     core), and a reader/worker split only adds a hand-off per request.
package udpserver
