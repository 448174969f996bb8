package conformance

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/result"
)

// wireLog is one case's (or fixture's) wire log, Autobahn's: every
// datagram, frame or stream chunk of the exchange, bounded by
// result.MaxCaseWireEntries and result.MaxCaseWireBytes (a flood or a
// malformed corpus keeps its first entries and counts the rest).
type wireLog struct {
	mu      sync.Mutex
	start   time.Time
	entries []result.WireEntry
	bytes   int
	elided  int
}

func (w *wireLog) add(dir, local, peer string, b []byte, note string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.entries) >= result.MaxCaseWireEntries || w.bytes+len(b) > result.MaxCaseWireBytes {
		w.elided++
		return
	}
	w.bytes += len(b)
	w.entries = append(w.entries, result.WireEntry{Dir: dir, OffsetNS: time.Since(w.start), Local: local, Peer: peer,
		Hex: hex.EncodeToString(b), Note: note})
}

func (w *wireLog) snapshot() ([]result.WireEntry, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]result.WireEntry(nil), w.entries...), w.elided
}

// T is the state of one running case, like testing.T: the environment, the
// wire log and the notes that end up in the result. Its methods are safe
// for concurrent use by the goroutines of one case.
type T struct {
	// Ctx is cancelled when the run is interrupted.
	Ctx  context.Context
	Env  *Env
	Case *Case

	wire  *wireLog
	mu    sync.Mutex
	notes []string
	// fixtureLogs are the wire logs of the fixtures the case used, appended
	// to its own at the end.
	fixtureLogs []*wireLog
	// stalled is the largest stall of the harness a wait of the case
	// measured; cannotTell the first wait it made inconclusive (Wait).
	stalled    time.Duration
	cannotTell *StallError
}

func NewT(ctx context.Context, env *Env, c *Case) *T {
	return &T{Ctx: ctx, Env: env, Case: c, wire: &wireLog{start: time.Now()}}
}

// LogSent records bytes sent from local to peer in the case's wire log.
func (t *T) LogSent(local, peer string, b []byte, note string) {
	t.wire.add(result.DirSent, local, peer, b, note)
}

// LogRecv records bytes received by local from peer.
func (t *T) LogRecv(local, peer string, b []byte, note string) {
	t.wire.add(result.DirRecv, local, peer, b, note)
}

// Notef adds a line to the case's result: an observation (shown for info
// and warning verdicts, kept in JSON for all).
func (t *T) Notef(format string, a ...any) {
	t.mu.Lock()
	t.notes = append(t.notes, fmt.Sprintf(format, a...))
	t.mu.Unlock()
}

// Skip returns a *SkipError with the formatted reason; a case returns it.
func (t *T) Skip(format string, a ...any) error { return Skipf(format, a...) }

// TargetDown tells the runner the target stopped answering (a crash or a
// hang the case found by its own check): after the case, the runner
// records the outage (its kind from the reachability check, reason as
// its detail), fails this case with it and marks every later case not
// run.
func (t *T) TargetDown(reason string) {
	t.Env.mu.Lock()
	if t.Env.down == "" {
		t.Env.down = t.Case.ID + ": " + reason
	}
	t.Env.mu.Unlock()
}

// Sleep waits d or until the run is interrupted.
func (t *T) Sleep(d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-t.Ctx.Done():
		return t.Ctx.Err()
	}
}

