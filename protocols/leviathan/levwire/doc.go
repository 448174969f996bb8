// Package levwire is the byte-exact codec for the Leviathan engine's
// reliable-UDP packet format (leviathan.md,
// where the Ln and La packets, acks and messages are specified). It encodes and decodes datagrams and keeps no connection
// state: the connection engine (packet ids, acks, resends) shared by the
// simulated client and the reference endpoint is levconn.
//
// Messages carry no length, so decoding must know each payload's shape
// (KnownRequest, KnownResponse) to find the next message. Lenient decoding,
// the default, accepts what the engine accepts and stops at a message it
// cannot shape (Packet.Stopped); Strict also enforces the StrictOnly rules.
// Every error is an *Error with a stable Rule id ("L-…", listed in Rules).
// Decode fills a reused *Packet without allocating, and its byte slices
// alias the datagram.
//
// Encoding is append-style into the caller's buffer. The hot path does not
// allocate:
//
//	b = leviathan.AppendNormalHeader(b[:0], id, f.Start, f.Bytes(), 1)
//	b = leviathan.AppendRequestHeader(b, msgNum, leviathan.ReqConnect)
//	b = leviathan.Connect{CheckValue: leviathan.CheckValue}.Append(b)
//
// The Append* header functions write what they are given, so conformance
// tests can build invalid packets.
package levwire
