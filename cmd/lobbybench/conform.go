package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

const conformUsage = `Usage: lobbybench conform --target HOST:PORT [flags]

Runs the numbered conformance suite against a lobby server and tells, rule
by rule, where it departs from the spec, with the bytes to prove it. The
spec is docs/protocols/ in the lobbybench repository, and every case cites
the section it checks there: udp-lobby/5/2 is the second case of
udp-lobby.md §5 LOBBY_ROOM_LIST; inst/… checks the game-instance handshake,
udp-lobby.md §15; tcp-lobby/… the sections of tcp-lobby.md; leviathan/…
those of leviathan.md. The HTML report links them under --docs-base. The
ids of older builds, udp/…
and tcp/…, still select the same cases in --cases, and stored results using
them compare with today's (report compare). A broken MUST fails, a broken SHOULD
warns (--strict makes warnings fail), informational cases only report
figures, and a case whose precondition is not met is skipped with the
reason.

Requests are paced and spread over the --source-addrs pool (127.0.0.1-32 for
a loopback target), so a server that rate-limits each IP to ~100 requests/s
gets the same verdicts; silence is retried once from another address before
it counts.

A CI job should set --max-skips: a suite whose cases were mostly skipped
(a target that refused their preconditions) otherwise passes with little
checked. The skip count heads every format. Passing cases' wire logs are
kept out of the HTML and JUnit unless --verbose (the JSON has them all).

The suite watches the target's life: its reachability check runs after
every case (a watchdog probes it while the concurrent cases run). When the
target stops answering (refused: nothing listens; silent: it answers
nothing), the cases in flight fail with that, no further case starts (each
is "not run"), and every format leads with TARGET DOWN.

With --target-cmd 'COMMAND ARGS…' lobbybench owns the server: it starts the
command (/bin/sh -c, exec before the server's command, its own process group), waits until it
answers the protocol's reachability check at --target (up to
--target-ready-timeout), and stops it at the end or on Ctrl-C (SIGTERM,
SIGKILL after 5s; a third Ctrl-C kills it at once). When it dies, the
outage and the failed case say how ("killed by SIGABRT") with its last 10
lines of output; a hung one is killed
(SIGKILL). It is then restarted and the suite goes on. When several cases
were in flight as it died, each is re-run alone on a fresh server (at most 8
re-runs per crash, 32 per suite): the one that kills it alone fails with the
death, the others take their solo verdicts, and the headline names the
culprit or says none kills it alone. The JSON's target_process has its CPU,
RSS, threads and open files; the terminal sums them up in one line.

Exit codes: 0 all passed, 1 a case failed (or warned, with --strict, or
more cases were skipped than --max-skips allows, or not one case passed),
2 usage (also a bad --target-cmd, --target-ready-timeout or --target-log,
and a --target-cmd command not found), 3 target unreachable (also: the
--target-cmd server could not be brought up: exited at once, never
answered, port already in use),
5 interrupted (every written file then leads with INTERRUPTED), 7 the target stopped answering during the suite (every
written file leads with TARGET DOWN; 7 even when also interrupted, and when
an owned server crashed and was restarted).`

// maxFillBound caps --max-fill: a pool-filling case never creates more
// rooms than this, whatever the range given.
const maxFillBound = 4096

type conformFlags struct {
	target, protocol, cases string
	caseIDs, sections       string // --case, --section
	protocolSet             bool   // --protocol was given (or a case file set it)
	sources, docsBase       string
	allowRedirect           string
	// protoOpts makes the protocols' own flags (--header,
	// --instance-ports) into the Config.Options of a protocol.
	protoOpts                    func(protocol string) (any, error)
	outs                         *outputs
	list, strict, quiet, verbose bool
	timeout, poolWait            time.Duration
	maxSkips, maxFill            int
	owned                        *ownedTargetFlags
}

func init() {
	register("conform", command{
		summary: "run the numbered conformance suite against a lobby server",
		usage:   conformUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			f := addConformFlags(fs)
			return func(ctx context.Context, e *env, args []string) int { return runConform(ctx, e, f, args) }
		},
	})
}

