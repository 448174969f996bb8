package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// EngineRunner runs each step as engine runs of the scenario at a
// constant load: the open model's rate (sessions started a second) held
// flat, or the closed model's clients; the scenario's own stages are
// replaced, its flows and thresholds kept. A step is a warm-up run of
// Warmup (its result only looked at for the target going down), then the
// judged run of Hold against the same server: warm-up then reset, so the
// thresholds judge the step after its warm-up only. With no target, a
// fresh embedded server is started for each step (both runs), so no step
// inherits another's rooms; with one, Rooms (when set) is the server's
// room count (or player count: Counted), taken before the first step as
// the baseline, and before each later step it is polled (every
// DrainPoll, for up to Drain) until back to it.
//
// Run may play each run as several local worker processes
// (engine.RunWorkers, `capacity --workers`): the step is then judged on
// their merge, and the judgement sees each worker's own run too
// (Judgement.Judge's parts). Base.Shard makes every step this process's
// share of the load (`capacity --shard`); KeepRuns keeps each step's
// judged run in it for a merge of the shards.
type EngineRunner struct {
	Plan   *scenario.Plan // overrides applied
	Base   engine.Config  // everything but the Plan
	Hold   time.Duration  // the judged run of a step
	Warmup time.Duration  // the warm-up run before it (0: none)
	Judge  Judgement
	// Run is engine.Run (a test may put another engine in; `--workers`
	// puts engine.RunWorkers).
	Run func(context.Context, engine.Config) (*engine.Result, error)
	// KeepRuns keeps each step's judged run (CapacityStep.Run).
	KeepRuns bool
	// Rooms counts the server's rooms (nil: no drain check); an error
	// wrapping ErrNoCount at the baseline means the server offers no
	// count: the drain is then not checked, and Note says so once.
	Rooms func(context.Context) (int, error)
	// Counted is what Rooms counts, as a reading says it ("rooms
	// listed", the default; "players reported").
	Counted   string
	Note      func(string)
	Drain     time.Duration
	DrainPoll time.Duration
	// Sleep waits between drain polls (nil: a timer honouring ctx); Now
	// is the drain's clock (nil: time.Now).
	Sleep func(context.Context, time.Duration)
	Now   func() time.Time
	// Telemetry, when set, is the owned target process's figures since
	// the step's start (its engine.Observer's LoadStart takes the baseline): what
	// the step cost the server, when the engine did not measure it (it
	// does the embedded server).
	Telemetry func() *result.TargetProcess
	// FilesLimit is the open-files limit a step's need is compared with
	// (0: this process's, engine.OpenFilesLimit).
	FilesLimit uint64

	steps     int
	baseline  int
	noBase    string // why there is no baseline
	unchecked bool   // the server offers no count to drain by
}

// CountTarget sets r's drain check from the plan's protocol: its
// Occupancy counts what the plan's target still holds (its rooms, or its
// players), each ask waiting up to 2 s. It returns false, leaving Rooms
// nil, when the protocol offers no such count.
func (r *EngineRunner) CountTarget() bool {
	p, ok := simclient.Describe(string(r.Plan.Protocol))
	if !ok || p.Occupancy == nil {
		return false
	}
	plan, occ := r.Plan, p.Occupancy
	r.Rooms = func(ctx context.Context) (int, error) {
		addr, err := target.Resolve(ctx, plan.Target)
		if err != nil {
			return 0, err
		}
		return occ.Count(ctx, addr, plan.Options, 2*time.Second)
	}
	r.Counted = occ.Counted
	return true
}

// ErrNoCount is wrapped by a Rooms error meaning the server answers but
// offers no count to wait for: simclient.ErrNoCount, which a protocol's
// Occupancy.Count returns.
var ErrNoCount = simclient.ErrNoCount

// MaxLoad is the highest load a step may hold (the scenario's own bound
// on a rate or a client count).
const MaxLoad = 1_000_000

