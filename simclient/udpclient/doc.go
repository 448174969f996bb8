// Package udpclient is the simulated client of the UDP lobby (PROTOCOLS.md
// §1) and of the game instance it hands out (§2). It registers the
// "udp-lobby" factory with simclient.
//
// # One session
//
// A session owns one UDP socket bound to its source address (port 0), with
// SO_RCVBUF/SO_SNDBUF from the plan, unconnected so that the same socket
// talks to the lobby and to the instance port a create or join returned
// (the instance's IP is the lobby's). One goroutine — the one calling Run —
// sends, receives and decodes; buffers are reused, so a ping or list
// request allocates nothing. Timeouts come from the run's simclient.Sweeper:
// the socket's read deadline is only touched when a request actually
// timed out.
//
// # Requests
//
// Every request gets the next sequence id of the session (from 1). A
// request that gets no reply within Policy.Timeout is re-sent, keeping its
// sequence id, after Policy.RetryInterval, up to Policy.Retries times (a
// late reply during the pause still counts); each re-send is a Retry in
// the metrics, apart from first sends. CLIENT_READY and CLIENT_DISCONNECT
// have no reply: they succeed when sent, with the send's cost as latency.
// A ROOM_LIST larger than the receive buffer (2 KiB, about 180 rooms) grows
// the buffer to 64 KiB and the list is asked again at once (counted as a
// retry).
//
// # Checks
//
// Every datagram is decoded strictly with wire/udplobby (lobby channel from
// the lobby's address, instance channel from the instance's) and judged:
// decode failures under the codec's rule ids, then the semantic rules of
// simclient/rules.go — the sequenceId echoes a request this session sent
// (an echo of an older, retried request is a late duplicate, not a
// violation), the reply type answers the request, JOIN_SUCCESS names the
// requested room on the port the room was created on (run-wide
// simclient.RoomTable), ports fall in plan.InstancePorts when given, a room
// just created appears in the next list asked within a second, a room
// listed twice to the same client keeps its port and never goes back in
// state (lists sorted by id only; the order is unspecified), PONG echoes
// clientTime, countdown ticks decrease and game events come in order
// (ALL_READY/COUNTDOWN/GAME_START only after joining, GAME_START once,
// GAME_END after it). A bad reply to the pending request fails it with
// reason "violation". Datagrams from an address the session never sent to
// are U-REPLY-SOURCE violations.
//
// # Header profile
//
// plan.HeaderProfile "spec" or "rtype17" is used as is. With "auto",
// requests alternate spec and rtype17 headers across retries until a reply
// is recognised (udplobby.GuessProfile); the profile found is then used by
// every session of the run.
//
// # Impairment
//
// plan.Impairment applies client-side, in the send path and the receive
// path, from a generator seeded per client (Shared.ImpairRand): a datagram
// is dropped, duplicated, delayed by Delay ± Jitter, or held back until
// the next datagram of the same direction overtakes it (at most 20 ms
// beyond its delay). Held datagrams wait in a per-session queue that the
// session's own goroutine flushes (the sweeper wakes it when one is due),
// so impairment adds no goroutine. With incoming duplication or reordering
// the countdown and GAME_START-once checks ignore exact repeats and order.
//
// # Robustness steps
//
// malformed sends Count packets, Interval apart, of which Share are built
// with the encoder and then broken (bad_crc, truncated, wrong_length,
// unknown_type, wrong_direction, random) and the rest valid
// LOBBY_LIST_ROOMS (or CLIENT_PING to the instance with to: instance). Any
// reply to a malformed packet within Silence is counted (and is a
// U-/I-MALFORMED-REPLY violation); after the silence window one valid
// request is the liveness probe. Per kind, sent, unexpected replies and
// liveness are added to the Collector (AddMalformed). The valid packets
// and the probe are requests of the step's label.
//
// rate_probe sends Request (list_rooms, create_room or join) on the
// schedule of simclient.Probe: the rate ramps linearly From→To over Over,
// several requests in flight, each with its own sequence id, the step's
// timeout and no retry. Outcomes are counted in one-second windows of send
// time; the first window in which more than Loss of the requests went
// unanswered or were refused (any answer but the legal one, e.g.
// JOIN_FAILED) marks the limit, and the finding's observed limit is the
// highest answered rate up to that window. Answered probe requests are the
// step's successes (with latency); lost or refused ones are not failures of
// the run but the finding's Limited count. The finding (source: the step's
// label, so the engine maps "<label>.limit" to it; the note names the
// probing address) carries the p99 and errors of every other request of
// the run before and while the probe was limited, from Shared.OthersP99.
// A probe cut by the end of the run still reports what it measured.

package udpclient
