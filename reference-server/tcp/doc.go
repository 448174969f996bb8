// Package tcp is the TCP lobby of the reference server: seed 004 (R-Type TCP
// Lobby Protocol) with the decisions of PROTOCOLS.md §3, built on
// wire/tcplobby.
//
// # Use
//
//	cfg := tcp.DefaultConfig()        // Addr ":7777", 16 rooms of 4, 1s countdown, …
//	cfg.Addr = "127.0.0.1:0"          // port 0: pick a free one, read it with Addr()
//	cfg.Pool = pool                   // required: hands out UDP game instances
//	cfg.Logger = logger               // nil discards logs
//	srv, err := tcp.Listen(cfg)       // validates, binds; Addr() is valid now
//	go srv.Serve(ctx)                 // accepts until ctx is done or Close; returns nil then
//	…
//	st := srv.Stats()                 // counters snapshot; st.Flat() for printing
//	srv.Close()                       // ERROR_MSG "server shutting down" to everyone, closes all
//
// # Contract with the UDP side
//
// GAME_START carries the address of a UDP game instance. The server asks
// Config.Pool for it, once per room, when the countdown has run out:
//
//	type InstancePool interface {
//		Allocate(n int) (netip.AddrPort, error)
//	}
//
// Allocate(n) reserves a new instance for a started TCP room of n players
// (1-4) and returns the address clients send CLIENT_HELLO to. It is called
// without any server lock held, from a timer goroutine, possibly from
// several rooms at once: it must be safe for concurrent use, and it may
// block briefly (bind a socket). Requirements on the returned address:
//   - a valid address with a non-zero port;
//   - its IP (IPv4-mapped addresses are unmapped, zones dropped) must print
//     in at most 15 bytes, as GameStartInfo.ServerIP is char[16]: any IPv4
//     address fits, long IPv6 ones do not;
//   - an unspecified IP (0.0.0.0 or ::), for an instance bound to every
//     interface, is replaced per client by the local address of that
//     client's TCP connection, so returning the instance socket's LocalAddr
//     as is works.
//
// On an error (say, the instance limit is reached) every member gets
// ERROR_MSG 0x06 "no game instance available: <err>", the room returns to
// waiting (ready states kept) and the host may START again.
//
// If the countdown is cancelled while Allocate runs (a player left), the
// address is handed back through the optional Releaser interface
// (Release(addr)) when the pool implements it; otherwise the instance is
// simply never joined and the pool's idle cleanup must reclaim it. An
// instance is also never told when the TCP room ends: the UDP side owns its
// lifetime (players arrive with CLIENT_HELLO or it idles out).
//
// StaticPool returns one fixed address, for a TCP-only server and tests.
//
// # Protocol behaviour
//
// Every frame is a u32 little-endian length and a payload whose first byte
// is the type. A frame whose length is 0 or above MaxFrame (4096), whose
// type is unknown or a server-to-client type, or whose size differs from
// its type's gets ERROR_MSG 0x06 with the rule id and reason as text
// ("tcplobby: T-SIZE-FIXED: …"), then the server shuts its write side
// and closes (seed 004 §7.1: ERROR_MSG before closing). Names are not a
// framing matter: an unterminated char[32] name is truncated to 31 bytes
// (seed §8.3) and bytes after a NUL are zeroed before being echoed.
//
//   - CONNECT_REQ: CONNECT_ACK Success 1 with a random non-zero hash that
//     the connection keeps (and uses in rooms when unique there); Success
//     0, hash 0 for an empty name.
//   - LIST_ROOMS_REQ: LIST_ROOMS_ACK, rooms in creation order, InGame true
//     during the countdown and the game.
//   - CREATE_ROOM_REQ: leaves the current room if any, then
//     CREATE_ROOM_ACK (RoomID, hash); RoomID 0 and hash 0 when MaxRooms
//     (16) rooms exist. The creator is host, slot 1, and receives a
//     ROOM_UPDATE.
//   - JOIN_ROOM_REQ: JOIN_ROOM_ACK SUCCESS with the hash and every player
//     including the joiner; ROOM_NOT_FOUND (also RoomID 0), ROOM_FULL, or
//     ROOM_IN_GAME (countdown running or game started) with hash 0 and no
//     players. The other members get PLAYER_JOIN, then everyone
//     ROOM_UPDATE. Joining the room one is in answers SUCCESS and changes
//     nothing; joining another leaves the current one first.
//   - READY_REQ: toggles; PLAYER_READY then ROOM_UPDATE to every member
//     including the sender. Un-readying during the countdown cancels it.
//     Ignored (counted) once the game started. Outside a room: ERROR_MSG
//     0x02.
//   - START_REQ: outside a room ERROR_MSG 0x02; from a non-host 0x03; with
//     any player not ready 0x04; ignored (counted) during a countdown or
//     game. Otherwise COUNTDOWN 3 at once, 2 and 1 CountdownInterval apart,
//     then after one more interval GAME_START to every member (PlayerCount,
//     the players in join order, the unused entries zero, spawn positions
//     per slot).
//   - DISCONNECT: leaves the room, the server closes the connection.
//
// Players are listed in join order; the first is the host. When the host
// leaves, the next player becomes host (the seed allows destroying the
// room or handing it on). A player leaving (DISCONNECT, close, error,
// timeout) sends PLAYER_LEFT then ROOM_UPDATE to the remaining members and
// cancels a running countdown; the last one leaving removes the room. The
// player hash is random, non-zero and unique in the room; slots are 1-4,
// lowest free first.
//
// Refused requests that keep the connection use the seed's codes: 0x02
// room not found / not in a room, 0x03 not host, 0x04 not all ready, 0x05
// invalid (empty) player name on CREATE/JOIN, 0x06 server error.
//
// # Robustness
//
// Each connection has a reader goroutine and a writer goroutine. The lobby
// state is guarded by one mutex under which nothing touches a socket:
// replies and broadcasts are encoded once and queued with non-blocking
// sends to each connection's bounded queue (MaxQueue frames). The writer
// batches what is queued into one write bounded by WriteTimeout. A client
// whose queue overflows, or whose socket accepts nothing for WriteTimeout,
// is disconnected (it leaves its room as any leaver does); nothing is
// buffered without bound and no other client waits for it. Connections
// beyond MaxConns get ERROR_MSG 0x06 "server full", beyond MaxConnsPerIP
// from one source IP "too many connections from your address", and are
// closed; a CREATE_ROOM_REQ from an IP whose connections created
// MaxRoomsPerIP live rooms gets RoomID 0. A
// connection that completes no frame for IdleTimeout (a half-sent frame
// does not count) gets ERROR_MSG 0x06 "idle timeout" and is closed; one
// sweep goroutine checks all connections instead of a deadline per read.
// When the server closes a connection after an ERROR_MSG it shuts its write
// side and keeps discarding input for up to Linger, so the client reads the
// ERROR_MSG and an orderly end of stream rather than a reset.
//
// Stats counts frames in and out by type, refusals and rejected frames by
// reason, closed connections by reason, connections and rooms.
//
// Close is safe before, during or after Serve; it waits for connection
// goroutines (bounded) and for any Allocate/Release in flight, so the pool
// may be closed as soon as it returns.
//
// # Limitations
//
//   - The idle timeout counts frames received, in every state: the protocol
//     has no keepalive, so a player waiting silently in a room, or keeping
//     the TCP connection open during the UDP game, is dropped after
//     IdleTimeout (default 2 minutes; negative disables).
//   - One mutex guards the whole lobby. With at most 16 rooms of 4 players
//     the critical sections are a few microseconds and never touch a
//     socket; it is not sharded.
//   - The instance is allocated when the countdown ends, so a pool failure
//     shows after the 3-2-1 ticks, not at START_REQ.
//   - Malformed frames are answered with code 0x06 ("server error"), the
//     nearest of the seed's common codes; the text names the rule.
package tcp
