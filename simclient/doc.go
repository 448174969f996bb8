// Package simclient holds what every simulated client of `lobbybench run`
// shares: the Session and Factory contract the engine drives, the per-run
// Shared state (plan, targets, metrics recorders, group registry, room
// table, timeout sweeper), the semantic rule ids sessions report (rules.go)
// and the failure type sessions return. The protocols live in
// subpackages that register a Factory in init():
//
//	simclient/udpclient  "udp-lobby"  UDP lobby + game instance (PROTOCOLS.md §1, §2)
//	simclient/tcpclient  "tcp-lobby"  TCP lobby (PROTOCOLS.md §3)
//	simclient/levclient  "leviathan"  Leviathan reliable UDP (LEVIATHAN.md)
//
// # Use (the engine)
//
//	import (
//		"github.com/lobbybench/lobbybench/simclient"
//		_ "github.com/lobbybench/lobbybench/simclient/tcpclient"
//		_ "github.com/lobbybench/lobbybench/simclient/udpclient"
//	)
//
//	sh, err := simclient.NewShared(plan, simclient.Targets{UDPLobby: addr}, collector, simclient.Options{})
//	defer sh.Close()                           // stops the sweeper
//	newSession, ok := simclient.Lookup(string(plan.Protocol))
//	...
//	// for each arrival, IN ARRIVAL ORDER (group membership depends on it):
//	s, err := newSession(sh, id, &plan.Flows[i], src) // UDP binds its socket here; TCP dials in its first step
//	go func() { defer s.Close(); err := s.Run(ctx, due) }()
//
// id is the client's index in the run (0, 1, 2 …; a closed-model client
// that starts its flow again may keep its id). It picks the client's
// metrics recorder (id % number of recorders), its think-time generator
// (scenario.NewRand(plan.Seed, 1+id)) and its impairment generator. src is
// the local address to bind (the invalid netip.Addr{} lets the OS choose);
// the engine picks it round-robin from plan.SourceAddrs. due is when the
// schedule wanted the session to start (the open model's arrival time): the
// first request of the session is measured from it, which is what corrects
// for coordinated omission when the generator falls behind. A zero due means
// "now".
//
// Run plays the flow's steps once, in order, and returns nil when the
// flow completed. A failed step ends the session and Run returns a
// *StepError naming the step and the Reason (reports.Reason* names:
// "timeout", "join_failed", "join_deny", "violation", "conn_refused",
// "conn_reset", plus "no_room", "room_full", "refused", "closed",
// "creator_failed" …); when ctx ends first, Run returns ctx.Err() (possibly
// wrapped in a StepError whose Reason is "cancelled").
//
// The engine ends a run in two stages. ctx may carry a stop signal
// (WithStop; StopContext reads it): when it fires, a session starts no
// further step, ends its waits at once (think, ping and echo intervals,
// barriers, a group's room, wait_game_start / wait_countdown, malformed and
// rate_probe series) and does not re-send a UDP request that timed out; Run
// then returns ErrStopped, a cut, not a failure. A request already sent
// is still waited for until its timeout, until ctx itself is cancelled.
// Failures of malformed and rate_probe steps are
// findings, not session failures. Close releases the socket and the
// session's place in its group; it is safe to call more than once and
// concurrently with Run (Run then returns promptly).
//
// # What sessions record, and what the engine records
//
// Sessions record, through Shared.Recorder(id): per step (key = the step's
// Label, see Shared.StepKey) and per message type (key = the request's
// protocol name, e.g. "LOBBY_JOIN_ROOM", "CLIENT_PING", "JOIN_ROOM_REQ")
// the latency of each successful request (corrected: from the intended send
// time; uncorrected: from the first actual send), failures by reason,
// retransmissions (Retry, apart from first sends), and every protocol
// violation by rule id with hex samples of the packet and of the request
// that caused it. Malformed and rate-probe findings go to the Collector
// (AddMalformed, AddRateLimit). The engine records SessionStarted,
// SessionFinished and Dropped starts, and counts a session failed when Run
// returns a non-nil error that is not the run's own cancellation.
//
// A request's intended send time is: the session's due time for its first
// request; for a ping/echo series with an interval, the first ping's
// intended time plus i×interval (an open schedule, as wrk2: a slow reply
// makes the later pings late, and that lateness is measured); for a
// back-to-back series (interval 0), the completion of ping i-1 (a closed
// loop: a ping cannot be due before its predecessor was answered; see
// SeriesIntended); otherwise the moment the previous step ended plus any
// think time (the think's end as scheduled, not when its timer fired:
// SleepUntil wakes precisely, and what overshoot is left is the harness's,
// counted from the schedule as wrk2 does). A retried request keeps its first intended time and sequence id, so
// its latency includes the timeouts and retry pauses.
//
// # Groups
//
// Following the scenario model (scenario/doc.go), the n-th session of a
// flow (counted by Shared.Join, called by the factories, so in the order
// the engine creates sessions on this process) is member n % GroupSize of
// group n / GroupSize of that flow; member 0 is the leader. Counting
// created sessions rather than scheduled arrivals keeps groups whole when
// the engine drops starts: the next G created sessions still form a group
// led by its first. (A sharded run owns whole groups per shard, so each
// shard's count aligns with its groups until a start is dropped.) A Group carries the
// room its creator made (SetRoom / WaitRoom: a join with room: created
// waits for it at most the join's whole request budget, Budget(policy) =
// timeout × (retries+1) + retry_interval × retries; FailRoom wakes the
// waiters at once when a member that runs the create step failed or ended) and barriers (Arrive: wait until N members
// reached the step at this index). A group lives until all its members
// have closed.
//
// # Timeouts without per-request deadlines
//
// A socket read deadline set per request costs ~20 % throughput at 1,000
// clients, so sessions never do that. Each session registers a Waker with
// the run's Sweeper and arms it with the instant its pending request times
// out (an atomic store); one goroutine scans the wakers every Options.Tick
// and only for the rare expired one calls the wake function (the socket's
// SetReadDeadline(now)), which makes the blocked read return. The session
// then checks its own clock (a wake may be stale) and clears the deadline.
//
// # Rate probes and collateral damage
//
// Probe holds the protocol-independent part of a rate_probe step: the
// ramp's send schedule (At, Total), outcomes in one-second windows, the
// limit (Limit) and the reports.RateLimitFinding (Finding; its Source is
// the step's label). Every session reports each ordinary request's outcome
// to Shared.Observe, a striped per-second coarse histogram (atomic adds, no
// lock, ~9 % bucket resolution), so a probe can read with OthersP99 the
// p99 and errors of everyone else before and while it was limited.
//
// # Other helpers
//
// SetBuffers sets SO_RCVBUF/SO_SNDBUF (FORCE variants first, as root);
// Shared.Value keeps a protocol package's per-run state; Budget is a
// request policy's total time; Creates tells whether a group member runs a
// create step.
//
// # Rules
//
// Sessions report wire decode errors under the wire packages' rule ids
// (U-…, I-…, T-…) and the semantic rules of rules.go (sequence echo, reply
// type, port stability, countdown order, broadcasts …) under ids listed in
// Rules with their descriptions.
package simclient