// StepPlan is plan held at a constant load for d: an open model's rate
// or a closed model's clients, max_clients scaled with the load when it
// exceeds the scenario's peak. Faults and the load curve are dropped.
func StepPlan(plan *scenario.Plan, load float64, d time.Duration) *scenario.Plan {
	p := *plan
	peak := p.Load.Start
	for _, s := range p.Load.Stages {
		peak = math.Max(peak, s.Target)
	}
	p.Load.Start, p.Load.Stages, p.Load.Duration, p.Load.Curve = load, nil, d, nil
	if p.Load.Model == scenario.Closed {
		p.Load.MaxClients = int(load)
	} else if peak > 0 && load > peak {
		p.Load.MaxClients = int(math.Ceil(float64(p.Load.MaxClients) * load / peak))
	}
	p.Faults = nil
	return &p
}

// Step implements Runner.
func (r *EngineRunner) Step(ctx context.Context, load float64) (result.CapacityStep, error) {
	drain := r.drain(ctx)
	r.steps++
	run := r.Run
	if run == nil {
		run = engine.Run
	}
	cfg := r.Base
	// The engine's open-files warning counts max_clients: the step says
	// its own, once (noteFiles).
	cfg.NoFilesWarning = true
	var (
		srvCfg *refserver.Config
		said   bool
	)
	var self *owned.SelfSampler
	if r.Plan.Target == "" && !cfg.EmbeddedAt.IsValid() {
		// One server for the step's two runs, sampled from the judged
		// run's start.
		srv, err := r.embedded()
		if err != nil {
			return result.CapacityStep{}, err
		}
		defer srv.Close()
		cfg.EmbeddedAt, srvCfg = srv.addr, &srv.cfg
		cfg.Observers = append(slices.Clip(cfg.Observers), judgedSampler{srv: srv, self: &self})
		defer func() {
			if self != nil {
				self.Stop()
			}
		}()
		if r.Warmup > 0 {
			wcfg := cfg
			wcfg.Plan = StepPlan(r.Plan, load, r.Warmup)
			res, err := run(ctx, wcfg)
			r.noteFiles(&said, load, res, srvCfg)
			if st, done, err := r.warmedUp(load, res, err, drain); done {
				return st, err
			}
		}
		srv.judged = true
	} else if r.Warmup > 0 {
		wcfg := cfg
		wcfg.Plan = StepPlan(r.Plan, load, r.Warmup)
		res, err := run(ctx, wcfg)
		r.noteFiles(&said, load, res, srvCfg)
		if st, done, err := r.warmedUp(load, res, err, drain); done {
			return st, err
		}
	}
	cfg.Plan = StepPlan(r.Plan, load, r.Hold)
	res, err := run(ctx, cfg)
	r.noteFiles(&said, load, res, srvCfg)
	if err != nil {
		return r.failed(load, err, drain)
	}
	if res.Engine != nil && res.Engine.Interrupted {
		return result.CapacityStep{}, context.Canceled
	}
	workers := 0
	if res.Engine != nil {
		workers = res.Engine.Workers
	}
	if res.Run.TargetProcess == nil {
		switch {
		case self != nil:
			// a last reading: a step shorter than the interval has its figures
			tp := engine.TargetProcess(self.Stop(), "the embedded server runs in lobbybench's own process: these figures include the load generator's own work")
			if workers > 0 {
				tp.Note = "the embedded server runs in the capacity process, the load in its worker processes: these figures are the server's"
			}
			res.Run.TargetProcess = tp
		case r.Telemetry != nil:
			res.Run.TargetProcess = r.Telemetry()
		}
	}
	j := r.Judge
	j.Length, j.Warmup = r.Hold, 0 // the warm-up ran apart
	j.Embedded = j.Embedded || cfg.EmbeddedAt.IsValid()
	j.Workers = j.Workers || workers > 0
	st := j.Judge(res.Run, load, res.WorkerRuns...)
	st.Drain, st.Workers = drain, workers
	if r.KeepRuns {
		st.Run = res.Run
	}
	return st, nil
}

