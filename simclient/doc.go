// Package simclient holds what every simulated client of `lobbybench run`
// shares: the Session and Factory contract the engine drives, the per-run
// Shared state (plan, target, metrics recorders, group registry, room
// table, timeout Sweeper), the shape of the rules a protocol reports
// (RuleInfo, listed in its Client.Rules) and the failure type sessions
// return (StepError). Each protocol's client lives in its own folder,
// protocols/<name>/<x>client, and registers its Client from init
// (protocol.go).
//
// # What a session measures
//
// Sessions record through Shared.Recorder(id), per step (its label) and per
// message type (the request's protocol name, e.g. "LOBBY_JOIN_ROOM"): the
// latency of each successful request, corrected (from its intended send
// time) and uncorrected (from its first actual send), failures by reason,
// re-sends (Retry, apart from first sends) and every protocol violation
// with hex samples of the packet and of the request that drew it. The
// engine records session starts, ends and dropped starts.
//
// A request's intended send time is the session's due time for its first
// request; SeriesIntended for a ping or echo series; otherwise the moment
// the previous step ended plus any think time, taking the think's end as
// scheduled, not when its timer fired, so what overshoot is left counts
// against the harness as wrk2 does. A re-sent request keeps its first
// intended time (and sequence id), so its latency includes the timeouts
// and retry pauses.
package simclient
