// Package udpwire is the byte-exact codec of the UDP lobby protocol
// (udp-lobby.md §1-14) and of the game-instance handshake that
// follows it (udp-lobby.md §15): the framing, the messages and the decisions
// where the documents disagree are specified there. The reference server,
// the simulated client, the load engine and the conformance suite all use
// it; it does no I/O.
//
// The header layout is a Profile the caller picks (ProfileSpec or
// ProfileRType17), never hard-coded. Encoders append one whole datagram to
// a caller's buffer, as strconv.AppendInt does, and never allocate with a
// reused buffer; AppendRaw builds malformed datagrams for tests. A Decoder
// is strict: every failure is an *Error whose Rule is a stable id listed
// in Rules, and a room list that fits the Lobby System layout (udp-lobby.md §5) or 13-byte entries
// is diagnosed by name (Error.Diagnosis).
package udpwire