// addConformFlags declares conform's flags on fs, each filling its field
// of the returned options.
func addConformFlags(fs *flag.FlagSet) *conformFlags {
	f := &conformFlags{}
	fs.StringVar(&f.target, "target", "", "`host:port` of the lobby to check (required)")
	f.protocol = conformance.DefaultProtocol()
	fs.Var(protocolFlag{&f.protocol, &f.protocolSet}, "protocol", "protocol: "+strings.Join(conformance.Protocols(), ", ")+" (when not given: a case file's of --cases, else the default)")
	f.protoOpts = conformance.AddProtocolFlags(fs)
	fs.StringVar(&f.cases, "cases", "", casesHelp)
	fs.StringVar(&f.caseIDs, "case", "", caseHelp)
	fs.StringVar(&f.sections, "section", "", sectionHelp)
	fs.BoolVar(&f.list, "list", false, "print the selected cases and exit without sending anything")
	fs.BoolVar(&f.strict, "strict", false, "count warnings (broken SHOULDs) as failures")
	fs.DurationVar(&f.timeout, "timeout", conformance.DefaultTimeout, "wait for one reply")
	fs.IntVar(&f.maxFill, "max-fill", conformance.DefaultMaxFill, fmt.Sprintf("at most `N` rooms (Leviathan: players) a case creates to reach the server's limit: filling an --instance-ports pool of P ports takes up to P+1 (at most %d)", maxFillBound))
	fs.DurationVar(&f.poolWait, "pool-wait", conformance.DefaultPoolWait, "when the server has no free instance for a case's room, wait this long for its cleanup before skipping (0: skip at once)")
	f.outs = outputFlags(fs, result.KindConform)
	allowRedirectFlag(fs, &f.allowRedirect)
	fs.StringVar(&f.sources, "source-addrs", "", "source `addresses` to spread the requests over: a list and/or ranges, e.g. 127.0.0.1-127.0.0.32 (default that for a loopback target)")
	fs.StringVar(&f.docsBase, "docs-base", "", "`URL` (or path) where docs/protocols of the lobbybench repository is published: the --html report then links each cited section there (default: sections shown as text, no link)")
	fs.BoolVar(&f.quiet, "quiet", false, "print only failures, warnings (and, with --max-skips, the skipped cases) and the count line")
	fs.BoolVar(&f.verbose, "verbose", false, "also print what passing cases observed, and keep their wire logs in the HTML and JUnit")
	f.owned = addOwnedTargetFlags(fs, false)
	fs.IntVar(&f.maxSkips, "max-skips", -1, "fail (exit 1) when more than `N` cases are skipped: a hollow run (default: no limit)")
	return f
}

func runConform(ctx context.Context, e *env, f *conformFlags, args []string) (code int) {
	const cmd = "conform"
	if len(args) > 0 {
		return usageErr(e, cmd, "unexpected argument %q", args[0])
	}
	cfg, err := f.config()
	if err != nil {
		return usageErrLines(e, cmd, err)
	}
	if f.list {
		return listConform(e, f, cfg)
	}
	if err := f.checkRun(ctx, &cfg); err != nil {
		return usageErr(e, cmd, "%v", err)
	}
	// The output files are written once the suite has a result; a bad
	// path is a usage error, found before anything is sent.
	if err := f.outs.check(e); err != nil {
		return usageErr(e, cmd, "%v", err)
	}
	defer f.outs.settle(e, cmd, &code, f.notStarted)
	var tgt *ownedTarget
	if f.owned.command("") != "" {
		var code int
		if tgt, code = startConformTarget(ctx, e, f, &cfg); tgt == nil {
			return code
		}
		defer tgt.Stop() // also when interrupted: never left running
	}
	stopBar := conformBar(e, f.quiet, &cfg)
	doc, err := conformance.Run(ctx, cfg)
	stopBar()
	if tgt != nil {
		stopConformTarget(tgt, doc)
	}
	if err != nil {
		return conformFailed(ctx, e, err)
	}
	return reportConform(ctx, e, f, doc)
}

// conformFailed is the exit code of a suite that has no result, err
// saying why; an unreachable target's or an interruption's why is kept
// for the result files (env.notStarted, outputs.settle).
func conformFailed(ctx context.Context, e *env, err error) int {
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "lobbybench conform: interrupted\n")
		e.notStarted = "stopped before the suite began (" + err.Error() + ")"
		return exitInterrupted
	case errors.Is(err, conformance.ErrUnreachable):
		fmt.Fprintf(e.stderr, "lobbybench conform: %v\n", err)
		e.notStarted = err.Error()
		return exitUnreachable
	}
	return usageErr(e, "conform", "%v", err)
}

