// Package udplobby is the byte-exact codec of the UDP lobby protocol
// (PROTOCOLS.md §1, seed 003) and of the game-instance handshake that
// follows it (PROTOCOLS.md §2). The reference server, the simulated client,
// the load engine and the conformance suite all use it; it does no I/O.
//
// # Framing
//
// Every datagram is header | payload | CRC-32/IEEE (big-endian, over
// header+payload). The header layout is a Profile the caller picks, never
// hard-coded: ProfileSpec (8 bytes, the documents' format) or ProfileRType17
// (17 bytes: magic A3 5F C8 1D, version 1 with bit 7 = LZ4, tickId). Use
// ParseProfile for a "spec"/"rtype17" setting (*Profile is a flag.Value) and
// GuessProfile to recognise the profile of a server's first reply.
//
// # Encoding
//
// Encoders append one whole datagram to a caller buffer and return it, like
// strconv.AppendInt; with a reused buffer they never allocate:
//
//	buf = udplobby.AppendListRooms(buf[:0], p, seq)            // 12 bytes (spec)
//	buf = udplobby.AppendJoinRoom(buf[:0], p, seq, roomID)     // 16
//	buf = udplobby.AppendCreateRoom(buf[:0], p, seq)           // 12
//	buf, err = udplobby.AppendRoomList(buf[:0], p, seq, rooms) // 14 + 11n
//	buf = udplobby.AppendRoomCreated / AppendJoinSuccess(buf[:0], p, seq, id, port) // 18
//	buf = udplobby.AppendJoinFailed(buf[:0], p, seq)           // 12
//	buf = udplobby.AppendPing / AppendPong(buf[:0], p, seq, clientTime)
//	buf, err = udplobby.AppendEmpty(buf[:0], p, udplobby.ClientHello, seq)
//	buf, err = udplobby.Append(buf[:0], p, &msg)                // any message, tickId, explicit packetType
//	buf = udplobby.AppendRaw(buf[:0], p, hdr, payload)          // no checks: malformed packets for tests
//
// Room list entries are 11 bytes (u32 roomId, u16 playerCount, u16
// maxPlayers, u16 port, u8 state): the field list of seed 003 is normative,
// not its "13 bytes per room" (PROTOCOLS.md §1.3).
//
// # Decoding
//
// A Decoder is strict. A server uses
//
//	d := udplobby.Decoder{Profile: p, Dir: udplobby.ClientToServer, Channel: udplobby.ChannelLobby}
//
// a client Dir: ServerToClient; an instance socket Channel: ChannelInstance.
// d.Decode(datagram, &msg) fills a reused Message without allocating; a
// LOBBY_ROOM_LIST's rooms stay in the datagram (msg.Rooms.Len, At,
// AppendRooms), so copy them out before reusing the receive buffer.
// DecodeHeader checks framing only.
//
// Every failure is an *Error (errors.As) whose Rule is a stable RuleID from
// rules.go, listed with a one-line summary in Rules: U-SHORT, U-LENGTH,
// U-CRC, U-MAGIC, U-VERSION, U-COMPRESSED, U-ORIGINAL-SIZE, U-PACKET-TYPE,
// U-DIRECTION, U-TYPE-UNKNOWN, U-TYPE-DIRECTION, U-PAYLOAD-SIZE,
// U-ROOMLIST-COUNT, U-ROOM-ID, U-ROOM-PORT, U-ROOM-STATE, U-ROOM-PLAYERS,
// and for instance messages I-TYPE-UNKNOWN, I-TYPE-DIRECTION,
// I-PAYLOAD-SIZE. The Error carries the header read so far (to match a bad
// reply to its request by Seq), the byte offset, the room index, the
// offending and expected values, and for U-ROOMLIST-COUNT a Diagnosis when
// the payload fits seed 001's layout (DiagSeed001: u32 roomCount, 15-byte
// entries) or 13-byte padded entries (DiagPadded13).
//
// Decisions the documents leave open:
//   - originalSize must equal payloadSize (0 for an empty payload); an
//     rtype17 packet with the LZ4 bit set is reported as U-COMPRESSED and
//     not decoded.
//   - A message must travel in its own direction (requests 0x01, replies
//     0x02) whatever Decoder.Dir is.
//   - LOBBY_JOIN_ROOM for roomId 0 decodes: it is a well-formed request the
//     server answers with JOIN_FAILED. roomId 0 and port 0 are violations
//     only in what a lobby sends (ROOM_CREATED, JOIN_SUCCESS, list entries).
//   - Instance payload values (reasons, seconds left, player ids) are not
//     range-checked: the documents give no ranges.
package udplobby
