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
// The fault-injection tests hold the suite to this: each defect is caught
// by the case meant for it and by no other.
//
// # Running
//
// Run(ctx, Config) resolves the target, runs the protocol's Probe (exit 3
// on ErrUnreachable; under --header auto it settles the UDP header
// profile), then the cases in three stages: StageConcurrent cases in
// parallel, StageSerial cases alone (they fill the instance limit or flood
// the server), StageDestructive cases alone and last (the malformed corpus
// may crash the target; once one calls T.TargetDown, later cases are
// skipped). Shared setups (a full room, a started game, one exchange of
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
// Every case keeps a wire log (WireEntry: direction, offset, addresses,
// bytes, note), shown in hex under failures (WriteText) and exported with
// ToConform to the reports package's conform model (WriteJSON, WriteJUnit,
// WriteMarkdown; its HTML renderer reads the same model).
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
//     range of at most 64 ports; the Finished room state (game length) is
//     not exercised.
//   - A server that rate-limits by answering an error to requests the
//     suite paces below ~40/s per address would fail cases wrongly; none
//     is known.
package conformance
