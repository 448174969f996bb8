package conformance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/result"
)

// Defaults of Config.
const (
	DefaultTimeout       = time.Second
	DefaultParallel      = 8
	DefaultFloodRate     = 20000
	DefaultFloodDuration = 500 * time.Millisecond
	DefaultMaxFill       = 64
	// DefaultPoolWait covers two cleanup intervals of the reference server
	// (30 s each: a room is freed once it has been empty for a whole
	// interval) and a margin: a lobby that frees empty rooms lazily gets
	// that long to free one before the case skips.
	DefaultPoolWait = 65 * time.Second
)

// Config is one conformance run.
type Config struct {
	// Target is host:port of the lobby (or Leviathan endpoint). Required.
	Target string
	// Protocol is a registered protocol name; "" means DefaultProtocol().
	Protocol string
	// Options are the protocol's own settings (Group.Flags: udp-lobby's
	// udpcases.Options, its header profile and instance ports); nil: its
	// defaults.
	Options any
	// Patterns select cases (see Match), and IDs by their exact ids;
	// neither selects all.
	Patterns []string
	IDs      []string
	// Extra are cases of this run only, beside the registered ones (a
	// user's own, UserCases), selected by Patterns as they are.
	Extra []*Case
	// Strict counts warnings as failures (result.Conform.Headline).
	Strict bool
	// Timeout is the wait for one reply; 0 means DefaultTimeout.
	Timeout time.Duration
	// Sources are the local addresses requests are spread over; nil means
	// DefaultSources(target).
	Sources []netip.Addr
	// SourceRate and SourceBurst pace each source address; 0 means the
	// defaults.
	SourceRate, SourceBurst float64
	// Parallel bounds how many concurrent-phase cases run at once.
	Parallel int
	// FloodRate (datagrams/s) and FloodDuration shape the rate-limit
	// group's flood from one source.
	FloodRate     int
	FloodDuration time.Duration
	// MaxFill bounds the rooms a case creates to reach an instance limit.
	MaxFill int
	// PoolWait bounds the wait for the server to free an instance when a
	// create finds none; 0 means DefaultPoolWait, negative no wait.
	PoolWait time.Duration
	// AllowRedirect is where, besides the target's host, a server may
	// send the suite (--allow-redirect; Env.Follow).
	AllowRedirect target.Allow

	// TargetExit, when set, reports whether a target process lobbybench
	// owns (--target-cmd) has ended: exited true, exit how ("killed by
	// SIGABRT", "exited with status 2"), output its last lines of stdout
	// and stderr. The runner asks before each liveness check and when it
	// finds the target down, and puts them in the Outage (Kind
	// result.DownExited, Exit, Output). Nil: the target is not owned.
	TargetExit func() (exit string, output []string, exited bool)
	// RestartTarget, when set, starts the target afresh after an outage
	// (the cases in flight have been judged by then). When it returns nil
	// and the target answers its reachability check again, the outage is
	// closed (Back) and the run goes on with the cases not yet run, instead
	// of marking them not run. Nil: once down, every later case is not run.
	RestartTarget func(ctx context.Context) error
	// Progress, when set, is told each time a case is done (judged, or
	// not run): how many of the total are, and the section of the one
	// just done. It is called with the runner's lock held, one call at a
	// time, done counting up: it must return quickly (`conform`'s bar).
	Progress func(done, total int, section string)
}

