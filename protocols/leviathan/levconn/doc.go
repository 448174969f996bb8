// Package levconn is the Leviathan connection engine shared by the
// simulated client (protocols/leviathan/levclient) and the reference endpoint
// (protocols/leviathan/levserver): packet ids, MessageNumbers, acks, resends,
// duplicate suppression, keepalive and idle timeout, as leviathan.md
// describes the engine, on top of the protocols/leviathan/levwire codec. Config holds
// the engine's timings and bounds, each with its default.
//
// A Conn is sans-IO: it never touches a socket or a clock, so its driver
// feeds it and tests run two Conns against each other through a simulated
// lossy link on a virtual clock (conn_test.go):
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
// Driver runs one Conn over a connected UDP socket for a client; the
// reference endpoint drives many Conns from one socket itself.
//
// Acks: the pending received ids that fit one ack field ride on the next
// outgoing Ln packet; those still pending AckDelay after both their
// arrival and the last datagram sent go out in La packets of at most 4
// ids, and an Ln packet that carried acks and is itself lost gives them
// back, so acks survive loss. Each received ack field is read under both
// ack-bit readings (an acked id we never sent is impossible, and ignored),
// which is how EventAckReading tells a peer that reads bits otherwise. A
// tracked message is confirmed when any transmission of it is acked or,
// for a request, when its response arrives; the engine itself completes
// requests only by their response, and confirming on an ack as well only
// avoids useless resends. Every per-connection structure is bounded by
// Config: nothing grows with the peer's input.
package levconn
