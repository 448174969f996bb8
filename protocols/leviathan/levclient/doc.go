// Package levclient is the simulated client of the Leviathan protocol
// (leviathan.md). It registers the "leviathan" factory with
// simclient; its steps are listed in docs/scenario.md and its rules in
// rules.go.
//
// A session owns one UDP socket connected to the target and one levconn
// engine, run by levconn.Driver on the goroutine calling Run: the run's
// simclient.Sweeper wakes the blocked read for every timer (resends, ack
// flushes, the step's timeout, impairment delays). Requests are Critical:
// the engine resends them (new PKT_ID, same MessageNumber) until acked or
// answered, so steps use their timeout only, never a retry of their own.
// Impairment applies in the driver, on both directions.
//
// Step details not in docs/scenario.md: connect answers a Connect request from the
// server, as the engine's client does, and measures each stage under its own
// message (Connect, Security, Authenticate); join_server fails with
// "join_deny" on ServerDisallow, the server's reason in the error; join_game
// takes ServerAllow(Done) and StartWorldReceive in either order; close sends
// CloseConnection Critical and waits (its timeout) for the server's ack
// before closing the socket, so the server releases the player even under
// loss. malformed's valid datagrams and liveness check are Echo requests.
// rate_probe sends its requests untracked, so the engine's resends cannot
// hide a loss, and matches each Echo's Response None to the oldest
// pending Echo; a request written as a script is matched to its reply by
// the reply's ResponseTo (probeRun.pair).
//
// Besides step and message latencies, every engine resend of a request is
// a Retry of its message; message "ack" holds the latency of each request's
// ack (the acked transmission to its ack: RTT plus the server's ack delay),
// message "duplicate" counts duplicate deliveries the engine suppressed, and
// message "CloseConnection" the close handshake. SetEngineConfig overrides
// the engine's timings for a whole run (tests use a short LostAfter).
package levclient
