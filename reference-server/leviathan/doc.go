// Package leviathan is the reference server's Leviathan endpoint: the
// engine's connection handshake and join flow (LEVIATHAN.md) over one UDP
// socket, each connection run by the shared engine in levconn.
//
// # Use
//
//	cfg := leviathan.DefaultConfig()   // ":53221", 4096 players, 16384 connections, …
//	cfg.Addr = "127.0.0.1:0"           // port 0: pick a free one, read it with Addr()
//	cfg.MaxPlayers = 64                // lobbybench serve --leviathan-max-players
//	srv, err := leviathan.Start(cfg)   // validates, binds, starts the loops
//	…
//	st := srv.Stats()                  // counters snapshot; st.Flat() for printing
//	srv.Close()                        // CloseConnection to everyone, then stops
//
// # Protocol behaviour
//
// A connection is created by the first datagram from a new address that is
// an Ln packet carrying a Connect request (anything else from an unknown
// address is dropped and counted), while fewer than MaxConns exist. Then,
// per message (duplicates, by MessageNumber, are acked by the engine and
// never acted on twice):
//
//   - Request Connect(42) → Response Connect(42), ResponseTo its number
//     (another CheckValue is ignored, as the engine ignores it).
//   - Request Security after Connect → Response Security(None, "", "").
//   - Request Authenticate after Security → Response Authenticate(0, 0):
//     any credentials are accepted, as in the engine. The connection is
//     authenticated. Security before Connect, or Authenticate before
//     Security, is dropped ("out-of-order"; the engine's own client never
//     sends them so).
//   - Any other message before authentication is silently dropped
//     ("pre-auth"), so ServerDisallow reason Unauthenticated (0) is never
//     actually sent: the check exists for completeness, in the engine's order.
//   - JoinServer → ServerDisallow with the first failing reason among not
//     accepting players (3, Config.NotAccepting / SetAccepting), already
//     joined (5), full (2, MaxPlayers players joined), unauthenticated (0);
//     else ServerAllow(ConnectAccepted, "Allowed, ID: N"), player ids from
//     1001, never reused while the server runs.
//   - JoinGame → ServerAllow(Done, "Joined game") and StartWorldReceive(1,
//     0, ""), the latter with ResponseTo 0; JoinGame before a successful
//     JoinServer → ServerDisallow NotAuthorized (4) (a choice: the
//     documents do not say).
//   - Echo → Response None with ResponseTo 0, as the engine does, but sent
//     Critical where the engine sends it untracked: an untracked reply lost
//     in transit would fail an echo measurement under simulated loss.
//   - Serverstatus → ServerStatus (Name, Joinable = accepting and not full,
//     Running, Players, MaxPlayers). The engine never answers it; ours does.
//   - Response CloseConnection from the client is acked at once (an La
//     packet), closes the connection and releases its player; for 10 s
//     after, Ln packets from that address (resends of the close whose ack
//     was lost) are still acked statelessly, at most 4096 such addresses.
//     One of the first packets of a new connection (PKT_ID 1001-1005 with
//     Connect request #1: the first message or its resends) from the
//     address of a live connection that has seen later ids and has been
//     silent for 100 ms replaces it (Closes["restarted"]): a client port
//     reused after a close the server never received. Other requests (Identification, remote console,
//     sync values, …) are dropped ("unsupported"), as the engine does not
//     answer them either.
//
// Every reply is Critical (up to 5 transmissions until acked).
// A player is counted against MaxPlayers from ServerAllow until its
// connection closes: CloseConnection, the engine's idle timeout (no Ln
// packet for 180 s by default, Config.Conn.IdleTimeout), or Close. A
// connection not authenticated within HandshakeTimeout is dropped.
//
// # Robustness
//
// One read goroutine handles datagrams and one ticker goroutine runs every
// connection's timers every TickInterval; both under one mutex, under which
// socket writes never block for long (UDP). Per connection the engine's
// memory is bounded (levconn Bounds; MaxInFlight 32 by default here), the
// connection table by MaxConns (and MaxConnsPerIP from one source IP),
// the rate limiter's table by MaxRateKeys.
// Malformed datagrams are dropped and counted by wire rule id; an Ln packet
// from a known peer whose header decodes still has its id acked and its
// decodable prefix acted on, as in the engine. A per-IP token bucket
// (RateLimit, off by default) drops floods before any decoding.
package leviathan