// notStarted is the conform document of a suite that measured nothing,
// why saying why.
func (f *conformFlags) notStarted(why *result.NotStarted) result.Doc {
	doc := result.NewConform()
	doc.NotStarted, doc.Protocol, doc.Target, doc.StartedAt = why, f.protocol, f.target, time.Now()
	return doc
}

// config is the conformance.Config the flags say, before the target is
// checked (a listing needs none): each error names its flag.
func (f *conformFlags) config() (conformance.Config, error) {
	files, patterns := splitCases(f.cases)
	caseFiles, err := f.loadCases(files)
	if err != nil {
		return conformance.Config{}, err
	}
	cfg := conformance.Config{Target: f.target, Protocol: f.protocol, Strict: f.strict, Timeout: f.timeout, MaxFill: f.maxFill}
	if cfg.Options, err = f.protoOpts(f.protocol); err != nil {
		return cfg, err
	}
	if err := userCases(&cfg, caseFiles); err != nil {
		return cfg, err
	}
	if cfg.Patterns, err = casePatterns(patterns); err != nil {
		return cfg, err
	}
	if err := f.pick(&cfg); err != nil {
		return cfg, err
	}
	if f.sources != "" {
		if cfg.Sources, err = netrange.ParseAddrs(f.sources); err != nil {
			return cfg, fmt.Errorf("--source-addrs: %v", err)
		}
	}
	if err := reports.CheckDocsBase(f.docsBase); err != nil {
		return cfg, fmt.Errorf("--docs-base: %v", err)
	}
	switch {
	case f.maxSkips < -1:
		return cfg, fmt.Errorf("--max-skips %d must be 0 or more", f.maxSkips)
	case f.maxFill < 1 || f.maxFill > maxFillBound:
		return cfg, fmt.Errorf("--max-fill %d is outside 1-%d", f.maxFill, maxFillBound)
	case f.timeout <= 0:
		return cfg, fmt.Errorf("--timeout: must be positive, got %v", f.timeout)
	case f.poolWait < 0:
		return cfg, fmt.Errorf("--pool-wait: must be 0 or more, got %v", f.poolWait)
	case f.poolWait == 0:
		cfg.PoolWait = -1 // Config's 0 is the default
	default:
		cfg.PoolWait = f.poolWait
	}
	return cfg, nil
}

// casePatterns reads --cases: comma-separated patterns, each checked.
func casePatterns(cases string) ([]string, error) {
	if cases == "" {
		return nil, nil
	}
	var patterns []string
	for _, p := range strings.Split(cases, ",") {
		if err := conformance.ValidPattern(p); err != nil {
			return nil, fmt.Errorf("--cases: %v", err)
		}
		patterns = append(patterns, strings.TrimSpace(p))
	}
	return patterns, nil
}

// checkRun checks what running the suite needs beyond a listing: the
// target (and the server --target-cmd starts there), --allow-redirect, and
// at least one case selected. It completes cfg.
func (f *conformFlags) checkRun(ctx context.Context, cfg *conformance.Config) error {
	if err := f.owned.check(); err != nil {
		return err
	}
	if err := f.owned.need(f.owned.command(""), f.target); err != nil {
		return err
	}
	if f.target == "" {
		return errors.New("--target is required (host:port)")
	}
	if err := target.Check(f.target); err != nil {
		return fmt.Errorf("--target: %v", err) // the message run gives
	}
	var err error
	if cfg.AllowRedirect, err = allowRedirect(ctx, f.allowRedirect); err != nil {
		return err
	}
	return f.checkSelected(*cfg)
}

// checkSelected reports cfg's first problem, or that --cases selects none
// of its protocol's cases.
func (f *conformFlags) checkSelected(cfg conformance.Config) error {
	if errs := cfg.Validate(); len(errs) > 0 {
		return errs[0]
	}
	if len(cfg.Selected()) == 0 {
		return fmt.Errorf("--cases: no %s case matches %q", cfg.Protocol, f.cases)
	}
	return nil
}

// listConform prints the cases cfg selects (--list), sending nothing.
func listConform(e *env, f *conformFlags, cfg conformance.Config) int {
	if f.target == "" {
		cfg.Target = "127.0.0.1:1" // listing needs no target
	}
	if err := f.checkSelected(cfg); err != nil {
		return usageErr(e, "conform", "%v", err)
	}
	cases := cfg.Selected()
	if err := conformance.WriteList(e.stdout, cases); err != nil {
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "\n%s\nSections cite %s/ in the lobbybench repository.\n", words.Count(len(cases), "case"), result.ProtocolDocsDir)
	return exitOK
}