// Validate checks cfg and returns every problem at once (k6's habit).
func (cfg *Config) Validate() []error {
	var errs []error
	if cfg.Target == "" {
		errs = append(errs, errors.New("target is required (host:port)"))
	} else if _, _, err := net.SplitHostPort(cfg.Target); err != nil {
		errs = append(errs, fmt.Errorf("target %q: %v", cfg.Target, err))
	}
	if _, ok := lookupGroup(cfg.protocol()); !ok {
		errs = append(errs, fmt.Errorf("unknown protocol %q (have %s)", cfg.protocol(), strings.Join(Protocols(), ", ")))
	}
	for _, p := range cfg.Patterns {
		if err := ValidPattern(p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range cfg.Extra {
		if c.Protocol != cfg.protocol() {
			errs = append(errs, fmt.Errorf("case %s is a %s case, not %s", c.ID, c.Protocol, cfg.protocol()))
		}
	}
	if cfg.Timeout < 0 {
		errs = append(errs, errors.New("timeout must be positive"))
	}
	return errs
}

func (cfg *Config) protocol() string {
	if cfg.Protocol == "" {
		return DefaultProtocol()
	}
	return cfg.Protocol
}

// Selected returns the cases cfg would run, in id order, without sending
// anything (--list).
func (cfg *Config) Selected() []*Case {
	var out []*Case
	for _, c := range cfg.All() {
		if len(cfg.Patterns)+len(cfg.IDs) == 0 || matchAny(cfg.Patterns, c.ID) || slices.Contains(cfg.IDs, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// All returns every case of cfg's protocol, built-in and Extra, in id
// order, whatever Patterns and IDs select.
func (cfg *Config) All() []*Case {
	out := Cases(cfg.protocol())
	for _, c := range cfg.Extra {
		if c.Protocol == cfg.protocol() {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return caseLess(out[i].ID, out[j].ID) })
	return out
}

// Run checks the target is reachable, then runs the selected cases phase by phase and
// returns their results, in id order, as the reports package's conform
// document (every format renders it). It watches the target's life
// meanwhile (liveRun): the reachability check after every serial case, a
// watchdog beside the concurrent ones; once the target is down, the cases
// in flight fail with it, later ones are not run, and the document's
// Outages say when and how. It returns an error wrapping
// ErrUnreachable when the reachability check finds no live target (the document then
// holds no case), and a plain error for an invalid configuration.
func Run(ctx context.Context, cfg Config) (*result.Conform, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	proto, _ := lookupGroup(cfg.protocol())
	cases := cfg.Selected()
	if len(cases) == 0 {
		return nil, fmt.Errorf("no %s case matches %s", cfg.protocol(), strings.Join(cfg.Patterns, ","))
	}
	env, err := newEnv(cfg, proto)
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		env.selected[c.ID] = true
	}
	rep := result.NewConform()
	rep.Target, rep.Protocol, rep.Strict, rep.StartedAt = cfg.Target, proto.Name, cfg.Strict, time.Now()
	defer func() { rep.DurationNS = time.Since(rep.StartedAt) }()
	if proto.Reach != nil {
		note, err := proto.Reach(ctx, env)
		if err != nil {
			return rep, err
		}
		if note != "" {
			rep.Notes = append(rep.Notes, note)
		}
	}
	defer func() {
		env.mu.Lock()
		cl := env.cleanups
		env.mu.Unlock()
		for i := len(cl) - 1; i >= 0; i-- {
			cl[i]()
		}
	}()

	par := cfg.Parallel
	if par <= 0 {
		par = DefaultParallel
	}
	lr := newLiveRun(ctx, env, proto, cfg, rep)
	lr.wd.Observe(0, nil) // the check above answered
	lr.run(cases, par)
	sort.SliceStable(rep.Cases, func(i, j int) bool { return caseLess(rep.Cases[i].ID, rep.Cases[j].ID) })
	return rep, nil
}

// newEnv is the environment cases of cfg run in, with the defaults of
// its zero fields.
func newEnv(cfg Config, proto *Group) (*Env, error) {
	addr, err := resolve(proto.Transport, cfg.Target)
	if err != nil {
		return nil, err
	}
	env := &Env{
		Target: cfg.Target, Addr: addr, Protocol: proto.Name, Options: cfg.Options,
		Timeout:   cfg.Timeout,
		FloodRate: cfg.FloodRate, FloodDuration: cfg.FloodDuration, MaxFill: cfg.MaxFill,
		PoolWait: cfg.PoolWait, fixtures: map[string]*fixture{}, selected: map[string]bool{},
	}
	// The other addresses of the target's name count as its host; the
	// name resolved a moment ago, and a failed second lookup only leaves
	// the address resolve chose.
	hosts, _ := target.HostAddrs(context.Background(), cfg.Target)
	env.redirects = target.NewPolicy(addr, hosts, cfg.AllowRedirect)
	env.plausible = proto.Plausible
	if proto.Options != nil {
		env.Options = proto.Options(cfg.Options)
	}
	if env.PoolWait == 0 {
		env.PoolWait = DefaultPoolWait
	}
	if env.Timeout == 0 {
		env.Timeout = DefaultTimeout
	}
	if env.FloodRate <= 0 {
		env.FloodRate = DefaultFloodRate
	}
	if env.FloodDuration <= 0 {
		env.FloodDuration = DefaultFloodDuration
	}
	if env.MaxFill <= 0 {
		env.MaxFill = DefaultMaxFill
	}
	srcs := cfg.Sources
	if len(srcs) == 0 {
		srcs = DefaultSources(addr.Addr())
	}
	rate, burst := cfg.SourceRate, cfg.SourceBurst
	if rate <= 0 {
		rate = DefaultSourceRate
	}
	if burst <= 0 {
		burst = DefaultSourceBurst
	}
	if env.Sources, err = NewSourcePool(srcs, rate, burst); err != nil {
		return nil, err
	}
	return env, nil
}

func resolve(transport, target string) (netip.AddrPort, error) {
	var ap netip.AddrPort
	switch transport {
	case "tcp":
		a, err := net.ResolveTCPAddr("tcp", target)
		if err != nil {
			return ap, fmt.Errorf("target %q: %v", target, err)
		}
		ap = a.AddrPort()
	default:
		a, err := net.ResolveUDPAddr("udp", target)
		if err != nil {
			return ap, fmt.Errorf("target %q: %v", target, err)
		}
		ap = a.AddrPort()
	}
	if ap.Port() == 0 {
		return ap, fmt.Errorf("target %q: port 0", target)
	}
	if !ap.Addr().IsValid() || ap.Addr().IsUnspecified() {
		ap = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port())
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// runCase runs c with its own T, which lives only as long as the case,
// and returns its result: verdict, expected and actual, the notes, and the
// wire log, the fixtures' entries first (noted "setup").
func runCase(ctx context.Context, env *Env, c *Case) result.Case {
	t := NewT(ctx, env, c)
	start := time.Now()
	res := result.Case{ID: c.ID, Section: c.Section, Description: c.Desc, Rule: c.Rule,
		Requirement: c.Requirement, Level: levelName(c.Level)}
	var err error
	switch {
	case ctx.Err() != nil:
		err = Skipf("run interrupted")
	default:
		err = safeRun(t)
	}
	res.Verdict, res.Expected, res.Actual = judge(c.Level, err)
	if res.Verdict == result.VerdictSkip {
		res.Actual += env.judgedBy(c, err)
	}
	if ctx.Err() != nil && (res.Verdict == result.VerdictFail || res.Verdict == result.VerdictWarn) {
		// A finding made while the run was being interrupted cannot be
		// trusted (a wait cut short looks like silence): skip, and say
		// what it was.
		res.Actual = fmt.Sprintf("run interrupted during the case (it had found: expected %s, got %s)", res.Expected, res.Actual)
		res.Verdict, res.Expected = result.VerdictSkip, ""
	}
	res.DurationNS = time.Since(start)
	t.mu.Lock()
	res.Notes = append([]string(nil), t.notes...)
	t.mu.Unlock()
	t.stallVerdict(&res)
	t.mu.Lock()
	fl := t.fixtureLogs
	t.mu.Unlock()
	seen := map[*wireLog]bool{}
	for _, l := range fl {
		if seen[l] || l == nil {
			continue
		}
		seen[l] = true
		e, n := l.snapshot()
		for i := range e {
			if e[i].Note == "" {
				e[i].Note = "setup"
			} else {
				e[i].Note = "setup: " + e[i].Note
			}
		}
		res.Wire = append(res.Wire, e...)
		res.WireElided += n
	}
	e, n := t.wire.snapshot()
	res.Wire = append(res.Wire, e...)
	res.WireElided += n
	return res
}

// levelName is l as the reports package names it.
func levelName(l Level) string {
	switch l {
	case Must:
		return result.LevelMust
	case Should:
		return result.LevelShould
	}
	return result.LevelInfo
}

// judgedBy returns " — judged by <id>" for a skip resting on a reply that
// case <id> owns (SkipError.Owner), with ", not run" when --cases left that
// case out, so the reader knows where the defect is reported; "" otherwise
// (no owner, or c is the owner itself).
func (e *Env) judgedBy(c *Case, err error) string {
	var s *SkipError
	if !errors.As(err, &s) || s.Owner == "" || s.Owner == c.ID {
		return ""
	}
	if !e.selected[s.Owner] {
		return " — judged by " + s.Owner + ", not run"
	}
	return " — judged by " + s.Owner
}

func safeRun(t *T) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return t.Case.Run(t)
}

// ReachCheck returns the protocol's reachability check of cfg's target,
// on sockets of its own: nil once the target answers. lobbybench waits on
// it for a server it started itself (conform --target-cmd) before the
// suite begins. Each call checks afresh (under --header auto it guesses
// the header again).
func (cfg *Config) ReachCheck() (func(ctx context.Context) error, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	proto, _ := lookupGroup(cfg.protocol())
	if _, err := newEnv(*cfg, proto); err != nil {
		return nil, err
	}
	c := *cfg
	return func(ctx context.Context) error {
		if proto.Reach == nil {
			return nil
		}
		env, err := newEnv(c, proto)
		if err != nil {
			return err
		}
		_, err = proto.Reach(ctx, env)
		return err
	}, nil
}
