package conformance

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// liveRun runs the cases of one suite while watching the target's life: the
// protocol's reachability check after each case of the serial phases, a
// liveness.Watchdog on its own socket while the concurrent cases run and a
// check after their batch. Once the target is down no further case starts:
// the cases in flight when it went down fail with the death, every later
// case is not run (result.VerdictNotRun).
type liveRun struct {
	ctx   context.Context // the run's: cancelled on interruption
	env   *Env
	proto *Group
	cfg   Config
	rep   *result.Conform
	wd    *liveness.Watchdog
	// probeTimeout bounds one reachability check (it retries inside).
	probeTimeout time.Duration

	mu sync.Mutex
	// caseCtx is what cases run with: cancelled when the target is seen
	// down, so that the cases in flight stop waiting for a dead server.
	caseCtx   context.Context
	stopCases context.CancelFunc
	// detectedAt is when the open outage was noticed (the end of the
	// window of the cases it is charged to).
	detectedAt time.Duration
	spans      map[string]*caseSpan
	results    map[string]int // case id → index in rep.Cases
	// during holds, per outage index of wd, the cases in flight.
	during map[int][]string
	// rerunOf records the solo re-runs made after an outage.
	rerunOf []rerunRecord
	// tookDown is set once a case's T.TargetDown has been turned into an
	// outage.
	tookDown bool
	// cases are the run's cases by id (for the solo re-runs).
	cases map[string]*Case
	// reruns counts the solo re-runs made to find a culprit
	// (MaxSuiteReruns).
	reruns int
}

// Bounds of the search for the case that kills an owned target (Config.
// RestartTarget): when several cases were in flight as it died, each is
// re-run alone on a fresh server, at most MaxCrashReruns per crash and
// MaxSuiteReruns in the whole suite; the cases past the bound keep the
// verdict of the crash.
const (
	MaxCrashReruns = 8
	MaxSuiteReruns = 32
)

type caseSpan struct {
	start, end time.Duration
	running    bool
}

func newLiveRun(ctx context.Context, env *Env, proto *Group, cfg Config, rep *result.Conform) *liveRun {
	lr := &liveRun{ctx: ctx, env: env, proto: proto, cfg: cfg, rep: rep,
		probeTimeout: 3*env.Timeout + 250*time.Millisecond,
		spans:        map[string]*caseSpan{}, results: map[string]int{}, during: map[int][]string{}}
	lr.caseCtx, lr.stopCases = context.WithCancel(ctx)
	lr.wd = &liveness.Watchdog{Probe: lr.probe, Start: rep.StartedAt, Timeout: lr.probeTimeout,
		OnChange: func(o result.Outage) {
			if o.Back {
				return
			}
			lr.mu.Lock()
			lr.detectedAt = lr.now()
			stop := lr.stopCases
			lr.mu.Unlock()
			stop()
		}}
	return lr
}

func (lr *liveRun) now() time.Duration { return time.Since(lr.rep.StartedAt) }

// probe is the protocol's reachability check, on sockets of its own (no
// case's), bounded by probeTimeout. The check only reads what the first one
// settled in Env.Options (the UDP header profile: no longer auto).
func (lr *liveRun) probe(ctx context.Context) error {
	if lr.proto.Reach == nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, lr.probeTimeout)
	defer cancel()
	_, err := lr.proto.Reach(pctx, lr.env)
	if err != nil && pctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("no answer to the reachability check within %v", lr.probeTimeout)
	}
	if err != nil && errors.Is(err, ErrUnreachable) {
		// The outage says the target is down: the probe's words need not.
		msg := strings.TrimPrefix(err.Error(), ErrUnreachable.Error()+": ")
		msg = strings.TrimPrefix(msg, "target ") // Garbled's
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, lr.env.Target+": "), lr.env.Target+" ")
		return &probeError{msg: msg, err: err}
	}
	return err
}

// probeError is a failed check in fewer words, still matching what it
// wraps (ECONNREFUSED for liveness.Classify).
type probeError struct {
	msg string
	err error
}

func (e *probeError) Error() string { return e.msg }
func (e *probeError) Unwrap() error { return e.err }