// reportConform prints the suite's result doc, writes the requested
// files and picks the exit code.
func reportConform(ctx context.Context, e *env, f *conformFlags, doc *result.Conform) int {
	if f.maxSkips >= 0 {
		doc.MaxSkips = &f.maxSkips
	}
	doc.Interrupted = ctx.Err() != nil
	hl := doc.Headline()
	if hl.Status == result.StatusInterrupted || hl.Status == result.StatusTargetDown {
		fmt.Fprintf(e.stdout, "%s\n\n", hl.Text) // first: a partial suite follows
	}
	reports.WriteConformText(e.stdout, doc, reports.ConformTextOptions{Quiet: f.quiet, Verbose: f.verbose})
	if doc.TargetProcess != nil {
		fmt.Fprintln(e.stdout, doc.TargetProcess.Line())
	}
	fmt.Fprintln(e.stdout, hl.Text)
	opts := reports.Options{HTMLOptions: reports.HTMLOptions{Title: "lobbybench conform: " + doc.Protocol + " " + doc.Target, DocsBase: f.docsBase}, TrimPassingWire: !f.verbose}
	wrote := f.outs.write(e, "conform", doc, opts) // a failed write turns only a pass into 9: withOutputs
	if hl.Status == result.StatusTargetDown {
		fmt.Fprintf(e.stderr, "lobbybench conform: target down: %s\n", doc.TargetDown())
		return exitTargetDown
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	if doc.SkipsOverBudget() {
		fmt.Fprintf(e.stderr, "lobbybench conform: %s skipped, over --max-skips %d\n", words.Count(doc.Summary().Skip, "case"), f.maxSkips)
	}
	if hl.Status == result.StatusFail {
		return exitFailed
	}
	return withOutputs(exitOK, wrote)
}

// conformBar shows the suite's progress on a terminal (progressMode's
// choice, as run's bar), on stderr: the cases done of the total and the
// section of the last, with the Ctrl-C notes above it. The returned stop
// removes it; piped output, and every report, never has it.
func conformBar(e *env, quiet bool, cfg *conformance.Config) (stop func()) {
	if progressMode(e, quiet) != engine.ProgressBar {
		return func() {}
	}
	bar := reports.NewConformProgress(e.stderr, len(cfg.Selected()))
	cfg.Progress = bar.Case
	notes := &barNotes{stderr: e.stderr}
	notes.SetAbove(bar.Above())
	e.setNotes(notes)
	return func() {
		notes.SetAbove(nil)
		bar.Stop()
	}
}

// startConformTarget starts --target-cmd (startOwnedTarget) and points
// cfg's hooks at it: its end is reported with its exit and last output,
// and it is restarted after an outage, killed first when it hangs. On
// failure it returns nil and the exit code.
func startConformTarget(ctx context.Context, e *env, f *conformFlags, cfg *conformance.Config) (*ownedTarget, int) {
	const cmd = "conform"
	ready, err := cfg.ReachCheck()
	if err != nil {
		return nil, usageErr(e, cmd, "%v", err)
	}
	e.setStopNote(func() string { return "ending the cases in flight" })
	tgt, code := startOwnedTarget(ctx, e, cmd, f.owned, f.owned.command(""), f.target, ready)
	if tgt == nil {
		return nil, code
	}
	cfg.TargetExit = tgt.p.Ended
	cfg.RestartTarget = func(ctx context.Context) error {
		err := restartHung(ctx, tgt.p)
		if err != nil {
			fmt.Fprintf(e.stderr, "lobbybench conform: could not restart --target-cmd: %v\n", err)
		}
		return err
	}
	return tgt, 0
}

// restartHung restarts p after an outage: a process that still runs
// then is hung, and is killed (SIGKILL to its group) before the command
// is started again and waited for.
func restartHung(ctx context.Context, p *owned.Process) error {
	exited := p.Exited()
	select {
	case <-exited:
	default:
		if err := p.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, owned.ErrNotRunning) {
			return err
		}
		select {
		case <-exited:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return fmt.Errorf("--target-cmd: process %d not reaped 30s after SIGKILL", p.PID())
		}
	}
	return p.Restart(ctx)
}

// stopConformTarget stops the owned server at the end of the suite and
// puts its telemetry into doc (nil when the suite did not start).
func stopConformTarget(tgt *ownedTarget, doc *result.Conform) {
	tgt.Stop()
	if doc != nil {
		doc.TargetProcess = tgt.Snapshot()
	}
}
