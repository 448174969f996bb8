// Package levserver is the reference server's Leviathan endpoint: the
// engine's connection handshake and join flow (leviathan.md, which
// specifies the messages and their answers) over one UDP socket, each
// connection run by the shared engine in levconn. What `lobbybench serve`
// offers of it is in docs/serve.md; Config documents every limit with its
// default.
//
// # Where it departs from the engine, or chooses
//
//   - A connection is created only by an Ln packet carrying a Connect
//     request from a new address; anything else from an unknown address is
//     dropped and counted.
//   - Security before Connect, or Authenticate before Security, is dropped
//     ("out-of-order"); any other message before authentication is dropped
//     ("pre-auth"), so ServerDisallow reason Unauthenticated is never sent.
//   - Player ids count from 1001 and are never reused while the server
//     runs; a player is counted against MaxPlayers from ServerAllow until
//     its connection closes.
//   - JoinGame before a successful JoinServer gets ServerDisallow
//     NotAuthorized (4): the documents do not say.
//   - Echo's reply is sent Critical where the engine sends it untracked, so
//     an echo measured under simulated loss does not fail for a lost reply.
//     Every other reply is Critical too.
//   - Serverstatus is answered (Joinable: accepting and not full), where the
//     engine never answers it. Identification, remote console, sync values
//     and the other requests are dropped ("unsupported").
//   - A client's CloseConnection is acked at once, closes the connection
//     and releases its player; for 10 s after, Ln packets from that address
//     (resends of a close whose ack was lost) are still acked statelessly,
//     for at most 4096 addresses.
//   - One of the first packets of a new connection (PKT_ID 1001-1005 with
//     Connect request number 1) from the address of a live connection that
//     has seen later ids and has been silent for 100 ms replaces it
//     (Closes["restarted"]): a client port reused after a close the server
//     never received. Within those 100 ms it may as well be a late copy of
//     the connection's own first packet: it is dropped unacked
//     (Drops["restart-too-soon"]), so that a new client's engine, its
//     Connect neither acked nor answered, resends it (after 1 s), and the
//     resend replaces the connection. Meanwhile nothing of the old
//     connection is sent to the address (Drops["muted"]), since a new
//     client would take its messages' numbers for its own connection's,
//     until the address sends that connection an Ln packet again.
//   - Until a packet from an address acks one of the endpoint's PKT_IDs,
//     what it is sent stays within AmplificationFactor (3) times what it
//     sent (RFC 9000 §8.1), where the engine answers a Connect with five
//     transmissions whoever sent it: a spoofed source would make it an
//     amplifier (Drops["amplification"], Stats.Verified).
//
// One read goroutine handles datagrams and one ticker goroutine runs every
// connection's timers, both under one mutex, under which UDP writes never
// block for long. A per-IP token bucket, off by default, drops floods
// before any decoding.
package levserver
