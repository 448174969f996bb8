// Package tcpscript is the tcp-lobby protocol's script.Catalog: the 18
// packet types of tcp-lobby.md §2.3, by their names there, with their
// fields named as the document names them (in lowerCamelCase: RoomID is
// roomId, PlayerName playerName, SecondsRemaining secondsRemaining), built
// and read by protocols/tcplobby/tcpwire, so that a scripted message is
// byte for byte what the built-in client sends, and a reply is checked by
// the same codec and against the same rule ids.
//
// The unit Encode returns and Decode reads is one frame's payload: the
// type byte and the body, without the u32 length prefix. The transport
// adds the prefix when it sends (Frame) and strips it when it reads
// (tcpwire.FrameReader); a framing error (T-FRAME-EMPTY, -TOO-LARGE,
// -TRUNCATED) is the transport's to report.
//
// tcp-lobby has one channel, "": every message travels on the client's
// one connection. GAME_START's Route names channel "instance", the UDP
// game instance its ServerIP and UDPPort name (a ServerIP of 0.0.0.0: the
// target's host); whether lobbybench may go there (T-GAME-START-HOST) is
// the follower's policy, not the catalog's.
//
// Lists: LIST_ROOMS_ACK's rooms, JOIN_ROOM_ACK's and ROOM_UPDATE's
// players are Lists whose entries are the fields of RoomInfo and
// PlayerInfo (§3.3); their counts (roomCount, playerCount) are Auto:
// left out, the list's length; given, sent as given with the listed
// entries only, which makes a malformed frame on purpose. GAME_START
// always carries four PlayerInfo (those not listed are zero) and its
// playerCount, Auto too, defaults to the number listed; its
// spawnPositions are the 32 raw bytes of float[4][2]. PLAYER_JOIN's one
// PlayerInfo is flattened into its fields (number, hash, name, ready).
//
// Text fields have their char[N] size as Max: a text of N bytes is sent
// unterminated, on purpose (T-STRING-UNTERMINATED); shorter ones are
// NUL-terminated and zero-padded as tcpwire.MakeName makes them.
package tcpscript
