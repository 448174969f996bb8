package simclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// Session is one simulated client playing one flow of the scenario once.
type Session interface {
	// Run plays the flow's steps in order. due is when the schedule wanted
	// the session to start (zero: now); the first request is measured from
	// it. It returns nil when the flow completed, a *StepError when a step
	// failed, the context's error when ctx ended first, or ErrStopped when
	// the stop signal ctx carries (WithStop) ended it between steps.
	Run(ctx context.Context, due time.Time) error
	// Close releases the session's socket and group place. It is idempotent
	// and may run concurrently with Run, which then returns promptly.
	Close() error
}

// Factory makes the session of client id running flow (a pointer into
// sh.Plan.Flows), bound to local address src (invalid: the OS chooses).
// udpclient binds its socket here (an error: no free port, bad source
// address — a *StepError with Reason ReasonSocket); tcpclient dials in its
// first step, so a refused connection fails that step with
// result.ReasonConnRefused. Factories must be called in arrival order:
// each call assigns the session its group place (Shared.Join). id is the
// client's index in the run (a closed-model client that starts its flow
// again may keep it): it picks the session's metrics recorder, think-time
// generator and impairment generator.
type Factory func(sh *Shared, id int, flow *scenario.Flow, src netip.Addr) (Session, error)

// Client is how a run plays one protocol: the client half of the
// protocol's descriptor (package protocols), which registers it here.
type Client struct {
	// Name is the protocol's (its scenario spec's) name.
	Name scenario.ProtocolName
	// Rules are every rule id a run of the protocol can report, its
	// codec's decode rules and its client's semantic ones, each with the
	// section of its document that states it where known: what the
	// protocol documents' tests hold the documents to.
	Rules []RuleInfo
	// Reach checks, before a run sends anything else, that a server
	// speaking the protocol answers at addr within timeout, given the
	// plan's options (Plan.Options; nil: the protocol's defaults). It
	// returns a nil error when it does, an error saying what it saw
	// otherwise (refused, silence, another protocol). settled, when not
	// nil, are the options as the reply settled them (udp-lobby's
	// header_profile auto: the header the server answered in), which the
	// run takes.
	Reach func(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) (settled scenario.Options, err error)
	// Watch, when set, is the probe a run's watchdog (package liveness)
	// makes a few times a second on its own socket, in place of Reach: a
	// request that needs an answer, for a protocol whose Reach does not
	// (tcp-lobby's proves only that a connection was accepted, which a
	// hung server's kernel still does). Nil: the watchdog uses Reach.
	Watch func(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) error
	// Transport is "udp" or "tcp" (the scenario spec's; Register's to
	// fill in).
	Transport string
	// Identify tells its servers from other protocols' (nil: it cannot
	// be told), for other protocols' reachability checks (Identities).
	Identify *Identify
	// Game is where its players reach a game and enter a room, for the
	// lobby measures (nil: the protocol has none).
	Game *Game
	// Precise says that its sessions poll their socket for PollWindow
	// after each send under `run --precise` (PreciseNote).
	Precise bool
	// Occupancy counts what a server still holds of earlier load, for the
	// capacity search's drain check between steps (nil: the protocol
	// offers no such count, and the drain is not checked).
	Occupancy *Occupancy
	// RoomCheck, when set, is the recovery drill's look at the target's
	// rooms after its faults: which rooms it lists, and which of them are
	// dead (package engine sets the check's time).
	RoomCheck func(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) *result.RoomCheck
	// EmbeddedParts are the reference server parts a run with no target
	// starts (refserver part names, the descriptor's); the run aims at the
	// first.
	EmbeddedParts []string
	// New makes the protocol's sessions.
	New Factory
}

// Occupancy is how a protocol's server is asked what it still holds: the
// rooms a lobby lists, the players a Leviathan server reports.
type Occupancy struct {
	// Counted is what Count counts, as a reading says it ("rooms
	// listed", "players reported").
	Counted string
	// Count asks the server at addr on a connection of its own, given
	// the plan's options, each request waiting up to timeout. An error
	// wrapping ErrNoCount means the server answers but offers no count.
	Count func(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) (int, error)
}

