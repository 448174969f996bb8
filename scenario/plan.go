package scenario

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/script"
)

// Plan is a validated scenario: everything the engine needs, with defaults
// filled in and units resolved. A Plan returned by Parse or Load is valid;
// the engine never has to re-check it.
type Plan struct {
	File        string // path the scenario came from, for messages
	Name        string // defaults to the file's base name without extension
	Description string

	// Target is "host:port"; empty means start the embedded reference server
	// on free loopback ports.
	Target   string
	Protocol ProtocolName
	// Options are the protocol's own settings, parsed from its keys
	// (udp-lobby: header_profile, instance_ports); nil for a protocol
	// without keys. Only the protocol's packages read inside them.
	Options Options
	// OnViolation is what a session does with a reply that breaks a
	// protocol rule but still carries the fields its flow needs:
	// ViolationContinue (the default) or ViolationFailStep.
	OnViolation ViolationAction

	Seed       int64 // seeds every random choice (flow pick, think times, impairment)
	Load       LoadShape
	Defaults   RequestPolicy // per-request defaults; steps hold their effective policy
	Flows      []Flow
	Impairment Impairment // udp-lobby and leviathan only; zero = none

	SourceAddrs  []netip.Addr // local addresses to bind clients to, round-robin; empty = OS choice
	SocketBuffer int64        // SO_RCVBUF/SO_SNDBUF bytes; 0 = OS default
	// FlowsMode is how clients meet the network (flows_mode, run
	// --flows); "" = FlowsSockets.
	FlowsMode FlowsMode

	Thresholds []Threshold
	// NoDefaultGate turns the run's default error gate off
	// (default_error_gate: false, run --no-default-gate): Conditions then
	// holds the scenario's thresholds alone.
	NoDefaultGate bool

	// Embedded configures the in-process reference server used when Target
	// is empty; it is rejected when a target is given.
	Embedded EmbeddedServer

	// TargetCmd is the command that starts the server under test
	// (target_cmd, as --target-cmd): lobbybench owns it, watches it and
	// stops it at the end. Target says where it answers. Empty = the
	// server is not lobbybench's.
	TargetCmd string
	// Faults are the recovery drills run on the owned server, in time
	// order; they need TargetCmd.
	Faults []owned.Fault
}

// ViolationAction is the scenario's on_violation: what a session does with
// a reply that breaks a rule but can still be read.
type ViolationAction string

const (
	// ViolationContinue counts the violation (rule id, hex sample) and goes
	// on with the fields read from the reply, as a load test should.
	ViolationContinue ViolationAction = "continue"
	// ViolationFailStep fails the request and its step with reason
	// "violation", ending the session (the strict behaviour).
	ViolationFailStep ViolationAction = "fail_step"
)

// PortRange is an inclusive range of ports; the zero value means "not given".
type PortRange = netrange.PortRange

// LoadModel is how clients are started.
type LoadModel string

// The two load models.
const (
	// Open starts new client sessions at a target arrival rate (per second),
	// whatever the server's speed: Ramp.Pace schedules the arrivals.
	Open LoadModel = "open"
	// Closed keeps a target number of concurrent clients alive, each running
	// its flow again as soon as it ends: Ramp.Clients gives the target.
	Closed LoadModel = "closed"
)

// LoadShape is the load shape. Stages ramp linearly from the previous stage's
// target (Start for the first) to their own Target over For. After the last
// stage the last target holds until Duration; stages past Duration are cut.
type LoadShape struct {
	Model      LoadModel
	Start      float64 // target at elapsed 0: sessions/s (open) or clients (closed)
	Stages     []Stage
	Duration   time.Duration // > 0
	MaxClients int           // cap on concurrent sessions; open-model arrivals over it count as dropped_starts
	Arrivals   Arrivals      // open model: how arrivals are spaced (ArrivalsUniform or ArrivalsPoisson); "" for closed
	Curve      *Curve        // the CSV file Start and Stages were read from (load.curve), or nil
}

// Stage ramps the target to Target over For. Target is sessions per second
// (open model) or concurrent clients (closed model).
type Stage struct {
	Target float64
	For    time.Duration
}