// run runs the cases phase by phase.
func (lr *liveRun) run(cases []*Case, par int) {
	lr.cases = map[string]*Case{}
	for _, c := range cases {
		lr.cases[c.ID] = c
	}
	for _, phase := range []Phase{PhaseConcurrent, PhaseSerial, PhasePool, PhaseDestructive, PhaseReview} {
		var batch []*Case
		for _, c := range cases {
			if c.Phase == phase {
				batch = append(batch, c)
			}
		}
		if len(batch) == 0 {
			continue
		}
		if phase == PhaseConcurrent {
			lr.concurrent(batch, par)
			continue
		}
		for _, c := range batch {
			if phase == PhaseReview {
				lr.runOne(c) // it sends nothing: a target down changes nothing it judges
				continue
			}
			if lr.wd.Down() {
				lr.notRun(c)
				continue
			}
			lr.runOne(c)
			lr.afterCases()
		}
	}
	lr.rep.Outages = lr.outages()
}

// concurrent runs batch par at a time with a watchdog probing beside it,
// then checks once more after the batch. When the watchdog finds the
// target down and it can be restarted (Config.RestartTarget), no case
// starts until the cases in flight have ended and been judged and the
// target is back: the rest of the batch then runs instead of being not
// run.
func (lr *liveRun) concurrent(batch []*Case, par int) {
	stopWatch := lr.watch()
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	canRestart := lr.cfg.RestartTarget != nil
	for _, c := range batch {
		sem <- struct{}{}
		if !lr.wd.Down() {
			lr.exited() // an owned process's end is known at once
		}
		if lr.wd.Down() && canRestart && lr.ctx.Err() == nil {
			wg.Wait()
			stopWatch()
			lr.afterCases() // judges the cases in flight, restarts the target
			if lr.wd.Down() {
				canRestart = false // it did not come back: the rest is not run
			}
			stopWatch = lr.watch()
		}
		if lr.wd.Down() {
			<-sem
			lr.notRun(c)
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			lr.runOne(c)
		}()
	}
	wg.Wait()
	stopWatch()
	lr.afterCases()
}

// watch runs the watchdog until the returned function is called.
func (lr *liveRun) watch() (stop func()) {
	wctx, wcancel := context.WithCancel(lr.ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		lr.wd.Run(wctx)
	}()
	return func() {
		wcancel()
		<-watched
	}
}

// runOne runs c and records its result and its span.
func (lr *liveRun) runOne(c *Case) {
	res, sp := lr.runSpan(c)
	lr.mu.Lock()
	sp.end, sp.running = lr.now(), false
	lr.results[c.ID] = len(lr.rep.Cases)
	lr.rep.Cases = append(lr.rep.Cases, res)
	lr.progressed(res.Section)
	lr.mu.Unlock()
}

// runSpan runs c with a new span; the caller records the end.
func (lr *liveRun) runSpan(c *Case) (result.Case, *caseSpan) {
	lr.mu.Lock()
	sp := &caseSpan{start: lr.now(), running: true}
	lr.spans[c.ID] = sp
	ctx := lr.caseCtx
	lr.mu.Unlock()
	if c.Phase == PhaseReview {
		ctx = lr.ctx // it sends nothing: only an interruption cuts it
	}
	res := runCase(ctx, lr.env, c)
	if ctx.Err() != nil && lr.ctx.Err() == nil {
		// Cut because the target went down, not interrupted: the rewrite
		// below (down) judges it; keep what it had found for its notes.
		res.Actual = strings.Replace(res.Actual, "run interrupted", "cut short when the target was seen down", 1)
	}
	return res, sp
}

// progressed tells Config.Progress that one more case is done, of
// section; lr.mu is held.
func (lr *liveRun) progressed(section string) {
	if lr.cfg.Progress != nil {
		lr.cfg.Progress(len(lr.rep.Cases), len(lr.cases), section)
	}
}

// notRun records c as not run: the target was down when its turn came.
func (lr *liveRun) notRun(c *Case) {
	res := result.Case{ID: c.ID, Section: c.Section, Description: c.Desc, Rule: c.Rule,
		Requirement: c.Requirement, Level: levelName(c.Level), Verdict: result.VerdictNotRun,
		Actual: "not run: target down since " + lr.downSince()}
	lr.mu.Lock()
	lr.results[c.ID] = len(lr.rep.Cases)
	lr.rep.Cases = append(lr.rep.Cases, res)
	lr.progressed(res.Section)
	lr.mu.Unlock()
}

