// Package scenario parses a lobbybench YAML scenario into a validated Plan,
// the one input of the load engine.
//
// # Loading
//
// Load(path) (or Parse(name, bytes)) decodes the YAML through yaml.Node so
// every problem keeps its line, validates everything, fills in defaults and
// resolves units. A broken scenario yields no Plan and an Errors value
// listing every problem as "file:line: message" (unknown keys with a "did you
// mean", wrong types, steps not valid for the protocol, weights ≤ 0, negative
// durations, barriers larger than their group, thresholds on unknown
// metrics…). The CLI prints err.Error(), one problem per line, and exits
// with its "invalid config" code; nothing is sent. A Plan that Load returns
// is valid: the engine does not need to re-check it. Command-line flags are
// applied with Plan.Apply(Overrides) after loading.
//
// # The model the engine executes
//
// A run lasts Plan.Load.Duration. Plan.Load.Profile() is a pure,
// immutable schedule of the load (a piecewise-linear function of elapsed
// time: ramps between stages, the last target held to the end):
//
//   - Open model (Load.Model == Open): new client sessions arrive at
//     Profile.At(elapsed) per second. Drive arrivals with the vegeta-style
//     pacer: loop { wait, stop := profile.Pace(time.Since(start), hits);
//     if stop { break }; sleep(wait); start a session; hits++ }. Arrival k
//     is due when the integral of the rate reaches k, so no arrival is
//     skipped: if Load.MaxClients sessions are already live, the arrival is
//     counted in the dropped_starts metric and not started. Measure request
//     latency from the intended send time as well as the actual one.
//   - Closed model (Load.Model == Closed): keep Profile.Clients(elapsed,
//     Load.MaxClients) clients alive (poll it every ~100ms); each client
//     runs its flow, then starts over with a newly picked flow. When the
//     target falls, stop clients at the end of their current flow.
//
// Each new session picks a flow with Plan.PickFlow(u) (weights), u drawn
// from NewRand(Plan.Seed, 0); client i draws its think times from
// NewRand(Plan.Seed, 1+i), so runs are reproducible.
//
// Groups: a flow with GroupSize > 1 assigns its sessions, in arrival order,
// to groups of GroupSize (session n of the flow is member n % GroupSize of
// group n / GroupSize; member 0 is the leader). Members of a group share
// the room the group creates: a join with Room.Kind == RoomCreated waits
// (up to the step's timeout) until a member of the group — normally the
// leader, via a create_room/create step with Only: Leader — has created the
// room, then joins it. A Barrier step blocks until BarrierN members of the
// group reached that same step (by index in the flow), or fails after its
// timeout. Step.Only (Membership.Runs(memberIndex)) says which members run
// a step; the others skip it. If the run ends before a group fills up, the
// waiting members fail their wait with a timeout.
//
// Steps run in order; each is a Step with Kind and the fields of that kind
// (see the constants and FORMAT.md). Request steps carry their effective
// RequestPolicy (timeout, retries, retry interval: seed 003 defaults 5s, 3,
// 1s, overridden by the scenario's defaults and then by the step). A step
// that fails ends the session (its failure is counted on the step) unless it is a
// malformed or rate_probe step, whose findings are metrics.
//
// Metrics: the engine records each step under its Label (metrics.Collector
// Step(step.Label)), so the run report's series are named by label. Every
// step reports under its Label ("<label>.p99",
// "<label>.count", … see StepStats) plus the GlobalMetrics; KnownMetrics
// lists the exact set for a plan. Thresholds are checked after the run by
// Evaluate(plan.Thresholds, RunMetrics(run)) (or any lookup returning values in canonical
// units: seconds, fractions, counts, per second). A metric the run did not
// produce fails its threshold. The shard-merge command re-evaluates merged
// metrics the same way.
//
// Impairment (UDP only) and SourceAddrs (bind clients round-robin to these
// addresses), SocketBuffer (SO_RCVBUF/SO_SNDBUF) and HeaderProfile are
// per-socket settings for the client side.
package scenario