// Ramp returns the pure schedule of this load.
func (l LoadShape) Ramp() Ramp { return NewRamp(l.Start, l.Stages, l.Duration) }

// RequestPolicy is how one request is sent: wait Timeout for its reply, and
// on a timeout re-send it up to Retries more times, RetryInterval apart
// (udp-lobby.md §11: 5 s, 3 retries, 1 s apart). Retries apply to UDP requests; TCP
// and Leviathan steps use the timeout only (their transports resend).
type RequestPolicy struct {
	Timeout       time.Duration
	Retries       int
	RetryInterval time.Duration
}

// DefaultPolicy is the request policy when a scenario sets none (udp-lobby.md §11).
var DefaultPolicy = RequestPolicy{Timeout: 5 * time.Second, Retries: 3, RetryInterval: time.Second}

// DefaultWaitTimeout is the timeout of wait_* and barrier steps unless set.
const DefaultWaitTimeout = 30 * time.Second

// Flow is one kind of client session. Each arriving client picks a flow with
// probability Weight/sum(weights) and runs its Steps in order.
type Flow struct {
	Name   string
	Weight float64 // > 0
	// GroupSize groups the flow's clients, in arrival order, into groups of
	// this many clients that share a room: member 0 is the group's leader.
	// 1 (the default) means every client is alone.
	GroupSize int
	// NewSocket makes every session of the flow open its own socket. In
	// the closed model a client otherwise keeps its socket from one flow
	// to the next when it can (simclient.Reusable), as a player's client
	// does; NewSocket is for flows that stand for new players arriving.
	// The open model always opens one per arrival.
	NewSocket bool
	Steps     []Step
	Line      int
}

// Membership restricts a step to some members of a group.
type Membership string

// Who runs a step within a group.
const (
	All     Membership = "all"     // every client (the default)
	Leader  Membership = "leader"  // member 0 of the group only
	Members Membership = "members" // every member but the leader
)

// Runs reports whether group member index idx (0 = leader) runs a step with
// this membership.
func (m Membership) Runs(idx int) bool {
	switch m {
	case Leader:
		return idx == 0
	case Members:
		return idx != 0
	}
	return true
}

// Step is one action of a flow. Only the fields of its Kind are set.
type Step struct {
	Kind  StepKind
	Label string // metric name prefix; defaults to Kind
	Only  Membership
	Line  int
	// Spec is the kind's spec, in its protocol (or a shared kind's).
	Spec *StepSpec

	Policy RequestPolicy // request steps: effective policy; wait/barrier steps: Timeout only

	// Params are a protocol's own kind's parameters, as its parser read
	// them (StepSpec.Parse); only the protocol's packages read inside them.
	Params any

	Think     ThinkTime     // think
	BarrierN  int           // barrier: clients of the group that must arrive
	Malformed MalformedSpec // malformed
	Probe     RateProbeSpec // rate_probe
}

// CreatesRoom reports whether the step creates the room its flow's group
// shares: its kind does (StepSpec.CreatesRoom: create_room), or it is a
// script that sends a message that does (script.Message.CreatesRoom), in
// any branch or round of it.
func (s *Step) CreatesRoom() bool {
	if s.Spec != nil && s.Spec.CreatesRoom {
		return true
	}
	b, ok := s.Params.(*script.Block)
	return ok && b.CreatesRoom()
}

// Distribution is the shape of a think time.
type Distribution string

// Think-time distributions.
const (
	Fixed       Distribution = "fixed"
	Uniform     Distribution = "uniform"
	Exponential Distribution = "exponential"
	Normal      Distribution = "normal"
)

// ThinkTime is a random pause. Fixed uses A; Uniform draws from [A, B];
// Exponential has mean A; Normal has mean A and standard deviation B.
type ThinkTime struct {
	Dist Distribution
	A, B time.Duration
}

// maxThink caps any drawn think time so a long tail cannot stall a run.
const maxThink = time.Hour

// Sample draws one pause using r. Results are clamped to [0, 1h].
func (t ThinkTime) Sample(r *rand.Rand) time.Duration {
	var d float64
	switch t.Dist {
	case Fixed:
		return t.A
	case Uniform:
		d = float64(t.A) + r.Float64()*float64(t.B-t.A)
	case Exponential:
		d = r.ExpFloat64() * float64(t.A)
	case Normal:
		d = float64(t.A) + r.NormFloat64()*float64(t.B)
	default:
		return 0
	}
	if d < 0 || math.IsNaN(d) {
		return 0
	}
	if d > float64(maxThink) {
		return maxThink
	}
	return time.Duration(d)
}