// downSince names where the open outage began: the first case in flight,
// or its offset when none was.
func (lr *liveRun) downSince() string {
	os := lr.wd.Outages()
	if len(os) == 0 {
		return "an earlier case"
	}
	i := len(os) - 1
	lr.mu.Lock()
	d := lr.during[i]
	lr.mu.Unlock()
	if len(d) > 0 {
		return d[0]
	}
	return fmt.Sprintf("+%v", os[i].StartNS.Round(time.Millisecond))
}

// afterCases checks the target after a case (or a batch) and, when it is
// down, judges the cases in flight and restarts the target when the
// caller can.
func (lr *liveRun) afterCases() {
	if lr.ctx.Err() != nil {
		return // interrupted: a check cut short proves nothing
	}
	lr.check()
	if lr.wd.Down() {
		lr.down()
	}
}

// check probes the target unless it is already known down: an owned
// process that ended is down at once, a case's T.TargetDown is down with
// the case's words, a refused check is down at once, and a silent one is
// down when the check fails a second time in a row.
func (lr *liveRun) check() {
	if lr.wd.Down() {
		return
	}
	if lr.exited() {
		return
	}
	if reason := lr.env.downReason(); reason != "" && !lr.tookDown {
		lr.tookDown = true
		if _, r, ok := strings.Cut(reason, ": "); ok {
			reason = r // "<case id>: why": the outage names the case
		}
		at := lr.now()
		err := lr.probe(lr.ctx)
		if err != nil {
			lr.wd.MarkDown(at, liveness.Classify(err), reason+"; then the reachability check: "+err.Error(), "", nil)
		} else {
			lr.wd.MarkDown(at, result.DownSilent, reason, "", nil)
		}
		return
	}
	for i := 0; i < liveness.DefaultSilentAfter && !lr.wd.Down(); i++ {
		at := lr.now()
		err := lr.probe(lr.ctx)
		if lr.ctx.Err() != nil {
			return
		}
		if err != nil && lr.exited() {
			return
		}
		lr.wd.Observe(at, err)
		if err == nil {
			return
		}
	}
}

// exited asks Config.TargetExit whether the owned process ended and, if
// so, marks the target down with its exit and output.
func (lr *liveRun) exited() bool {
	if lr.cfg.TargetExit == nil {
		return false
	}
	exit, output, gone := lr.cfg.TargetExit()
	if !gone {
		return false
	}
	lr.wd.MarkDown(lr.now(), result.DownExited, "the target process ended: "+exit, exit, output)
	return true
}

