// Package levscript is the Leviathan protocol's script.Catalog: every
// message of leviathan.md §5 whose payload the codec knows, named and
// fielded as the document names them, made with the codec's encoders and
// read with its decoders (protocols/leviathan/levwire), so that a scripted
// message is byte for byte what the built-in client
// (protocols/leviathan/levclient) sends.
//
// The unit is one message, a request or a response, as it travels inside
// an Ln packet (§1.3): the packet around it (PKT_ID, acks, MessageCount),
// resends and duplicates are the connection engine's
// (protocols/leviathan/levconn). Leviathan has one endpoint, so no
// message has a Channel and no reply a Route.
//
// # Names
//
// A message is named as the document writes it, kind first: "Request
// Connect", "Response Connect", "Response ServerAllow". The kind is part
// of every name, not only of the five types a request and a response
// share (Connect, Security, Authenticate, Identification, Custom), because
// both sides send both kinds (the client answers the server's Connect and
// sends Response CloseConnection), so the direction cannot tell them
// apart. In YAML that reads "send: Request JoinServer", "expect: Response
// ServerAllow". FromClient is set on the requests and on Response
// CloseConnection, which the built-in client sends; not on Response
// Connect, which a script expects after its Request Connect (a script
// marks each message as one side's, and every handshake needs this one
// from the server), so a script answers a server's own Connect as raw
// bytes.
//
// # Fields
//
// MessageNumber (every message) and ResponseTo (responses) come from the
// message header; the payload fields follow in the document's order
// (CheckValue, SecureType, UserName, AcceptedType, Reason, …). An i32 is an
// Int of 32 bits holding its two's complement (MasterServerToken -1 is
// 4294967295); u8 enums (AcceptedType, Reason, Status) are Ints of 8 bits.
// A field a send leaves out takes the built-in client's value
// (CheckValue 42, SecureType None = 1, UserName "player",
// MasterServerToken -1) or zero.
//
// MessageNumber and ResponseTo are Auto. MessageNumber defaults to the
// Session's NextMessageNumber, which then grows by one (from 1, skipping
// 0, as levconn numbers); a driver whose connection numbers messages
// itself sets NextMessageNumber from it first. A given MessageNumber is
// sent as given and moves no counter. ResponseTo defaults to the
// MessageNumber of the last request decoded that the response answers
// (Response Connect answers Request Connect, ServerAllow and
// ServerDisallow answer JoinServer and JoinGame, …), and to 0 for the
// responses that answer nothing (Keepalive, CloseConnection, None,
// StartWorldReceive: §3 and §4 send them with ResponseTo 0).
//
// # Decoding
//
// Decode reads the message as the only message of an Ln packet with the
// codec, leniently (violations of MUST rules) and strictly (the StrictOnly
// rules, SHOULD), and reports them under the codec's rule ids. Bytes after
// the message's payload are L-PAYLOAD: the unit is one message, so its
// payload does not have exactly the bytes of its shape.
package levscript