// MalformedKind is a way to break a packet.
type MalformedKind string

// Malformed packet kinds.
const (
	BadCRC         MalformedKind = "bad_crc"         // udp-lobby: CRC flipped
	Truncated      MalformedKind = "truncated"       // cut short of its header
	WrongLength    MalformedKind = "wrong_length"    // payloadSize (or TCP length) disagrees with the datagram/frame
	UnknownType    MalformedKind = "unknown_type"    // message type nobody defines
	WrongDirection MalformedKind = "wrong_direction" // udp-lobby: packetType 0x02 (server→client) sent to the server
	RandomBytes    MalformedKind = "random"          // random bytes of random length
)

// MalformedSpec is what a malformed step sends: Count packets, Interval
// apart, of which a Share (0<Share≤1) are malformed — kinds chosen
// uniformly from Kinds — and the rest valid list requests. To is "lobby" or
// "instance" (udp-lobby; the room from an earlier join). UDP servers must
// stay silent to every malformed packet for Silence after it (a reply is a
// violation) while answering the valid ones; a TCP server must answer
// ERROR_MSG and close (tcp-lobby.md §7).
type MalformedSpec struct {
	Count    int           // packets sent
	Interval time.Duration // gap between sends
	Kinds    []MalformedKind
	Share    float64
	To       string
	Silence  time.Duration
}

// RateProbeSpec ramps one client's request rate linearly From→To (per
// second) over Over, sending Request steps, and records the first rate at
// which the loss (no reply within the timeout, or an explicit refusal)
// over a one-second window exceeds Loss: metric "<label>.limit".
type RateProbeSpec struct {
	From, To float64
	Over     time.Duration
	Request  StepKind
	// Script, when set, is the request written as a script (send:,
	// expect:) in place of Request: its message is sent, and a reply is
	// an answer when its expect accepts it, a refusal otherwise.
	Script *script.Pipelined
	Loss   float64
}

// MaxProbeRate is the highest rate a rate_probe ramps to.
const MaxProbeRate = 1_000_000

// MaxProbeRequests bounds the requests one rate_probe sends (Total), so
// that a scenario from elsewhere cannot keep a client sending for hours
// (to: 1000000/s, over: 24h would be 43 billion): five million is the
// steepest probe worth running, a ramp from 0 to MaxProbeRate over 10 s.
// A limit a probe has not met by then is not one a probe finds; a
// longer look at a rate is a load stage's.
const MaxProbeRequests = MaxProbeRate / 2 * 10

// Total is the number of requests the probe sends: the integral of its
// ramp over Over.
func (r RateProbeSpec) Total() int {
	return int(r.total())
}

func (r RateProbeSpec) total() float64 { return (r.From + r.To) / 2 * r.Over.Seconds() }

// NewRand returns the deterministic generator for one stream of a run
// seeded with seed: the engine uses stream 0 for flow choice and stream
// 1+clientIndex for each client's think times, so a run is reproducible
// whatever the goroutine scheduling.
func NewRand(seed int64, stream uint64) *rand.Rand {
	src := new(rand.PCG)
	Reseed(src, seed, stream)
	return rand.New(src)
}

// Reseed puts src, a NewRand source, back at the start of stream under
// seed: what NewRand(seed, stream) would start from, without allocating a
// generator (a closed-model client re-seeds its think times in place for
// each session it plays).
func Reseed(src *rand.PCG, seed int64, stream uint64) { src.Seed(uint64(seed), stream) }

// PickFlow returns the index of the flow a new session runs, choosing
// with probability weight/sum(weights) from u, a uniform number in [0,1).
func (p *Plan) PickFlow(u float64) int {
	total := 0.0
	for _, f := range p.Flows {
		total += f.Weight
	}
	x := u * total
	for i, f := range p.Flows {
		if x < f.Weight {
			return i
		}
		x -= f.Weight
	}
	return len(p.Flows) - 1
}
