// Package levclient is the simulated client of the Leviathan protocol
// (seed 002, LEVIATHAN.md). It registers the "leviathan" factory with
// simclient.
//
// # One session
//
// A session owns one UDP socket connected to the target (bound to its
// source address) and one levconn engine, run by levconn.Driver on the
// goroutine calling Run: no goroutine of its own. Timers (resends after
// 1 s, ack flushes after 200 ms, the step's timeout, impairment delays)
// wake the blocked read through the run's simclient.Sweeper, so no read
// deadline is set per request. Requests are Critical: the engine resends
// them (new PKT_ID, same MessageNumber) until acked or answered, up to 5
// transmissions; steps use their timeout only, never a retry of their own.
// In the closed model the next flow of the same client may carry the
// socket and engine on (Reuse, through simclient.Renew) when this flow
// neither closed the connection nor joined the server.
//
// # Steps
//
//   - connect: Connect(42) → Connect reply (CheckValue 42), then
//     Security(None) → Security reply, then Authenticate(name) →
//     Authenticate reply. Each stage is measured under its own message
//     (Connect, Security, Authenticate); the step from the intended start
//     to the Authenticate reply. A Connect request from the server is
//     answered, as the engine's client does.
//   - join_server: JoinServer(-1) → ServerAllow(ConnectAccepted) (player id
//     parsed from "Allowed, ID: N"); ServerDisallow fails the step with
//     reason join_deny and the server's reason in the error.
//   - join_game: JoinGame(options) → ServerAllow(Done) and
//     StartWorldReceive, in either order.
//   - echo: Count Echo requests Interval apart on a fixed schedule, each
//     answered by a Response None (ResponseTo 0).
//   - status: Serverstatus → ServerStatus (the engine itself never answers
//     it: against an engine server this step times out).
//   - close: CloseConnection, sent Critical, and the step waits (its
//     timeout, default 5 s) for the server's ack before closing the
//     socket, so the server releases the player even under loss.
//   - think, barrier: as for every protocol. malformed: Count datagrams,
//     a Share of them malformed (truncated inside the Ln header, unknown
//     packet type 0x4C7A, random bytes never starting with "L"), the rest
//     Echo requests; a message from the server within Silence of a
//     malformed datagram is an L-MALFORMED-REPLY violation; a final Echo
//     checks liveness (Collector.AddMalformed per kind).
//   - rate_probe (request echo only): Echo requests sent untracked (so the
//     engine's resends cannot hide a loss) on the ramp From→To over Over;
//     replies (Response None, ResponseTo 0) are matched to the oldest
//     pending Echo; simclient.Probe finds the first one-second window with
//     more than Loss unanswered within the step's timeout.
//
// # What is recorded
//
// Besides step and per-request latencies: every resend of a request is a
// Retry of its message (so Series.Retries counts the engine's resends);
// message "ack" holds the ack latency of each request acked by the server
// (the acked transmission → its ack, i.e. RTT plus the server's ack
// delay); message "duplicate" counts duplicate deliveries the engine
// suppressed (latency 0); message "CloseConnection" the close handshake.
// Violations: wire decode errors under their L-… rule ids (lenient
// decoding, as the engine), and L-RESPONSE-TO (a reply's ResponseTo is not
// the request's MessageNumber), L-REPLY-TYPE (a reply of the wrong type,
// or ServerAllow with the wrong AcceptedType), L-CONNECT-CHECK (Connect
// reply CheckValue != 42), L-ACK-READING (the server's acks fit only the
// other ack-bit reading), L-MALFORMED-REPLY.
//
// # Impairment
//
// plan.Impairment applies in the driver, on both directions, from the
// client's generator (Shared.ImpairRand): drop, duplicate, delay ± jitter,
// reorder (held at most 20 ms for a later datagram to overtake it).
//
// SetEngineConfig overrides the engine's timings for a whole run (tests
// use a short LostAfter); by default the engine's are used.
package levclient
