// Package udpclient is the simulated client of the UDP lobby (udp-lobby.md
// §1-14) and of the game instance it hands out (§15). It registers the
// "udp-lobby" factory with simclient; its steps are listed in
// docs/scenario.md and the rules it checks in rules.go.
//
// A session owns one UDP socket bound to its source address, unconnected so
// that it talks to the lobby and to the instance port a create or join
// returned (the instance's IP is the lobby's). The goroutine calling Run
// sends, receives and decodes, with reused buffers: a ping or list request
// allocates nothing. With simclient.Options.SuspendWaits a request whose
// reply is not there yet suspends the session instead of parking
// (simclient.Base.Await): the request's wait lives in the session
// (replyWait), and Resume runs the step again, whose request call goes on
// waiting for the same reply without sending it again.
//
// Requests: every request gets the session's next sequence id (from 1),
// kept by its re-sends; a reply during a retry pause still counts, and an
// echo of an older, re-sent request is a late duplicate, not a violation.
// CLIENT_READY and CLIENT_DISCONNECT have no reply: they succeed when sent,
// with the send's cost as latency. A ROOM_LIST larger than the 2 KiB
// receive buffer grows it to 64 KiB and is asked again at once (a retry).
// Room lists are checked for consistency (a room keeps its port and never
// goes back in state) but not for order beyond ids. With header_profile
// auto a request alternates the two headers across its re-sends until a
// reply is recognised, and the profile found serves every session.
//
// Impairment adds no goroutine: datagrams held back wait in a per-session
// queue that the session's own goroutine flushes when the sweeper wakes it.
// Under incoming duplication or reordering, the countdown and
// GAME_START-once checks ignore exact repeats and order.
//
// malformed breaks packets built by the encoder; its valid packets and the
// liveness check after the silence window are requests of the step's label.
// rate_probe keeps several requests in flight, each with its own sequence
// id and no re-send (an id is used again 65,536 requests later, once its
// request has ended: probeIDs); a refusal is any answer but the legal one (say,
// JOIN_FAILED). Answered probe requests are the step's successes; lost or
// refused ones are not failures of the run but the finding's Limited count.
package udpclient
