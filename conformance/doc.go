// Package conformance is lobbybench's numbered conformance suite: it tells a
// server author, rule by rule, where a lobby departs from the spec, with
// the bytes to prove it. `lobbybench conform` is a thin layer over Run.
//
// It is shaped after h2spec (cases numbered by spec section, quoting the
// sentence they check, typed verification errors driving every output) and
// Autobahn|Testsuite (non-strict verdicts, a wire log per case).
//
// # Cases
//
// A Case is {ID, Protocol, Section, Desc, Requirement, Rule, Level, Stage,
// Run}. The id is "<group>/<section>/<n>": udp/5/2 is the second case of
// seed 003 §5 (LOBBY_ROOM_LIST), inst/2/… the game-instance handshake of
// PROTOCOLS.md §2, tcp/5.1/3 seed 004 §5.1, tcp/A/1 its Appendix A, tcp/R/…
// robustness cases the seeds do not state, leviathan/3/1 the first case of
// the Leviathan lobby group (LEVIATHAN.md has no numbered sections: the
// groups are framing 1, handshake 2, lobby 3, acks 4, malformed 6, engine
// quirks Q). Each file holds the cases of one
// section (udp_5_room_list.go, tcp_7_errors.go, …) and registers them from
// init() with Register.
//
// Run returns nil when the requirement holds, a *VerifyError {Expected,
// Actual} (Fail, Failf, Warnf) when it does not, a *SkipError (Skipf,
// T.Skip) when a precondition is not met. The verdict follows the level:
// a broken Must fails, a broken Should warns (a failure under --strict),
// Info cases only report what they measured (T.Notef). Any other error is a
// harness error and skips the case: the suite never fails a server for its
// own trouble. A case must judge only what it owns: it reads replies
// leniently (a bad CRC or a wrong sequence is reported by the case for
// that rule, not by every case that saw it), and a setup that fails
// (precondition) becomes a skip naming the case that owns the failure.
// That name comes from one place: a case lists the replies it judges in
// Case.Owns, and the helper that checks each reply (expect for the UDP
// lobby, player.handshake for its instances, tcpExpect, expectReply for
// Leviathan) marks its finding with the owner (owned); precondition and
// skipFor keep the mark, and the runner ends the skip with
// "— judged by <id>", or "— judged by <id>, not run" when --cases left that
// case out.
// The fault-injection tests hold the suite to this: each defect is caught
// by the case meant for it and by no other.
//
// # Fail or warn: the review of every MUST-level case
//
// A case fails only where the documents (seeds 002-004, PROTOCOLS.md,
// LEVIATHAN.md) leave a conforming server no other choice; where they leave
// it open, the finding is a warning naming the better answer (Warnf).
//
//   - udp/3/1-3, udp/12/1, inst/2/9-10, tcp/2.2/1, tcp/A/1, leviathan/1/1,
//     1/3: framing, sizes, CRC, sequence echo. The layouts are stated
//     byte by byte (seed 003 §3 and "Echo client's sequence in response",
//     seed 004 Appendix A, seed 002); a client cannot read anything else:
//     fail.
//   - udp/4/1, udp/5/1-3, udp/6/1, udp/7/1-3, udp/8/1, udp/9/1: each
//     request has one documented reply and layout (seed 003 §4-9): fail.
//     udp/7/2 judges the port range the user gave with --instance-ports.
//   - udp/10/1, 10/3, 10/4, 10/5: seed 003 §10 lists these failure reasons
//     (room does not exist, full, not Waiting/Countdown, max instances)
//     with JOIN_FAILED as the answer: fail.
//   - udp/10/2 (roomId 0): WARN on silence. §14 groups roomId 0 with input
//     validation and §13 drops invalid packets silently, so a drop is
//     allowed; JOIN_FAILED is named as the better answer. Any other reply
//     fails.
//   - udp/13/1-9: §13 "Invalid packets are silently dropped": a reply
//     fails. udp/13/10 (originalSize) is SHOULD: the documents do not say.
//   - inst/2/1-8: PROTOCOLS.md §2 states each exchange (HELLO→HELLO,
//     JOIN_REQUEST→ACCEPT or DENY when full or playing, PING→PONG, GAME_START
//     to all, the listed state follows the instance): fail. inst/2/11 and
//     inst/2/12 (reply source port, a listed room whose instance is gone)
//     are SHOULD: no document states them.
//   - tcp/5.1/1-7, tcp/5.3/1, tcp/6.3/1, tcp/6.4/1: seed 004 §5-6 give one
//     reply (or broadcast) and status per situation: fail. tcp/5.3/2
//     (PLAYER_JOIN) warns when ROOM_UPDATE still tells the members.
//   - tcp/5.2/1 (CONNECT_REQ): WARN when unanswered or closed: seed 004
//     calls it an "alternative to join flow", which a lobby may leave out. A
//     wrong CONNECT_ACK fails.
//   - tcp/5.4/1-2: a wrong ERROR_MSG code fails; silence warns (the seed
//     does not require the refusal message, PROTOCOLS.md §3 asks for it).
//   - tcp/7.1/1-4: §7.1 "Server must send ERROR_MSG before closing
//     connection": fail.
//   - leviathan/2/1-4, 3/1-2, 3/4, 3/6-7, 4/1, 4/3, 4/5, 6/1-5: LEVIATHAN.md
//     states the engine's behaviour the clients rely on: fail. Replies are
//     matched against the MessageNumbers actually sent, and a Response
//     Keepalive (ResponseTo 0, acks only) is not a reply.
//   - leviathan/3/3 (JoinGame): a ServerDisallow (the engine's
//     InvalidParameters "No valid world to join found" when it has no world)
//     is a valid refusal: WARN naming it; a missing or wrong reply fails.
//   - Quotas and robustness (udp/10/7, udp/14/*, tcp/R/*, leviathan/Q/*,
//     leviathan/3/5, 4/4) are SHOULD: the documents ask for them at most
//     as advice.
//
// # Running
//
// Run(ctx, Config) resolves the target, runs the protocol's Probe (exit 3
// on ErrUnreachable; under --header auto it settles the UDP header
// profile), then the cases in four stages: StageConcurrent cases in
// parallel, StageSerial cases alone (they flood the server or need a quiet
// one), StagePool cases alone after those (they exhaust the pool of
// instances or rooms, so they run when nothing else needs a room),
// StageDestructive cases alone and last (the malformed corpus may crash the
// target; once one calls T.TargetDown, later cases are skipped).
//
// Rooms are scarce on a real server (a pool of 4 or 10 instances, freed
// lazily): the fixtures share them (the instance handshake enters the room
// the lobby fixture created and joined), players leave at the end of the
// run, and a create answered "no free instance" is retried for
// Config.PoolWait (default 65 s, two reference cleanup intervals) before
// the case skips, saying how many rooms the run itself made.
//
// Replies are read leniently: a datagram from another port of the target
// host is taken (udp/3/4 and inst/2/11 warn about it), a malformed TCP ACK
// is read for the fields the flow needs (the room id found by name in the
// list, the status byte, the hash from ROOM_UPDATE), and a wait during which
// another host sent something reports what it sent, never "no reply". Shared setups (a full room, a started game, one exchange of
// each request) are fixtures (T.Fixture): run once per run, their wire log
// appended to every case that used them.
//
// Every probe goes out from a SourcePool: local addresses (127.0.0.1-32
// for a loopback target) each paced to 40 sends/s with a burst of 10, so a
// server limiting each IP to ~100 requests/s gives the same verdicts; a
// reply that does not come is retried once from another address before
// the silence counts. The last two addresses are reserved for the
// rate-limit group's flood and its "second source".
//
// Run returns the reports package's conform document (reports.Conform),
// filled as each case ends; every format renders it. Every case keeps a
// wire log (reports.WireEntry: direction, offset, addresses, bytes in hex,
// note), bounded by reports.MaxCaseWireEntries and MaxCaseWireBytes.
//
// # Adding a group (as Leviathan was)
//
// A protocol is added in its own files, without touching the others:
//
//  1. In one file (leviathan.go), register the protocol from init():
//
//     RegisterProtocol(Protocol{Name: ProtoLeviathan, Transport: "udp", Probe: probeLeviathan})
//
//     Probe gets the *Env (Addr, Timeout, Sources…) and returns an error
//     wrapping ErrUnreachable when nothing answers. The name becomes a
//     valid --protocol value.
//
//  2. In one file per document section (leviathan_3_lobby.go, …),
//     register the cases: Register(&Case{ID: "leviathan/3/1", Protocol:
//     ProtoLeviathan, Section: secLevLobby, Requirement: "<quoted
//     sentence>", Level: Must, Run: …}). Ids must be unique across all
//     protocols; the group prefix is the protocol name ("leviathan/…").
//
//  3. In Run, open sockets with T.openUDPOn(T.Env.Sources.Acquire(…))
//     (or your own, logging every datagram with T.LogSent / T.LogRecv),
//     wait at most T.Env.Timeout per reply, share expensive setups with
//     T.Fixture, return Fail/Failf/Skipf. Use StageSerial for cases that
//     change global state and StageDestructive (with T.TargetDown) for
//     those that may crash the target.
//
//  4. Prove it in tests: every case passes against the reference endpoint,
//     and a faulty endpoint is caught by the intended case only.
//
// # Limitations
//
//   - Silence is judged after a fence: a malformed group is followed by a
//     liveness probe and a grace of a few round trips; a server that
//     answers a malformed datagram later than that is not caught.
//   - The rate-limit group floods at 20k datagrams/s for 0.5 s: a limit
//     above that rate is reported as "no rate limit observed".
//   - The instance limit is reached only when --instance-ports names a
//     range of at most 64 ports (udp/10/5 and udp/10/7 skip otherwise); the
//     Finished room state (game length) is not exercised.
//   - tcp/R/4 opens at most 64 connections from one address: a
//     per-address limit above that is reported as not observed.
//   - inst/2/12 looks once, right after the room's last player left: an
//     instance that dies later while its room stays listed is not caught.
//   - A server that rate-limits by answering an error to requests the
//     suite paces below ~40/s per address would fail cases wrongly; none
//     is known.
package conformance