// noteFiles says, once per step (*said), after its first run, when the
// step needs more open files than the limit: from its own load, and for
// an open model from the peak of live sessions that run measured
// (stepFiles), not from max_clients. srv is the step's embedded server,
// in this process (nil: none).
func (r *EngineRunner) noteFiles(said *bool, load float64, res *engine.Result, srv *refserver.Config) {
	if *said || r.Note == nil || res == nil || res.Engine == nil {
		return
	}
	*said = true
	limit := r.FilesLimit
	if limit == 0 {
		limit = engine.OpenFilesLimit()
	}
	workers := res.Engine.Workers
	f := stepFiles(r.Plan, r.Base.Shard, load, res.Engine.Sessions.MaxActive, workers, srv, limit)
	if w := filesWarning(r.Plan, load, f, workers); w != "" {
		r.Note(w)
	}
}

// warmedUp looks at a step's warm-up run: done when the step ends there
// (the target went down during it, it could not run, or it was
// interrupted), with the step or error to return.
func (r *EngineRunner) warmedUp(load float64, res *engine.Result, err error, drain string) (result.CapacityStep, bool, error) {
	if err != nil {
		st, err := r.failed(load, err, drain)
		return st, true, err
	}
	if res.Engine != nil && res.Engine.Interrupted {
		return result.CapacityStep{}, true, context.Canceled
	}
	if len(res.Run.DownOutages()) > 0 {
		st := r.Judge.Judge(res.Run, load)
		st.Why = "during the warm-up: " + st.Why
		st.Drain = drain
		if r.KeepRuns {
			// The outage is what a merge of shards must see.
			st.Run = res.Run
		}
		return st, true, nil
	}
	return result.CapacityStep{}, false, nil
}

// failed is a step whose run could not start: a target unreachable
// before a later step died of the load before it (TARGET DOWN); before
// the first, it is the caller's error.
func (r *EngineRunner) failed(load float64, err error, drain string) (result.CapacityStep, error) {
	var unreach *engine.UnreachableError
	if r.steps > 1 && errors.As(err, &unreach) {
		return result.CapacityStep{Load: load, Verdict: result.CapTargetDown, Why: "unreachable before the step: " + err.Error(), Drain: drain}, nil
	}
	return result.CapacityStep{}, err
}

// stepServer is the embedded reference server of one step.
// judgedSampler is the engine.Observer that starts sampling a step's
// embedded server's process (into *self) at its judged run's start.
type judgedSampler struct {
	engine.Observes
	srv  *stepServer
	self **owned.SelfSampler
}

func (j judgedSampler) LoadStart(start time.Time) {
	if *j.self == nil && j.srv.judged {
		*j.self, _ = owned.SampleSelf(time.Second, start)
	}
}

type stepServer struct {
	cfg    refserver.Config
	addr   netip.AddrPort
	srv    *refserver.Server
	judged bool // the judged run has begun
}

func (s *stepServer) Close() { s.srv.Close() }

// embedded starts a step's reference server as the engine would for a
// run with no target.
func (r *EngineRunner) embedded() (*stepServer, error) {
	c, err := engine.EmbeddedConfig(r.Plan)
	if err != nil {
		return nil, err
	}
	if r.Base.Embedded != nil {
		c = *r.Base.Embedded
	}
	p, ok := simclient.Describe(string(r.Plan.Protocol))
	if !ok {
		return nil, fmt.Errorf("capacity: no simulated client for protocol %q", r.Plan.Protocol)
	}
	srv, err := refserver.Start(context.Background(), c)
	if err != nil {
		return nil, fmt.Errorf("capacity: embedded reference server: %w", err)
	}
	addr := srv.Addr(p.EmbeddedParts[0])
	if !addr.IsValid() {
		srv.Close()
		return nil, fmt.Errorf("capacity: embedded reference server has no %s part", p.EmbeddedParts[0])
	}
	return &stepServer{cfg: c, addr: addr, srv: srv}, nil
}

// settleFor is how long the count must stay level before the first step
// for it to be the baseline, when it is not 0: rooms an earlier run left
// (a run just before, or the search before this one) empty and are cleaned
// up within it by a server that cleans up every second or so.
const settleFor = 2 * time.Second

