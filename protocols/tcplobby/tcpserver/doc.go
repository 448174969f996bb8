// Package tcpserver is the TCP lobby of the reference server: tcp-lobby.md (R-Type TCP
// Lobby Protocol) with its decisions, built on
// protocols/tcplobby/tcpwire. What `lobbybench serve` offers of it is in docs/serve.md;
// Config documents every limit with its default, and InstancePool the
// contract with the UDP side that hands out game instances.
//
// # Behaviour where the documents leave a choice
//
//   - CONNECT_REQ: CONNECT_ACK Success 1 with a random non-zero hash the
//     connection keeps (used in rooms when unique there); Success 0, hash 0
//     for an empty name. An unterminated char[32] name is truncated to 31
//     bytes and bytes after a NUL are zeroed before being echoed.
//   - LIST_ROOMS_REQ: rooms in creation order, InGame true during the
//     countdown and the game.
//   - CREATE_ROOM_REQ leaves the current room first; the creator is host,
//     slot 1, and gets a ROOM_UPDATE. Slots are 1-4, lowest free first, and
//     players are listed in join order.
//   - JOIN_ROOM_REQ: RoomID 0 is ROOM_NOT_FOUND, and ROOM_IN_GAME starts
//     with the countdown; a refusal carries hash 0 and no players. Joining
//     the room one is in answers SUCCESS and changes nothing; joining
//     another leaves the current one first.
//   - READY_REQ toggles; un-readying during the countdown cancels it; it is
//     ignored (counted) once the game started. START_REQ during a countdown
//     or game is ignored (counted).
//   - Refusals that keep the connection use the seed's codes: 0x02 room not
//     found or not in a room, 0x03 not host, 0x04 not all ready, 0x05 empty
//     player name on CREATE/JOIN, 0x06 server error. A malformed frame gets
//     0x06, the nearest common code, with the rule id in the text, then the
//     server shuts its write side and closes.
//
// # Concurrency
//
// Each connection has a reader and a writer goroutine. One mutex guards the
// lobby, and nothing touches a socket under it: replies and broadcasts are
// encoded once and queued without blocking to each connection's bounded
// queue, which its writer drains in batched writes. With at most 16 rooms
// of 4 the critical sections are a few microseconds, so the lock is not
// sharded. One sweep goroutine checks idle connections.
//
// # Limitations
//
//   - The idle timeout counts frames received in every state, and the
//     protocol has no keepalive: a player waiting silently in a room, or
//     keeping the connection open during the UDP game, is dropped after
//     Config.IdleTimeout.
//   - The instance is allocated when the countdown ends, so a pool failure
//     shows after the 3-2-1 ticks, not at START_REQ.
package tcpserver