// ErrNoCount is wrapped by an Occupancy.Count error meaning the server
// answers but offers no count to wait for (a Leviathan server that never
// answers Serverstatus): there is no drain to check.
var ErrNoCount = errors.New("no count offered")

var (
	regMu  sync.RWMutex
	protos = map[string]*Client{}
)

// Register makes p known to Lookup and Describe. It panics if p.Name is
// registered twice or p misses a part; protocols.Register calls it.
func Register(p Client) {
	if p.Reach == nil || p.New == nil || len(p.EmbeddedParts) == 0 {
		panic("simclient: protocol " + string(p.Name) + " needs Reach, New and EmbeddedParts")
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := protos[string(p.Name)]; dup {
		panic("simclient: protocol " + string(p.Name) + " registered twice")
	}
	protos[string(p.Name)] = &p
}

// Describe returns the descriptor registered for protocol.
func Describe(protocol string) (*Client, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	p, ok := protos[protocol]
	return p, ok
}

// Lookup returns the session factory registered for protocol.
func Lookup(protocol string) (Factory, bool) {
	if p, ok := Describe(protocol); ok {
		return p.New, true
	}
	return nil, false
}

// Protocols returns the registered protocol names in documentation order.
func Protocols() []string { return scenario.ProtocolNames() }

// DefaultSocketBuffer is SO_RCVBUF/SO_SNDBUF of client sockets when the
// plan sets none: large, because the default ~208 KiB loses datagrams at
// thousands of clients.
const DefaultSocketBuffer = 4 << 20

// Options tune a run's shared machinery. The zero value is sensible.
type Options struct {
	// Shard is this process's shard index of the run (0 alone): a
	// scripted step's ${shard}.
	Shard int
	// Recorders is how many metrics recorders clients are spread over
	// (client id % Recorders); 0 means GOMAXPROCS: each Recorder holds
	// three 160 KiB latency histograms per step and message type, and a
	// Recorder shared by two cores at full speed costs ~50 ns more per
	// sample (metrics' BenchmarkRecordParallelShared), less than the
	// memory more Recorders would take from a many-client run.
	Recorders int
	// SocketBuffer overrides plan.SocketBuffer; 0 uses the plan's, or
	// DefaultSocketBuffer when the plan sets none; negative leaves the OS
	// default.
	SocketBuffer int
	// Tick is the sweeper's scan period, the resolution of timeouts and of
	// impairment delays; 0 means 5ms, or 1ms when the plan delays datagrams.
	Tick time.Duration
	// Precise (`run --precise`) makes udp-lobby clients poll their socket
	// for PreciseWindow after each send before parking (PreciseNote).
	Precise bool
	// Suspend lets sessions give up their goroutine during long pauses
	// (Base.Pause): Run may then return ErrSuspended, and the caller must
	// call Resume (Resumer) at SuspendedUntil. The closed model sets it.
	Suspend bool
	// SuspendWaits (with Suspend) lets sessions give up their goroutine
	// while they wait for a reply or their group's room (Base.Await,
	// Base.GroupRoom), as in a pause, to be resumed at SuspendedUntil or
	// at once when what SuspendedOn names is ready. The closed model sets
	// it from SuspendWaitsFrom clients per process.
	SuspendWaits bool
	// AllowRedirect is where, besides the target's host, the server may
	// send clients (`--allow-redirect`; Shared.Redirects).
	AllowRedirect target.Allow
}

// PreciseWindow is how long a client of a Precise protocol (udp-lobby's)
// in precise mode polls its
// socket without parking after each send, before it waits on the
// netpoller: a reply that comes within it is read without the netpoller's
// wake-up delay, at the cost of up to this much busy CPU per request.
const PreciseWindow = 50 * time.Microsecond

// PreciseNote is what `run --precise` does to a run of protocol (against
// the embedded server when embedded), said once in its output: only the
// clients of protocols whose descriptor says Precise poll, and polling
// beside an embedded server costs it.
func PreciseNote(protocol scenario.ProtocolName, embedded bool) string {
	if p, ok := Describe(string(protocol)); ok && p.Precise {
		note := fmt.Sprintf("--precise: after each send a %s client polls its socket without parking for up to %v before waiting on the netpoller (a lower latency floor, more CPU per request)", protocol, PreciseWindow)
		if embedded {
			// Measured with make bench-truth, whose stub shares the
			// process as the embedded server does: p50 1.3x the default
			// mode's at 200/s on 2 cores, against 0.75x with the server
			// in another process (docs/performance.md, "The low-load floor").
			note += "; the embedded server shares this process, and the polls take the cores it needs to answer (measured slower than without --precise on 2 cores): give --target a server in another process"
		}
		return note
	}
	var polling []string
	for _, name := range Protocols() {
		if p, ok := Describe(name); ok && p.Precise {
			polling = append(polling, name)
		}
	}
	return fmt.Sprintf("--precise affects %s clients only: this %s run is measured as without it", strings.Join(polling, ", "), protocol)
}

// Shared is the per-run state every session of a run shares: the plan, the
// resolved target, the metrics recorders and keys, the group registry, the
// run-wide room table, and the timeout sweeper. Make it with NewShared and
// Close it after the last session. All methods are safe for concurrent use.
type Shared struct {
	Plan      *scenario.Plan
	Target    netip.AddrPort // the server of the plan's protocol
	Collector *metrics.Collector
	// SocketBuffer is the SO_RCVBUF/SO_SNDBUF to set on client sockets, 0
	// for the OS default.
	SocketBuffer int
	// PollWindow is how long a client of a Precise protocol polls its
	// socket without parking after each send (Options.Precise:
	// PreciseWindow; 0: never).
	PollWindow time.Duration
	// Suspend is Options.Suspend: sessions may suspend (Base.Pause).
	Suspend bool
	// SuspendWaits is Options.SuspendWaits: sessions may also suspend
	// while they wait (Base.Await, Base.GroupRoom).
	SuspendWaits bool
	Sweeper      *Sweeper
	Rooms        *RoomTable
	// Flows are the run's virtual flows (flows_mode: virtual), which
	// clients of a protocol that takes them use instead of sockets; nil:
	// every client has its own socket.
	Flows     *vflow.Hub
	flowsMode scenario.FlowsMode
	// Redirects decides whether an address the server names (a tcp-lobby
	// GAME_START's) is one lobbybench may go to: the target's host, or
	// one Options.AllowRedirect allows.
	Redirects *target.Policy

	game     *Game // the protocol's (Client.Game)
	recs     []*metrics.Recorder
	stepKeys [][]metrics.Key // [flow][step]
	flowIdx  map[*scenario.Flow]int

	msgMu   sync.RWMutex
	msgKeys map[string]metrics.Key

	groups []flowGroups

	values sync.Map
	// others: everybody's outcomes for a rate probe to judge its effect
	// by (Observe); nil in a run with no rate probe, which has no use
	// for it.
	others *othersTracker

	stray atomic.Int64 // StrayDatagram
	// cancels are the sets whose contexts' ends cancel the clients'
	// sockets (Cancels).
	cancels cancelSets
	// stamped and plain count the client sockets with kernel receive
	// stamps and without (ReceiveStamps); stampMissed the replies timed
	// in user space on a stamped one (ReplyAt).
	stamped, plain, stampMissed atomic.Int64
	// shard is Options.Shard; scripts counts the sessions that played a
	// scripted step (a script's ${shard}, ${session}).
	shard   int
	scripts atomic.Uint64
	closed  atomic.Bool
}

// StrayDatagram counts a datagram a client received that no server of the
// run can have sent: from a port the target never used, and not decodable
// as a reply to a request the client made. Other programs on the machine
// send such datagrams (to a port they once used, or at random); they are
// the harness's environment, not a violation of the target.
func (sh *Shared) StrayDatagram() { sh.stray.Add(1) }

// StrayDatagrams returns how many datagrams StrayDatagram counted (the
// harness section's stray_datagrams).
func (sh *Shared) StrayDatagrams() int64 { return sh.stray.Load() }

// ReceiveStamps tells the run how the replies a client socket receives
// are timed, once per socket: by the kernel's receive stamp (kernel) or
// when the client saw them.
func (sh *Shared) ReceiveStamps(kernel bool) {
	if kernel {
		sh.stamped.Add(1)
	} else {
		sh.plain.Add(1)
	}
}

// ReplyAt returns when a reply reached this host: the kernel receive
// stamp ns that came with it (rxbuf.At; 0: none), or now. A reply timed
// now on a socket with stamps (stamped: none came with it, or the
// client's impairment held it) is counted: the run's latencies then end
// mixed.
func (sh *Shared) ReplyAt(stamped bool, ns int64) time.Time {
	at, kernel := rxbuf.At(ns)
	if stamped && !kernel {
		sh.stampMissed.Add(1)
	}
	return at
}

// LatencyEnd says where the run's latencies end (result.LatencyEndOf).
func (sh *Shared) LatencyEnd() string {
	return result.LatencyEndOf(sh.stamped.Load(), sh.plain.Load(), sh.stampMissed.Load())
}

// nextScriptSession numbers a session that plays scripted steps, from 1
// in this process: its ${session}.
func (sh *Shared) nextScriptSession() uint64 { return sh.scripts.Add(1) }

type flowGroups struct {
	next atomic.Int64 // sessions of the flow so far
	mu   sync.Mutex
	live map[int64]*Group
}

// NewShared prepares the shared state of a run of plan against addr (the
// server of the plan's protocol), recording
// into c: it registers a step key for every step label and starts the
// sweeper.
func NewShared(plan *scenario.Plan, addr netip.AddrPort, c *metrics.Collector, opt Options) (*Shared, error) {
	if plan == nil || c == nil {
		return nil, errors.New("simclient: NewShared needs a plan and a collector")
	}
	if len(plan.Flows) == 0 {
		return nil, errors.New("simclient: the plan has no flows")
	}
	sh := &Shared{
		Plan:      plan,
		Target:    addr,
		Collector: c,
		Rooms:     NewRoomTable(),
		flowIdx:   map[*scenario.Flow]int{},
		msgKeys:   map[string]metrics.Key{},
		groups:    make([]flowGroups, len(plan.Flows)),
	}
	if probes(plan) {
		sh.others = newOthers(c.Start())
	}
	var hosts []netip.Addr
	if plan.Target != "" {
		// Resolved a moment ago to addr; a failed second lookup leaves
		// addr alone as the target's host.
		hosts, _ = target.HostAddrs(context.Background(), plan.Target)
	}
	sh.Redirects = target.NewPolicy(addr, hosts, opt.AllowRedirect)
	switch {
	case opt.SocketBuffer > 0:
		sh.SocketBuffer = opt.SocketBuffer
	case opt.SocketBuffer < 0:
	case plan.SocketBuffer > 0:
		sh.SocketBuffer = int(min(plan.SocketBuffer, 1<<30))
	default:
		sh.SocketBuffer = DefaultSocketBuffer
	}
	if opt.Precise {
		sh.PollWindow = PreciseWindow
	}
	if p, ok := Describe(string(plan.Protocol)); ok {
		sh.game = p.Game
	}
	sh.Suspend = opt.Suspend
	sh.SuspendWaits = opt.Suspend && opt.SuspendWaits
	sh.shard = opt.Shard
	n := opt.Recorders
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	sh.recs = make([]*metrics.Recorder, n)
	for i := range sh.recs {
		sh.recs[i] = c.NewRecorder()
	}
	sh.stepKeys = make([][]metrics.Key, len(plan.Flows))
	for i := range plan.Flows {
		f := &plan.Flows[i]
		sh.flowIdx[f] = i
		sh.groups[i].live = map[int64]*Group{}
		sh.stepKeys[i] = make([]metrics.Key, len(f.Steps))
		for j, st := range f.Steps {
			sh.stepKeys[i][j] = c.Step(st.Label)
		}
	}
	tick := opt.Tick
	if tick <= 0 {
		tick = 5 * time.Millisecond
		if plan.Impairment.In.Delay > 0 || plan.Impairment.Out.Delay > 0 ||
			plan.Impairment.In.Jitter > 0 || plan.Impairment.Out.Jitter > 0 {
			tick = time.Millisecond
		}
	}
	if err := sh.openFlows(plan); err != nil {
		return nil, err
	}
	sh.Sweeper = NewSweeper(tick)
	return sh, nil
}

// Close stops the sweeper and closes the virtual flows. Sessions still
// running lose their timeouts and flows, so close them first.
func (sh *Shared) Close() error {
	if sh.closed.CompareAndSwap(false, true) {
		sh.Sweeper.Stop()
		sh.closeCancels()
		return sh.closeFlows()
	}
	return nil
}

// Recorder returns the metrics recorder of client id.
func (sh *Shared) Recorder(id int) *metrics.Recorder {
	if id < 0 {
		id = -id
	}
	return sh.recs[id%len(sh.recs)]
}

// FlowIndex returns the index of flow in Plan.Flows, or -1 when flow does
// not point into it.
func (sh *Shared) FlowIndex(flow *scenario.Flow) int {
	if i, ok := sh.flowIdx[flow]; ok {
		return i
	}
	return -1
}

// StepKey returns the metrics key of step s of flow f (its Label).
func (sh *Shared) StepKey(f, s int) metrics.Key { return sh.stepKeys[f][s] }

// MessageKey returns the metrics key of the message type called name,
// registering it on first use. Sessions look their keys up once, not per
// request.
func (sh *Shared) MessageKey(name string) metrics.Key {
	sh.msgMu.RLock()
	k, ok := sh.msgKeys[name]
	sh.msgMu.RUnlock()
	if ok {
		return k
	}
	sh.msgMu.Lock()
	defer sh.msgMu.Unlock()
	if k, ok := sh.msgKeys[name]; ok {
		return k
	}
	k = sh.Collector.Message(name)
	sh.msgKeys[name] = k
	return k
}

// ThinkRand returns client id's think-time generator:
// scenario.NewRand(Plan.Seed, 1+id), as NewRand specifies.
func (sh *Shared) ThinkRand(id int) *rand.Rand {
	src := new(rand.PCG)
	sh.ReseedThink(src, id)
	return rand.New(src)
}

// ReseedThink puts src at the start of client id's think-time stream:
// rand.New(src) is then the generator ThinkRand(id) returns. A client that
// plays another session under a new id re-seeds its source in place
// instead of allocating a generator.
func (sh *Shared) ReseedThink(src *rand.PCG, id int) {
	scenario.Reseed(src, sh.Plan.Seed, 1+uint64(id))
}

// ImpairRand returns client id's impairment generator, seeded with
// Plan.Impairment.Seed on a stream apart from every think-time stream, so
// the impairment of a run is reproducible and independent of think times.
func (sh *Shared) ImpairRand(id int) *rand.Rand {
	return scenario.NewRand(sh.Plan.Impairment.Seed, 1<<40+uint64(id))
}

// Member is a session's place in its flow's groups.
type Member struct {
	Group *Group
	Index int // 0 = leader
}

// Leader reports whether the member is its group's leader.
func (m Member) Leader() bool { return m.Index == 0 }

// Join gives the next session of flow f its group place: the n-th call for
// a flow makes member n % GroupSize of group n / GroupSize. Call Leave when
// the session ends.
func (sh *Shared) Join(f int) Member {
	fl := &sh.Plan.Flows[f]
	size := max(fl.GroupSize, 1)
	n := sh.groups[f].next.Add(1) - 1
	gid := n / int64(size)
	if size == 1 {
		// A group of one: no other member will look it up, so it is
		// kept out of the flow's registry and its lock (a closed-model
		// poller joins one per flow played).
		g := newGroup(f, gid, size)
		g.joined = 1
		return Member{Group: g}
	}
	fg := &sh.groups[f]
	fg.mu.Lock()
	g := fg.live[gid]
	if g == nil {
		g = newGroup(f, gid, size)
		fg.live[gid] = g
	}
	g.joined++
	fg.mu.Unlock()
	return Member{Group: g, Index: int(n % int64(size))}
}

// Rejoin is Join for a client's next session, given m, the place of its
// previous session (which has left it): a group of one, which no other
// session can hold, is recycled for the new place when it is still as Join
// made it (no room published or failed, no barrier, no hash), instead of
// being allocated. Otherwise it is Join.
func (sh *Shared) Rejoin(f int, m Member) Member {
	g := m.Group
	if g == nil || g.Size != 1 || sh.Plan.Flows[f].GroupSize > 1 || g.barriers != nil || g.hashes != nil {
		return sh.Join(f)
	}
	select {
	case <-g.roomDone:
		return sh.Join(f)
	default:
	}
	n := sh.groups[f].next.Add(1) - 1
	*g = Group{Flow: f, ID: n, Size: 1, joined: 1, roomDone: g.roomDone}
	return Member{Group: g}
}

// Leave releases m's place; the group is forgotten when every member of a
// full group has left. Calling it twice for a member is a bug.
func (sh *Shared) Leave(m Member) {
	if m.Group == nil {
		return
	}
	g := m.Group
	if g.Size <= 1 {
		return // never registered (Join)
	}
	fg := &sh.groups[g.Flow]
	fg.mu.Lock()
	g.left++
	if g.left >= g.Size {
		delete(fg.live, g.ID)
	}
	fg.mu.Unlock()
}

// StepError is why a session ended early: step Index (Kind, Label) of its
// flow failed for Reason.
type StepError struct {
	Index  int
	Kind   scenario.StepKind
	Label  string
	Reason string // reports.Reason* or another reason name of this package
	Err    error
}

// Error returns "step N (label): reason: err".
func (e *StepError) Error() string {
	s := fmt.Sprintf("step %d (%s): %s", e.Index+1, e.Label, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// ReasonOf returns the Reason of a *StepError in err's chain, "" otherwise.
func ReasonOf(err error) string {
	if se, ok := errors.AsType[*StepError](err); ok {
		return se.Reason
	}
	return ""
}

// Failure reasons sessions use besides the reports.Reason* ones.
const (
	ReasonNoRoom   = "no_room"   // join random-waiting: no Waiting room with space listed
	ReasonRoomFull = "room_full" // create refused (JOIN_FAILED at the instance limit, TCP RoomID 0)
	ReasonRefused  = "refused"   // the server answered with an explicit refusal (TCP ERROR_MSG, CONNECT_ACK failure)
	ReasonClosed   = "closed"    // the server closed the connection / instance sent SERVER_DISCONNECT
	// ReasonCreatorFailed: a join {room: created} whose group leader failed
	// (or ended) before creating the room; the member sent no join. The
	// leader's own failure is counted once, under its create step with its
	// own reason (join_failed, timeout, …): this reason marks the members'
	// failures as its consequence, not a separate fault of the server.
	ReasonCreatorFailed = result.ReasonCreatorFailed
	ReasonSocket        = "socket"    // local socket error (send failed, buffer full …)
	ReasonCancelled     = "cancelled" // the run ended during the step
)

// Value returns the run-wide value stored under key, creating it with mk
// on first use. Protocol packages keep their per-run state here (e.g. the
// UDP header profile guessed from the first reply).
func (sh *Shared) Value(key any, mk func() any) any {
	if v, ok := sh.values.Load(key); ok {
		return v
	}
	v, _ := sh.values.LoadOrStore(key, mk())
	return v
}

// Creates reports whether group member idx runs a room-creating step
// (scenario.Step.CreatesRoom: create_room, a script that sends a create)
// of flow: only such a member's failure or early end tells the group that
// its room will not exist (Group.FailRoom).
func Creates(flow *scenario.Flow, idx int) bool {
	for i := range flow.Steps {
		if st := &flow.Steps[i]; st.CreatesRoom() && st.Only.Runs(idx) {
			return true
		}
	}
	return false
}

// SeriesIntended returns when request k (from 0) of a ping/echo series is
// due. With interval > 0 the series is an open schedule: first +
// k×interval, so a slow reply delays the next request and its lateness is
// measured (coordinated-omission correction, as wrk2). With interval 0 the
// series is a closed loop: request k is due when request k-1 completed
// (prevDone), so the series' own back-to-back pacing is not counted as
// latency; request 0 is due at first.
func SeriesIntended(first, prevDone time.Time, k int, interval time.Duration) time.Time {
	if k == 0 {
		return first
	}
	if interval <= 0 {
		return prevDone
	}
	return first.Add(time.Duration(k) * interval)
}

// Budget is the longest a request under pol can take: every send's timeout
// and every pause between them. A join with room: created waits this long
// for the group's room to exist.
func Budget(pol scenario.RequestPolicy) time.Duration {
	n := time.Duration(max(pol.Retries, 0))
	return pol.Timeout*(n+1) + pol.RetryInterval*n
}