// down judges the open outage: the cases in flight between the target's
// last answer and the moment it was seen down fail with the death, and the
// outage names them. Then, when Config.RestartTarget is set, the target is
// restarted and the run goes on if it answers.
func (lr *liveRun) down() {
	os := lr.wd.Outages()
	i := len(os) - 1
	lr.awaitExit(os[i]) // an owned process's end fills in the open outage
	os = lr.wd.Outages()
	o := os[i]
	lr.mu.Lock()
	if _, done := lr.during[i]; done {
		lr.mu.Unlock()
		return
	}
	until := lr.detectedAt
	if until < o.StartNS {
		until = o.StartNS
	}
	// In flight: every case that ran between the last answer and the
	// moment the target was seen down. A case among them that passed and
	// ended before the first failed check got every answer it asked for:
	// it keeps its pass (with a note), unless no other case is left to
	// charge the outage to.
	var ids, passed []string
	for id, sp := range lr.spans {
		if sp.start > until || (!sp.running && sp.end < o.LastUpNS) {
			continue
		}
		if j, ok := lr.results[id]; ok && !sp.running && sp.end < o.StartNS && lr.rep.Cases[j].Verdict == result.VerdictPass {
			passed = append(passed, id)
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		ids, passed = passed, nil
	}
	for _, id := range passed {
		k := &lr.rep.Cases[lr.results[id]]
		k.Notes = append(k.Notes, fmt.Sprintf("the target was found down at +%v, after this case ended at +%v with every answer it asked for",
			o.StartNS.Round(time.Millisecond), lr.spans[id].end.Round(time.Millisecond)))
	}
	sort.Slice(ids, func(a, b int) bool { return caseLess(ids[a], ids[b]) })
	lr.during[i] = ids
	for _, id := range ids {
		j, ok := lr.results[id]
		if !ok {
			continue
		}
		k := &lr.rep.Cases[j]
		if k.Verdict == result.VerdictNotRun {
			continue
		}
		diedDuring(k, o, lr.spans[id], len(ids))
	}
	lr.mu.Unlock()
	if !lr.restart() {
		return
	}
	if len(ids) > 1 {
		lr.culprit(i, ids)
	}
}

// awaitExit gives an owned process that was found refused a moment to be
// reaped (the kernel closes its sockets before its parent hears of its
// end), so that the outage says how it ended.
func (lr *liveRun) awaitExit(o result.Outage) {
	if lr.cfg.TargetExit == nil || o.Kind == result.DownExited {
		return
	}
	for i := 0; i < 100; i++ { // 2s at most
		if lr.exited() || o.Kind != result.DownRefused {
			return
		}
		select {
		case <-lr.ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// restart starts the target afresh (Config.RestartTarget) and reports
// whether it answers again; false when it cannot be restarted.
func (lr *liveRun) restart() bool {
	if lr.cfg.RestartTarget == nil || lr.ctx.Err() != nil {
		return false
	}
	if err := lr.cfg.RestartTarget(lr.ctx); err != nil {
		return false
	}
	lr.env.restarted()
	lr.mu.Lock()
	lr.caseCtx, lr.stopCases = context.WithCancel(lr.ctx)
	lr.tookDown = false
	lr.mu.Unlock()
	lr.wd.Observe(lr.now(), lr.probe(lr.ctx))
	return !lr.wd.Down()
}

// culprit re-runs ids, the cases in flight when the target died (outage
// i), one at a time on the fresh server, restarting it before each when
// it died again, to find the case that kills it. Such a case fails with
// the death it caused alone; each other case takes the verdict of its
// solo run, noted as such. The outage records what was re-run and the
// culprits (result.Outage.CulpritText).
func (lr *liveRun) culprit(i int, ids []string) {
	o := lr.wd.Outages()[i]
	together := fmt.Sprintf("the server %s (%s) while %s ran together", wentDown(o), o.What(), strings.Join(ids, ", "))
	var rerun, culprits []string
	for _, id := range ids {
		c := lr.cases[id]
		lr.mu.Lock()
		j, ok := lr.results[id]
		lr.mu.Unlock()
		if c == nil || !ok || lr.rep.Cases[j].Verdict == result.VerdictNotRun {
			continue
		}
		if lr.ctx.Err() != nil || len(rerun) >= MaxCrashReruns || lr.reruns >= MaxSuiteReruns {
			k := &lr.rep.Cases[j]
			k.Notes = append(k.Notes, fmt.Sprintf("not re-run alone after the crash (at most %d solo re-runs per crash, %d per suite)", MaxCrashReruns, MaxSuiteReruns))
			continue
		}
		if lr.wd.Down() && !lr.restart() {
			break
		}
		lr.reruns++
		rerun = append(rerun, id)
		res, sp := lr.runSpan(c)
		lr.mu.Lock()
		sp.end, sp.running = lr.now(), false
		lr.mu.Unlock()
		lr.check()
		if !lr.wd.Down() {
			res.Notes = append([]string{"re-run alone after " + together + ": this is the verdict of its solo run on a fresh server"}, res.Notes...)
			lr.rep.Cases[j] = res
			continue
		}
		culprits = append(culprits, id)
		os := lr.wd.Outages()
		n := len(os) - 1
		lr.awaitExit(os[n])
		so := lr.wd.Outages()[n]
		lr.mu.Lock()
		lr.during[n] = []string{id}
		lr.mu.Unlock()
		killedAlone(&res, so, together)
		lr.rep.Cases[j] = res
	}
	if len(rerun) == 0 {
		return
	}
	lr.mu.Lock()
	lr.rerunOf = append(lr.rerunOf, rerunRecord{outage: i, rerun: rerun, culprits: culprits})
	lr.mu.Unlock()
	if lr.wd.Down() {
		lr.restart()
	}
}

type rerunRecord struct {
	outage          int
	rerun, culprits []string
}

// killedAlone turns k, the solo re-run of a case during which the target
// died, into the failure that names it the culprit.
func killedAlone(k *result.Case, o result.Outage, together string) {
	if k.Verdict != "" && k.Actual != "" {
		k.Notes = append([]string{"the case itself said (" + k.Verdict + "): " + k.Actual}, k.Notes...)
	}
	var b strings.Builder
	how := o.Exit
	if how == "" {
		how = o.What()
	}
	fmt.Fprintf(&b, "the server %s during this case, re-run alone: %s", wentDown(o), how)
	if len(o.Output) > 0 {
		fmt.Fprintf(&b, "; its last output: %s", strings.Join(lastLines(o.Output, 3), " | "))
	}
	if last := lastSent(k.Wire, 2); last != "" {
		b.WriteString("; last bytes sent to it: " + last)
	}
	k.Notes = append(k.Notes, "re-run alone after "+together)
	k.Verdict = result.VerdictFail
	k.Expected = "the server keeps answering through the case (its reachability check after it)"
	k.Actual = b.String()
}

// wentDown is "died" for a process that ended, "stopped answering" for a
// target found refused or silent.
func wentDown(o result.Outage) string {
	if o.Kind == result.DownExited {
		return "died"
	}
	return "stopped answering"
}

func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// outages returns the watchdog's outages with the cases each was charged
// to.
func (lr *liveRun) outages() []result.Outage {
	os := lr.wd.Outages()
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for i := range os {
		os[i].During = lr.during[i]
	}
	for _, r := range lr.rerunOf {
		os[r.outage].ReRunAlone, os[r.outage].Culprits = r.rerun, r.culprits
	}
	return os
}

// diedDuring turns k, a case in flight when the target went down, into a
// failure that says so, whatever it would otherwise have said (a "harness
// error: connection refused" skip, a silence read as a broadcast defect):
// how the target was found (refused or silent, the check's words), when it
// last answered, and the last bytes the case sent it. What the case itself
// found is kept as its first note.
func diedDuring(k *result.Case, o result.Outage, sp *caseSpan, inFlight int) {
	if k.Verdict != "" && k.Actual != "" {
		k.Notes = append([]string{"the case itself said (" + k.Verdict + "): " + k.Actual}, k.Notes...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the server stopped answering during this case (%s", o.What())
	if o.Detail != "" {
		fmt.Fprintf(&b, ": %s", o.Detail)
	}
	b.WriteString(")")
	if inFlight > 1 {
		fmt.Fprintf(&b, ", with %d other cases in flight", inFlight-1)
	}
	if sp != nil {
		when := "before the case started"
		if o.LastUpNS > sp.start {
			when = "while the case ran"
		}
		fmt.Fprintf(&b, "; it answered the reachability check at +%v, %s at +%v, and was found down at +%v",
			o.LastUpNS.Round(time.Millisecond), when, sp.start.Round(time.Millisecond), o.StartNS.Round(time.Millisecond))
	}
	if o.Exit != "" {
		fmt.Fprintf(&b, "; the process %s", o.Exit)
	}
	if len(o.Output) > 0 {
		fmt.Fprintf(&b, "; its last output: %s", strings.Join(lastLines(o.Output, 3), " | "))
	}
	if last := lastSent(k.Wire, 2); last != "" {
		b.WriteString("; last bytes sent to it: " + last)
	} else {
		b.WriteString("; the case sent it nothing")
	}
	k.Verdict = result.VerdictFail
	k.Expected = "the server keeps answering through the case (its reachability check after it)"
	k.Actual = b.String()
}

// lastSent describes the last n entries of wire sent to the target, oldest
// first: offset, note and up to 32 bytes of hex each.
func lastSent(wire []result.WireEntry, n int) string {
	var parts []string
	for i := len(wire) - 1; i >= 0 && len(parts) < n; i-- {
		e := wire[i]
		if e.Dir != result.DirSent {
			continue
		}
		b, err := hex.DecodeString(e.Hex)
		if err != nil {
			continue
		}
		h := fmt.Sprintf("% x", b[:min(len(b), 32)])
		if len(b) > 32 {
			h += fmt.Sprintf(" … (%d bytes)", len(b))
		}
		p := fmt.Sprintf("+%v", e.OffsetNS.Round(time.Microsecond))
		if e.Note != "" {
			p += " " + e.Note
		}
		parts = append(parts, p+" ["+h+"]")
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ", then ")
}
