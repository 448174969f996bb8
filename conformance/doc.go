// Package conformance is lobbybench's numbered conformance suite: it tells a
// server author, rule by rule, where a lobby departs from the spec, with
// the bytes to prove it. `lobbybench conform` is a thin layer over Run; the
// page docs/conform.md describes the cases, verdicts, outputs and how
// the suite proves itself, and the Case, Level, Phase, T and Config
// declarations say how a case is written and run.
//
// Case ids are "<group>/<section>/<n>". The Leviathan group's documents
// have no numbered sections, so its sections are: framing 1, handshake 2,
// lobby 3, acks 4, malformed 6, engine quirks Q. This package is the
// runner: a protocol's cases live in a package of the protocol's own
// (udpcases, tcpcases, levcases below this one; protocols/toyecho's beside
// its descriptor), one file per section (udp_5_room_list.go,
// tcp_7_errors.go, …), and reach the suite as the Group of its descriptor.
// They are written with T, the verdict helpers (Fail, Failf, Warnf,
// Skipf, Owned, Precondition, SkipFor) and, for UDP, T.OpenUDP.
//
// # Fail or warn: the review of every MUST-level case
//
// A case fails only where the documents (docs/protocols/*.md)
// leave a conforming server no other choice; where they leave
// it open, the finding is a warning naming the better answer (Warnf).
//
//   - udp-lobby/3/1-3, udp-lobby/12/1, inst/2/9-10, tcp-lobby/2.2/1, tcp-lobby/A/1, leviathan/1/1,
//     1/3: framing, sizes, CRC, sequence echo. The layouts are stated
//     byte by byte (udp-lobby.md §3 and "Echo client's sequence in response",
//     tcp-lobby.md §A, leviathan.md); a client cannot read anything else:
//     fail.
//   - udp-lobby/4/1, udp-lobby/5/1-3, udp-lobby/6/1, udp-lobby/7/1-3, udp-lobby/8/1, udp-lobby/9/1: each
//     request has one documented reply and layout (udp-lobby.md §4-9): fail.
//     udp-lobby/7/2 judges the port range the user gave with --instance-ports.
//   - udp-lobby/10/1, 10/3, 10/4, 10/5: udp-lobby.md §10 lists these failure reasons
//     (room does not exist, full, not Waiting/Countdown, max instances)
//     with JOIN_FAILED as the answer: fail.
//   - udp-lobby/10/2 (roomId 0): WARN on silence. §14 groups roomId 0 with input
//     validation and §13 drops invalid packets silently, so a drop is
//     allowed; JOIN_FAILED is named as the better answer. Any other reply
//     fails.
//   - udp-lobby/13/1-9: §13 "Invalid packets are silently dropped": a reply
//     fails. udp-lobby/13/10 (originalSize) is SHOULD: the documents do not say.
//   - inst/2/1-8: udp-lobby.md §15 states each exchange (HELLO→HELLO,
//     JOIN_REQUEST→ACCEPT or DENY when full or playing, PING→PONG, GAME_START
//     to all, the listed state follows the instance): fail. inst/2/11 and
//     inst/2/12 (reply source port, a listed room whose instance is gone)
//     are SHOULD: no document states them.
//   - tcp-lobby/5.1/1-7, tcp-lobby/5.3/1, tcp-lobby/6.3/1, tcp-lobby/6.4/1: tcp-lobby.md §5-6 give one
//     reply (or broadcast) and status per situation: fail. tcp-lobby/5.3/2
//     (PLAYER_JOIN) warns when ROOM_UPDATE still tells the members.
//   - tcp-lobby/5.2/1 (CONNECT_REQ): WARN when unanswered or closed: tcp-lobby.md
//     calls it an "alternative to join flow", which a lobby may leave out. A
//     wrong CONNECT_ACK fails.
//   - tcp-lobby/5.4/1-2: a wrong ERROR_MSG code fails; silence warns (the seed
//     does not require the refusal message, tcp-lobby.md §5.4 asks for it).
//   - tcp-lobby/7.1/1-4: §7.1 "Server must send ERROR_MSG before closing
//     connection": fail.
//   - leviathan/2/1-4, 3/1-2, 3/4, 3/6-7, 4/1, 4/3, 4/5, 6/1-5: leviathan.md
//     states the engine's behaviour the clients rely on: fail. Replies are
//     matched against the MessageNumbers actually sent, and a Response
//     Keepalive (ResponseTo 0, acks only) is not a reply.
//   - leviathan/3/3 (JoinGame): a ServerDisallow (the engine's
//     InvalidParameters "No valid world to join found" when it has no world)
//     is a valid refusal: WARN naming it; a missing or wrong reply fails.
//   - Quotas and robustness (udp-lobby/10/7, udp-lobby/14/*, tcp-lobby/R/*, leviathan/Q/*,
//     leviathan/3/5, 4/4) are SHOULD: the documents ask for them at most
//     as advice.
//
// # Limitations
//
// Besides what docs/limitations.md lists as not covered:
//
//   - inst/2/12 looks once, right after the room's last player left: an
//     instance that dies later while its room stays listed is not caught.
//   - A server that rate-limits by answering an error to requests the suite
//     paces below ~40/s per address would fail cases wrongly; none is known.
package conformance