// Fixture returns the value of the shared setup named key, running f once
// per run (the first caller runs it; concurrent callers wait). Fixtures let
// several cases look at one expensive setup (a full room, a started game)
// without each building its own. The fixture's wire log is appended to the
// log of every case that uses it. An error from f is turned into a skip for
// the callers: the case that owns the failed behaviour reports it.
func (t *T) Fixture(key string, f func(ft *T) (any, error)) (any, error) {
	env := t.Env
	env.mu.Lock()
	fx := env.fixtures[key]
	if fx == nil {
		fx = &fixture{}
		env.fixtures[key] = fx
	}
	env.mu.Unlock()
	fx.once.Do(func() {
		ft := &T{Ctx: t.Ctx, Env: env, Case: &Case{ID: "fixture/" + key, Protocol: t.Case.Protocol, Level: Info},
			wire: &wireLog{start: time.Now()}}
		fx.log = ft.wire
		fx.val, fx.err = f(ft)
		fx.notes = ft.notes
	})
	t.mu.Lock()
	t.fixtureLogs = append(t.fixtureLogs, fx.log)
	t.mu.Unlock()
	if fx.err != nil {
		return nil, Precondition("setup "+key, fx.err)
	}
	return fx.val, nil
}

type fixture struct {
	once  sync.Once
	val   any
	err   error
	log   *wireLog
	notes []string
}

// Env is what every case of a run shares: the target, the settings, the
// source addresses and the fixtures.
type Env struct {
	// Target is the address as given; Addr is it resolved.
	Target string
	Addr   netip.AddrPort
	// Protocol is the --protocol of the run.
	Protocol string
	// Options are the protocol's own settings, the run's copy of
	// Config.Options (Group.Options): its reachability check may settle
	// them (udp-lobby: the header profile under --header auto).
	Options any
	// Timeout is how long to wait for one reply.
	Timeout time.Duration
	// Sources hands out paced source addresses.
	Sources *SourcePool
	// Flood settings of the rate-limit group.
	FloodRate     int
	FloodDuration time.Duration
	// MaxFill bounds how many rooms a case may create to reach an instance
	// limit.
	MaxFill int
	// PoolWait bounds the wait for a free instance (the server's cleanup)
	// when a create is refused for want of one.
	PoolWait time.Duration

	redirects *target.Policy // nil: the target's address alone (Follow)
	// plausible is the protocol's Group.Plausible (nil: all are).
	plausible func([]byte) bool

	mu       sync.Mutex
	made     map[uint32]bool // rooms this run created (UDP lobby)
	fixtures map[string]*fixture
	// selected are the ids of the cases of the run (--cases).
	selected map[string]bool
	down     string
	cleanups []func()
	// stallHook, set by tests, runs in every wait between a read's
	// deadline and the read: a stall of the harness.
	stallHook func()
}

// Follow returns where a case may send when the server named dst for it
// to go on to (a GAME_START's instance address), or the
// *target.RedirectError that refuses it: the target's host, or a host
// --allow-redirect allows (target.Policy). Every UDP send of a case
// passes it too (UDPSocket.Send), so no case can be made to send
// elsewhere.
func (e *Env) Follow(dst netip.AddrPort) (netip.AddrPort, error) {
	p := e.redirects
	if p == nil {
		p = target.NewPolicy(e.Addr, nil, target.Allow{})
	}
	return p.Follow(dst)
}

// Cleanup registers f to run at the end of the run (e.g. disconnect the
// players a fixture kept in a room).
func (e *Env) Cleanup(f func()) {
	e.mu.Lock()
	e.cleanups = append(e.cleanups, f)
	e.mu.Unlock()
}

// NoteRoom records a room the run created.
func (e *Env) NoteRoom(id uint32) {
	e.mu.Lock()
	if e.made == nil {
		e.made = map[uint32]bool{}
	}
	e.made[id] = true
	e.mu.Unlock()
}

// RoomsMade returns how many rooms the run created so far.
func (e *Env) RoomsMade() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.made)
}

func (e *Env) downReason() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.down
}

// PortRange is an inclusive range of ports; the zero value means "not
// given".
type PortRange = netrange.PortRange

// restarted forgets what the run knew of the server before it was started
// afresh (Config.RestartTarget): its fixtures (rooms and games of the old
// process), the rooms it made, a case's word that it was down.
func (e *Env) restarted() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fixtures = map[string]*fixture{}
	e.made = nil
	e.down = ""
}
