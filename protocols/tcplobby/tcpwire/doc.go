// Package tcpwire is the byte-exact codec of the R-Type TCP lobby protocol
// (tcp-lobby.md, "RFC: R-Type TCP Lobby Protocol" v1.0) with its decisions, where the framing and the packets are specified. It is
// shared by the TCP reference server, the simulated client and the
// conformance suite, and does no I/O policy of its own.
//
// A connection's read loop decodes without allocating:
//
//	fr := tcplobby.NewFrameReader(conn, 0) // 0 = DefaultMaxFrame (4096)
//	dec := tcplobby.NewDecoder(tcplobby.Options{})
//	for {
//		p, err := fr.Next() // p aliases fr's buffer until the next call
//		if err != nil { ... } // io.EOF at a clean end; else *Error
//		m, err := dec.Decode(p) // then a type switch on m
//	}
//
// Encoding never fails and never validates, so tests can write malformed
// packets on purpose. Decoding is strict by default (Options); every error
// is an *Error with a stable Rule id listed in Rules. The codec judges bytes
// only: semantic rules (PlayerCount ≤ MaxPlayers, unique non-zero hashes,
// RoomID 0 meaning failure, countdown order, who may send what, including
// a packet's direction) belong to the simulated client and the conformance
// suite.
package tcpwire
