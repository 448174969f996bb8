// Package levconn is the Leviathan connection engine shared by the
// simulated client (simclient/levclient) and the reference endpoint
// (reference-server/leviathan): packet ids, MessageNumbers, acks, resends,
// duplicate suppression, keepalive and idle timeout, as LEVIATHAN.md
// describes the engine, on top of the wire/leviathan codec.
//
// # Sans-IO
//
// A Conn holds one connection's state and never touches a socket or a
// clock. Its driver feeds it:
//
//	c, _ := levconn.New(levconn.Config{}, now)         // zero fields: the engine's defaults
//	num, err := c.SendRequest(now, levconn.Critical, leviathan.ReqConnect,
//		leviathan.Connect{CheckValue: leviathan.CheckValue}.Append(scratch[:0]))
//	err = c.Receive(now, datagram)                     // a datagram from the peer
//	c.Tick(now)                                        // timers: resends, keepalive, idle close
//	for b := c.Poll(now); b != nil; b = c.Poll(now) { socket.Write(b) }
//	for _, ev := range c.Events() { … }                // messages, confirmations, resends, losses
//	wake := c.Deadline()                               // when Tick next has work
//
// Everything is deterministic given the datagrams and instants fed in, so
// tests run two Conns against each other through a simulated lossy link on
// a virtual clock (see conn_test.go). Driver (driver.go) is the thin socket
// driver for one client connection; the reference endpoint drives many
// Conns from one socket itself.
//
// # Driver
//
// Driver runs one Conn over a connected UDP socket on its caller's
// goroutine: SendRequest/SendResponse queue and write, Next blocks until
// the connection has an event (running reads, timers, resends and ack
// flushes meanwhile) or a deadline passes. Wake lets a run-wide sweeper
// interrupt blocked reads instead of a socket deadline per read; In/Out
// apply simulated loss, duplication, delay and reordering (Impair);
// OnSend/OnRecv/OnMalformed observe the wire. Its receive buffer starts at
// 2 KiB (thousands of sessions) and grows to 64 KiB the first time a
// datagram is truncated, that datagram being lost (Driver.Truncated).
//
// # Behaviour (engine defaults, all configurable in Config)
//
//   - Every Ln packet gets the next PKT_ID (first 1001), resends included;
//     every message the next MessageNumber of this direction (first 1); a
//     resend keeps its MessageNumber. One message per Ln packet, as the
//     engine sends.
//   - Every received Ln PKT_ID is acked: the pending ids that fit one ack
//     field (32 ids from the smallest) ride on the next outgoing Ln packet;
//     ids still pending AckDelay (200 ms) after both their arrival and the
//     last datagram sent go out in La packets of at most 4 ids. An Ln
//     packet that carried acks and is itself lost (see below) gives its
//     acks back to the pending list, so acks survive loss; La packets carry
//     no id and are never acked.
//   - A transmission is lost LostAfter (1 s) after it was sent without an
//     ack, or as soon as the peer acks an id more than LostIDGap (4) above
//     it. A lost message is resent while its class allows: None 1
//     transmission, ResendOnce 2, Critical CriticalTransmissions (5); then
//     EventLost, and the connection stays open unless CloseOnCriticalLoss.
//     A tracked message is confirmed (EventConfirmed) when any of its
//     transmissions is acked, or, for a request, when a response with
//     ResponseTo equal to its MessageNumber arrives. (The engine itself
//     completes requests only by their response; confirming on an ack as
//     well only avoids useless resends.)
//   - A message whose MessageNumber is among the last DuplicateWindow (50)
//     received is reported as EventDuplicate, not EventMessage: its packet
//     is acked, it must not be acted on.
//   - KeepaliveAfter (120 s) without sending anything sends a Critical
//     Keepalive response; IdleTimeout (180 s) without an Ln packet from the
//     peer closes the connection (EventClosed, CloseIdle). La packets are
//     not life, as in the engine.
//
// # Ack-bit reading
//
// Config.AckReading is used both to pack our acks and to read the peer's:
// leviathan.AckEngine (default, no +1) or AckSeedPlusOne (seed 002's +1).
// Each received ack field is checked under both readings: an acked id we
// never sent is impossible. Stats.AckFieldsFit{Both,Ours,Other,Neither}
// count the verdicts, and the first field that fits only the other reading
// raises EventAckReading with an explanation (the first exchange of a
// connection is usually enough to tell: acking id 1001 reads as 1000 or
// 1002 under the wrong reading). Impossible ids are ignored.
//
// # Bounds
//
// Per connection: at most MaxInFlight messages held (Send fails with
// ErrInFlightFull beyond), each at most MaxMessage bytes; MaxPendingAcks
// received ids waiting for an ack (the oldest forgotten beyond);
// DuplicateWindow remembered numbers; the last 128 sent packets; MaxEvents
// events between two Events calls. Nothing grows with the peer's input.
//
// # Malformed input
//
// Receive decodes leniently, as the engine does. A datagram that is not a
// decodable Ln or La packet is dropped (Stats.Malformed, error returned).
// An Ln packet whose header decoded but whose body is bad (truncated ack
// field or message) still has its id acked and what decoded before the bad
// field acted on, as the engine's callback decoder does. A message whose
// type has no payload shape in wire/leviathan (lenient decoding stops at
// it, e.g. an Identification request) is delivered with the rest of the
// datagram as its payload, so an endpoint can still count or answer it.
package levconn
