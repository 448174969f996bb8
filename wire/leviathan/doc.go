// Package leviathan is the byte-exact codec for the Leviathan engine's
// reliable-UDP packet format (seed 002, decisions in LEVIATHAN.md). It
// encodes and decodes datagrams; it keeps no connection state. The
// connection engine (packet ids, acks, resends) used by both the simulated
// client and the reference endpoint is built on top of it.
//
// # Packets
//
// One datagram is one packet, at most MaxDatagram bytes, big-endian.
//
//	Ln (TypeNormal, 0x4C6E):  u16 type | u32 PKT_ID | u32 StartAck
//	                          | [u8 n | n ack bytes]  (only when StartAck != 0)
//	                          | u8 MessageCount | messages…
//	La (TypeAckOnly, 0x4C61): u16 type | u8 Count | Count × u32 PKT_ID
//
// PKT_ID: the engine starts at FirstPacketID (1001) and adds one per
// datagram sent, resends included; 0 is invalid. Only Ln packets count as
// life from the peer.
//
// # Acks
//
// PackAcks turns the set of received PKT_IDs into an AckField (by value, no
// allocation): StartAck plus at most MaxAckBytes bytes, trailing zero bytes
// dropped, as the engine sends. Ids outside the 32-id window are reported by
// the packed count and f.Has; send them in a later packet or an La packet
// (AppendAckOnly). Reading acks: Acked, AppendAckedIDs, Packet.HasAck and
// Packet.AckedIDs. The bit order is an AckReading: AckEngine (default, bit b
// of byte i acks StartAck+8*i+b) or AckSeedPlusOne (the seed's +1).
//
// # Messages
//
//	Request:  u8 0x28 | u32 MessageNumber | u16 RequestType | payload
//	Response: u8 0x12 | u32 MessageNumber | u16 ResponseType | u32 ResponseTo | payload
//
// Messages carry no length, so Decode must know each payload's shape
// (KnownRequest, KnownResponse) to find the next one. Known requests:
// Connect, Security, Authenticate, JoinServer, JoinGame, and the empty Echo
// and Serverstatus (ServerStatusRequest); the other request types
// (Identification, remote console, sync values, …) end lenient decoding.
// Typed payloads
// (Connect, SecurityRequest, …, ServerStatus) implement RequestPayload or
// ResponsePayload: Append encodes, (*T).Decode decodes exactly
// Message.Payload, DecodeRequestPayload/DecodeResponsePayload pick the type.
// Strings are u32 length + bytes and decode as []byte sub-slices of the
// datagram: Clone them (or the Packet) to keep them past the buffer's reuse.
//
// # Encoding (append-style, into the caller's buffer)
//
// Hot path, no allocation:
//
//	b = leviathan.AppendNormalHeader(b[:0], id, f.Start, f.Bytes(), 1)
//	b = leviathan.AppendRequestHeader(b, msgNum, leviathan.ReqConnect)
//	b = leviathan.Connect{CheckValue: leviathan.CheckValue}.Append(b)
//
// AppendRequest/AppendResponse are shorter but take an interface, so a
// payload bigger than a word (anything with a string) is boxed: one
// allocation. Or AppendPacket for a whole *Packet, AppendAckOnly for an La packet.
// The Append* header functions write what they are given, so conformance
// tests can build invalid packets.
//
// # Decoding
//
// Decode(dst, b, mode) fills a reused *Packet (no allocation once its
// slices have grown). Errors are *Error with a stable Rule id ("L-…", see
// Rules and Describe); errors.Is(err, &Error{Rule: RuleAckCount}) matches by
// rule. Lenient mode (default) accepts what the engine accepts: a message of
// unknown kind or type ends decoding without error and is reported in
// Packet.Stopped; bytes after the last message are kept in Packet.Trailing
// (the engine ignores them; a conformance run can warn, and
// Packet.EmbeddedAckOnly spots the engine's Ln-in-front-of-La defect).
// Strict mode also enforces the StrictOnly rules (ack byte count 1..4, no
// trailing zero ack byte, La Count 1..4, no trailing bytes, CheckValue 42,
// MessageNumber != 0, bool 0/1, enum values defined, unknown kinds/types as
// errors).
package leviathan
