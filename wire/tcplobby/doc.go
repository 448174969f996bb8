// Package tcplobby is the byte-exact codec of the R-Type TCP lobby protocol
// (seed 004, "RFC: R-Type TCP Lobby Protocol" v1.0) with the decisions of
// PROTOCOLS.md §3. It is shared by the TCP reference server, the simulated
// client and the conformance suite; it does no I/O policy of its own.
//
// # Wire format
//
// Every message is a frame: a u32 little-endian payload length, then the
// payload, whose first byte is the packet Type. All integers are
// little-endian, structs are packed, strings are fixed char[N] fields,
// NUL-terminated and zero-padded (names 32 bytes, ServerIP 16). Sizes
// (Appendix A) are exported as Size* constants; PlayerInfo is 42 bytes,
// RoomInfo 39, GameStartInfo 219. The 18 types are listed in Types.
//
// # Reading frames
//
//	fr := tcplobby.NewFrameReader(conn, 0) // 0 = DefaultMaxFrame (4096)
//	for {
//		p, err := fr.Next() // p aliases fr's buffer until the next call
//		if err != nil { ... }     // io.EOF at a clean end; else *Error
//		t, err := tcplobby.CheckSize(p) // type + size check, no decode
//		...
//		var m tcplobby.JoinRoomReq  // reuse per connection: zero allocs
//		err = m.DecodeOpts(p, tcplobby.Options{})
//	}
//
// FrameReader allocates one buffer of the maximum frame size and never more:
// a length prefix of 0 or above the maximum is rejected (RuleFrameEmpty,
// RuleFrameTooLarge) after reading only the 4 header bytes, so a server can
// send ERROR_MSG and close (seed §7.1, PROTOCOLS.md §3). Those errors are
// sticky. A stream ending inside a frame gives RuleFrameTruncated wrapping
// io.ErrUnexpectedEOF.
//
// A Decoder (NewDecoder(opts)) keeps one reused message per type and decodes
// any payload with zero allocations: m, err := dec.Decode(p), then a type
// switch on m. Decode (allocates the message) and DecodeOpts are the
// convenience forms; New(t) returns an empty message of a type.
//
// # Writing frames
//
// Each message struct (pointer) implements Message: Type, Size,
// AppendPayload and DecodeOpts. AppendFrame(dst, m) appends length prefix and
// payload without allocating when dst has room; FrameWriter writes one frame
// per Write call with a reused buffer, and WritePayload sends raw (possibly
// malformed) payloads for conformance probes. Encoding never fails and never
// validates: list counts above MAX_ROOMS/MAX_PLAYERS are written as given
// with only the available entries, which is a malformed packet on purpose.
//
// # Strings
//
// Name ([32]byte) and IP ([16]byte) hold the raw wire bytes, which keeps
// decoding allocation-free and round trips exact. MakeName/MakeIP truncate on
// a UTF-8 rune boundary and always keep a terminating NUL (at most 31/15
// bytes of text); a NUL inside the input ends the string. String() reads up
// to the first NUL.
//
// # Strict and lenient decoding
//
// The zero Options is strict: unterminated strings (RuleStringUnterminated),
// bool bytes other than 0/1 (RuleBool), JOIN_ROOM_ACK status outside 0-3
// (RuleJoinStatus), an occupied PlayerInfo slot outside 1-4
// (RulePlayerNumber; GAME_START's entries beyond PlayerCount are "empty" and
// not checked), and bad ERROR_MSG text (RuleErrorText) are errors.
// Options.Lenient accepts all of those; sizes and counts are always enforced.
// Options.Pedantic also rejects non-zero bytes after a string's NUL
// (RuleStringPadding; the seed only says "should"). Every error is an *Error
// with a stable Rule id (see Rules in rules.go, each with a one-line
// description and a LevelFail/LevelWarn level; LookupRule finds one);
// RuleOf(err) extracts it and errors.Is(err, &Error{Rule: id}) matches it.
//
// # ERROR_MSG
//
// The seed draws ERROR_MSG as Type, ErrorCode (1 byte), Message "Variable"
// with no length field and no char[N] size; PROTOCOLS.md §3 decides "the rest
// of the frame, UTF-8, no NUL needed". Our reading: the frame length
// delimits the text (payload is 2 + len(text)); the encoder writes no NUL;
// the decoder tolerates trailing NUL bytes (a C peer sending a terminated or
// padded char buffer) and drops them, and in strict mode rejects non-NUL
// bytes after a NUL and invalid UTF-8. Error codes outside the seed's
// "common" 0x01-0x06 are accepted. NewErrorMsg caps the text at MaxErrorText
// (4094) bytes on a rune boundary so the frame fits DefaultMaxFrame.
//
// # Not checked here
//
// Semantic rules (PlayerCount <= MaxPlayers in a RoomInfo, unique non-zero
// player hashes, RoomID 0 meaning failure, countdown order, who may send
// what) belong to the conformance suite: the codec only judges bytes.
// Direction (client→server vs server→client) is not enforced by decoding.
package tcplobby