// drain waits for the server's rooms to fall back to the baseline, and
// says when they did not ("" when they did or nothing is checked). The
// baseline is taken before the first step, once the count is 0 or has
// stayed level for settleFor (up to Drain): a count taken at once after an
// earlier run would hold that run's rooms, and every later step would
// count as drained with this run's own in their place. A later reading
// below it lowers it (rooms there before the first step that went since).
func (r *EngineRunner) drain(ctx context.Context) string {
	if r.Rooms == nil || r.unchecked {
		return ""
	}
	if r.steps == 0 {
		return r.takeBaseline(ctx)
	}
	if r.noBase != "" {
		return r.noBase
	}
	noun, verb := r.counted()
	// At most Drain: a count waits up to 2 s for its answer, so a silent
	// target's 61 polls of a 30 s drain once took over two minutes.
	tries := max(1, int(r.Drain/r.poll())+1)
	end := r.now().Add(r.Drain)
	last, lastErr := -1, error(nil)
	for i := 0; i < tries && ctx.Err() == nil && (i == 0 || r.now().Before(end)); i++ {
		n, err := r.Rooms(ctx)
		if err == nil && n < r.baseline {
			r.baseline = n
		}
		if err == nil && n <= r.baseline {
			return ""
		}
		last, lastErr = n, err
		if i < tries-1 {
			r.sleep(ctx, r.poll())
		}
	}
	if lastErr != nil {
		return fmt.Sprintf("not drained: %s not %s within --drain %v (%v)", noun, verb, r.Drain, lastErr)
	}
	return fmt.Sprintf("not drained: %s %s after --drain %v, baseline %d", words.Count(last, strings.TrimSuffix(noun, "s")), verb, r.Drain, r.baseline)
}

// takeBaseline reads the count before the first step, polling (every
// DrainPoll, up to Drain) until it is 0 or has not fallen for settleFor;
// a count above 0 is told (Note).
func (r *EngineRunner) takeBaseline(ctx context.Context) string {
	noun, verb := r.counted()
	n, err := r.Rooms(ctx)
	if errors.Is(err, ErrNoCount) {
		r.unchecked = true
		if r.Note != nil {
			r.Note("drain not checked: " + err.Error())
		}
		return ""
	}
	if err != nil {
		r.noBase = "no " + strings.TrimSuffix(noun, "s") + " baseline (" + err.Error() + ")"
		return r.noBase
	}
	level := time.Duration(0)
	for waited := time.Duration(0); n > 0 && level < settleFor && waited < r.Drain && ctx.Err() == nil; waited += r.poll() {
		r.sleep(ctx, r.poll())
		m, err := r.Rooms(ctx)
		switch {
		case err != nil:
			level = settleFor // keep what was read
		case m < n:
			n, level = m, 0
		default:
			level += r.poll()
		}
	}
	r.baseline = n
	if n > 0 && r.Note != nil {
		r.Note(fmt.Sprintf("drain: %s %s before the first step: the baseline each later step waits for", words.Count(n, strings.TrimSuffix(noun, "s")), verb))
	}
	return ""
}

// counted is what Rooms counts, as its noun and verb ("rooms", "listed").
func (r *EngineRunner) counted() (noun, verb string) {
	counted := r.Counted
	if counted == "" {
		counted = "rooms listed"
	}
	noun, verb, _ = strings.Cut(counted, " ")
	return noun, verb
}

// poll is DrainPoll, 0.5 s when not set.
func (r *EngineRunner) poll() time.Duration {
	if r.DrainPoll <= 0 {
		return 500 * time.Millisecond
	}
	return r.DrainPoll
}

// now is the drain's clock (Now, or time.Now).
func (r *EngineRunner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// sleep waits d between drain polls (Sleep, or a timer honouring ctx).
func (r *EngineRunner) sleep(ctx context.Context, d time.Duration) {
	if r.Sleep != nil {
		r.Sleep(ctx, d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
