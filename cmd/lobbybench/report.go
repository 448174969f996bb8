package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/capacity"
	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// reportUsage lists the subcommands: one per format with a report
// subcommand (reports.Formats), then compare and merge.
func reportUsage() string {
	var list strings.Builder
	for _, f := range reports.Formats() {
		if f.Report != nil {
			list.WriteString(f.Report.List)
		}
	}
	return `Usage: lobbybench report <subcommand> [flags] FILE...

Reads the JSON results written by 'run --json', 'conform --json' and
'capacity --json'.

Subcommands:
` + list.String() + `  compare BASE.json NEW.json      deltas and regression gates (exit 4 when
                                  a gate is broken; an increase the
                                  harness's send lag explains is not judged)
  merge SHARD.json... [-o FILE]   exact merge of 'run --shard i/n' results,
                                  thresholds evaluated again on the merge;
                                  or of 'capacity --shard i/n' documents,
                                  step by step, each step judged again

Flags may follow the file names. Run 'lobbybench report <subcommand> --help'
for a subcommand's flags.`
}

// reportSub is one report subcommand.
type reportSub struct {
	name, summary, usage string
	flags                func(fs *flag.FlagSet) func(e *env, args []string) int
}

// reportSubs are the report subcommands in the order help lists them:
// one per format with a report subcommand, then compare and merge.
func reportSubs() []reportSub {
	var subs []reportSub
	for _, f := range reports.Formats() {
		if f.Report != nil {
			subs = append(subs, reportSub{f.Name, f.Report.Summary, f.Report.Usage, reportFormatFlags(f)})
		}
	}
	return append(subs,
		reportSub{"compare", "compare two results against regression gates", reportCompareUsage, reportCompareFlags},
		reportSub{"merge", "merge the shards of one sharded run, or of a sharded capacity ladder, exactly", reportMergeUsage, reportMergeFlags})
}

func init() {
	register("report", command{
		summary:     "render, merge and compare JSON results",
		usage:       reportUsage(),
		subcommands: true,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			return func(_ context.Context, e *env, args []string) int {
				subs := reportSubs()
				names := make([]string, len(subs))
				for i, s := range subs {
					names[i] = s.name
				}
				want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
				if len(args) == 0 {
					return usageErr(e, "report", "want a subcommand: %s", want)
				}
				name := args[0]
				i := slices.Index(names, name)
				if i < 0 {
					return usageErr(e, "report", "unknown subcommand %q%s", name, didYouMean(name, names, "want "+want))
				}
				sub := subs[i]
				full := "report " + name
				sfs := flag.NewFlagSet("lobbybench "+full, flag.ContinueOnError)
				sfs.SetOutput(io.Discard)
				run := sub.flags(sfs)
				pos, err := parseFlags(sfs, args[1:])
				if err != nil {
					if errors.Is(err, flag.ErrHelp) {
						printCommandHelp(e.stdout, full, command{summary: sub.summary, usage: sub.usage}, sfs)
						return exitOK
					}
					return usageErr(e, full, "%v (run 'lobbybench %s --help')", err, full)
				}
				return run(e, pos)
			}
		},
	})
}

// readResult reads one result file: a *result.Run, *result.Conform or
// *result.Capacity, a conform result with the case ids of older builds
// renamed to today's.
func readResult(path string) (result.Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := result.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c, ok := v.(*result.Conform); ok {
		conformance.UpgradeIDs(c)
	}
	return v, nil
}

// reportFormatFlags is `report NAME` for format f: it renders stored
// results in f to -o FILE or stdout; exactly one result, or with f.Many
// several, labelled (--labels, default their file names) under --title.
func reportFormatFlags(f reports.Format) func(fs *flag.FlagSet) func(*env, []string) int {
	return func(fs *flag.FlagSet) func(*env, []string) int {
		out := fs.String("o", "", "write to `FILE` (default stdout)")
		verbose := fs.Bool("verbose", false, "conform results: keep passing cases' wire logs (left out by default, as conform leaves them out of its --junit and --html; the Markdown never shows them)")
		var title, labels *string
		if f.Many {
			title = fs.String("title", "", "page `title` (default \"lobbybench report\")")
			labels = fs.String("labels", "", "comma-separated column `names`, one per result (default: file names)")
		}
		return func(e *env, args []string) int {
			cmd := "report " + f.Name
			opts := reports.Options{TrimPassingWire: !*verbose}
			switch {
			case !f.Many && len(args) != 1:
				return usageErr(e, cmd, "want exactly one RESULT.json, got %d", len(args))
			case len(args) == 0:
				return usageErr(e, cmd, "want at least one RESULT.json")
			case f.Many:
				opts.Title = *title
				if *labels != "" {
					opts.Labels = strings.Split(*labels, ",")
					if len(opts.Labels) != len(args) {
						return usageErr(e, cmd, "--labels has %s for %s", words.Count(len(opts.Labels), "name"), words.Count(len(args), "result"))
					}
				} else if len(args) > 1 {
					for _, a := range args {
						opts.Labels = append(opts.Labels, strings.TrimSuffix(filepath.Base(a), ".json"))
					}
				}
			}
			docs := make([]result.Doc, 0, len(args))
			for _, a := range args {
				d, err := readResult(a)
				if err != nil {
					return usageErr(e, cmd, "%v", err)
				}
				if len(args) > 1 && result.KindOf(d) == result.KindCapacity {
					return usageErr(e, cmd, "%s is a capacity result: it renders alone, not beside other results", a)
				}
				docs = append(docs, d)
			}
			if err := writeOutput(e, *out, func(w io.Writer) error { return f.Write(w, opts, docs...) }); err != nil {
				return usageErr(e, cmd, "%v", err)
			}
			return exitOK
		}
	}
}

const reportCompareUsage = `Usage: lobbybench report compare BASE.json NEW.json [gate flags]

Compares NEW against BASE (two runs, two conform results, or two capacity
searches) and prints a table of deltas: per step p50 and p99 (in percent of
BASE) and error rate (in percentage points), rules violated in NEW only; for
conform results the cases whose verdict changed; for capacity searches the
sustainable load's change and the loads whose step verdict changed. Exit 4
when a gate is broken, 0 otherwise.

Every gate is on by default with the value shown; 'off' disables one:
  lobbybench report compare base.json new.json --max-p99-increase 5% \
      --max-error-rate-increase off --fail-on-new-violations=false

A latency gate breaks only when the increase is over its percentage, over
--min-delta in absolute terms, and beyond the sampling noise: the 99%
order-statistic intervals of the two percentiles, read from the runs' HDR
histograms, must not overlap; and beyond what the harness's own lateness
explains: an increase no larger than NEW's send lag at that percentile is
"not judged: harness-bound" (a late harness is not a slow server).
Increases spared by any of these are listed as "Not gated". A nightly job comparing against a stored baseline should set
--min-delta (e.g. 1ms) and a percentage its machine's run-to-run spread
allows (see docs/report.md).

An interrupted BASE or NEW always breaks the comparison (gate
interrupted_runs): a partial run says nothing about a regression. So does
a capacity search that ended TARGET DOWN or harness-bound.

Capacity: --max-capacity-drop (default: the larger --precision of the two
searches, since a bisection only knows the limit within it) limits how far
the sustainable load may fall.`

// pctFlag is a gate limit in percent ("10%" or "10") or "off".
type pctFlag struct {
	v    float64
	on   bool
	unit string // "%" or "pp"
}

func (p *pctFlag) String() string {
	if p == nil || !p.on {
		return "off"
	}
	return strconv.FormatFloat(p.v, 'f', -1, 64) + p.unit
}

func (p *pctFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "off" {
		p.on = false
		return nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, p.unit), 64)
	if err != nil || v < 0 || v != v {
		return fmt.Errorf("%q is not a non-negative number of %s (e.g. 10%s) or off", s, map[string]string{"%": "percent", "pp": "percentage points"}[p.unit], p.unit)
	}
	p.v, p.on = v, true
	return nil
}

// capDropFlag is --max-capacity-drop: a percentage, off, or (not given)
// the searches' own precision.
type capDropFlag struct {
	pct   pctFlag
	given bool
}

func (c *capDropFlag) String() string {
	if c == nil || !c.given {
		return "precision"
	}
	return c.pct.String()
}

func (c *capDropFlag) Set(s string) error {
	if err := c.pct.Set(s); err != nil {
		return err
	}
	c.given = true
	return nil
}

// compareOptions is what report compare's flags say, filled by parsing
// them (addCompareFlags): check refuses a bad value, gates turns the
// rest into the gates result.Compare takes.
type compareOptions struct {
	p99, p50, errRate pctFlag
	newViol, newFail  bool
	capDrop           capDropFlag
	format            string
	minDelta          time.Duration
}

// addCompareFlags declares report compare's flags on fs, each filling its
// field of the returned options.
func addCompareFlags(fs *flag.FlagSet) *compareOptions {
	c := &compareOptions{
		p99:     pctFlag{v: 10, on: true, unit: "%"},
		p50:     pctFlag{unit: "%"},
		errRate: pctFlag{v: 0.5, on: true, unit: "pp"},
		capDrop: capDropFlag{pct: pctFlag{unit: "%"}},
	}
	fs.Var(&c.p99, "max-p99-increase", "largest allowed p99 increase of any step, in `percent` of BASE, or off")
	fs.Var(&c.p50, "max-p50-increase", "largest allowed p50 increase of any step, in `percent` of BASE, or off")
	fs.Var(&c.errRate, "max-error-rate-increase", "largest allowed error-rate increase of any step and of the run, in percentage `points` (0.5pp), or off")
	fs.BoolVar(&c.newViol, "fail-on-new-violations", true, "break when NEW violates a protocol rule BASE did not")
	fs.BoolVar(&c.newFail, "fail-on-new-failures", true, "conform: break when a case fails in NEW that did not fail in BASE")
	fs.Var(&c.capDrop, "max-capacity-drop", "capacity: largest allowed drop of the sustainable load, in `percent` of BASE, or off (default: the larger --precision of the two searches)")
	fs.StringVar(&c.format, "format", "table", "output `format`: table or json")
	fs.DurationVar(&c.minDelta, "min-delta", 0, "latency gates: increases of at most `D` (e.g. 1ms) never break, whatever their percentage")
	return c
}

// check refuses a bad value or argument count, naming the flag.
func (c *compareOptions) check(args []string) error {
	switch {
	case c.minDelta < 0:
		return fmt.Errorf("--min-delta %v must not be negative", c.minDelta)
	case len(args) != 2:
		return fmt.Errorf("want BASE.json and NEW.json, got %s", words.Count(len(args), "file"))
	case c.format != "table" && c.format != "json":
		return fmt.Errorf("--format %q: want table or json", c.format)
	}
	return nil
}

// gates is the gates the flags set, in the order the comparison lists
// them (a capacity comparison's own drop gate is capacityGate's).
func (c *compareOptions) gates() []result.Gate {
	floor := c.minDelta.Microseconds()
	var gates []result.Gate
	if c.p99.on {
		gates = append(gates, result.Gate{Metric: result.GateP99IncreasePct, Max: c.p99.v, MinDeltaUS: floor})
	}
	if c.p50.on {
		gates = append(gates, result.Gate{Metric: result.GateP50IncreasePct, Max: c.p50.v, MinDeltaUS: floor})
	}
	if c.errRate.on {
		gates = append(gates, result.Gate{Metric: result.GateErrorRateIncreasePP, Max: c.errRate.v})
	}
	if c.newViol {
		gates = append(gates, result.Gate{Metric: result.GateNewViolations, Max: 0})
	}
	if c.newFail {
		gates = append(gates, result.Gate{Metric: result.GateNewlyFailingCases, Max: 0})
	}
	return gates
}

// capacityGate is the gate of a capacity comparison's sustainable load:
// by default the larger precision of the two searches, else
// --max-capacity-drop (off: a drop is at most 100 %).
func (c *compareOptions) capacityGate(b, n *result.Capacity) result.Gate {
	g := result.CapacityDropGate(b, n)
	switch {
	case !c.capDrop.given:
	case c.capDrop.pct.on:
		g.Max = c.capDrop.pct.v
	default:
		g.Max = 100
	}
	return g
}

func reportCompareFlags(fs *flag.FlagSet) func(*env, []string) int {
	c := addCompareFlags(fs)
	return func(e *env, args []string) int {
		const cmd = "report compare"
		if err := c.check(args); err != nil {
			return usageErr(e, cmd, "%v", err)
		}
		base, err := readResult(args[0])
		if err != nil {
			return usageErr(e, cmd, "%v", err)
		}
		nw, err := readResult(args[1])
		if err != nil {
			return usageErr(e, cmd, "%v", err)
		}
		if bk, nk := result.KindOf(base), result.KindOf(nw); bk != nk {
			return usageErr(e, cmd, "%s is a %s result but %s is a %s result", args[0], bk, args[1], nk)
		}
		ok, res, table, err := c.compare(base, nw)
		if err != nil {
			return usageErr(e, cmd, "%v", err)
		}
		if c.format == "json" {
			table = func(w io.Writer) error { return reports.WriteJSON(w, res) }
		}
		if err := table(e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "lobbybench %s: %v\n", cmd, err)
			return exitUsage
		}
		if !ok {
			return exitThreshold
		}
		return exitOK
	}
}

// compare compares two results of one kind by the flags' gates: whether
// every gate held, the comparison and its table.
func (c *compareOptions) compare(base, nw result.Doc) (ok bool, res any, table func(io.Writer) error, err error) {
	gates := c.gates()
	switch b := base.(type) {
	case *result.Run:
		cmp, err := result.Compare(b, nw.(*result.Run), gates)
		if err != nil {
			return false, nil, nil, err
		}
		return cmp.OK(), cmp, func(w io.Writer) error { return reports.WriteCompareTable(w, cmp) }, nil
	case *result.Conform:
		cmp, err := result.CompareConform(b, nw.(*result.Conform), gates)
		if err != nil {
			return false, nil, nil, err
		}
		return cmp.OK(), cmp, func(w io.Writer) error { return reports.WriteConformCompareTable(w, cmp) }, nil
	case *result.Capacity:
		n := nw.(*result.Capacity)
		cmp, err := result.CompareCapacity(b, n, append(gates, c.capacityGate(b, n)))
		if err != nil {
			return false, nil, nil, err
		}
		return cmp.OK(), cmp, func(w io.Writer) error { return reports.WriteCapacityCompareTable(w, cmp) }, nil
	}
	return false, nil, nil, fmt.Errorf("cannot compare a %s result", result.KindOf(base))
}

const reportMergeUsage = `Usage: lobbybench report merge SHARD.json... [-o FILE]

Merges the results of 'lobbybench run --shard i/n' exactly: HDR histograms
merged (so merged percentiles equal those of one run over the same
samples), counters summed, time series aligned by second. When the shards
carry threshold results, the thresholds are evaluated again on the merged
data with the scenario's evaluator. Writes JSON to FILE or stdout and a
one-line summary to stderr, with a warning when a shard of an i/n run is
given twice or missing.

Exit codes: 0 merged; 2 unreadable or mismatched input; 4 a threshold
failed on the merged data, or a step was tried and never succeeded in any
shard; 8 every threshold that failed is harness-bound (the harness's own
send lag explains it: INCONCLUSIVE). The merged file is written in every
case but 2.

The documents of a sharded capacity ladder ('capacity --shard i/n', one
per shard) merge the same way, step by step: the k-th step of every shard
is the ladder's k-th load, its runs are merged exactly and the merged
step is judged again as 'capacity' judges a step; the ladder's result
(sustainable load, what broke first, the rule x load matrix) is built
from the merged steps and written as a capacity document. A shard of the
n that no file gives, or a step a shard did not play, is said on stderr
("coverage: ...") and in the document, and such a step is judged
harness-bound (its load was not all offered), never PASS. Exit codes are
then those of 'capacity': 0 a limit found, 1 no load held, 7 the target
went down, 8 harness-bound, a share missing, or a load broke below one
that held, 2 files that are not the
shards of one ladder.`

func reportMergeFlags(fs *flag.FlagSet) func(*env, []string) int {
	out := fs.String("o", "", "write the merged JSON to `FILE` (default stdout)")
	return func(e *env, args []string) int {
		const cmd = "report merge"
		if len(args) == 0 {
			return usageErr(e, cmd, "want at least one SHARD.json")
		}
		runs := make([]*result.Run, 0, len(args))
		var caps []*result.Capacity
		firstKind := ""
		for _, a := range args {
			d, err := readResult(a)
			if err != nil {
				return usageErr(e, cmd, "%v", err)
			}
			kind := result.KindOf(d)
			if firstKind == "" {
				firstKind = kind
			}
			switch {
			case kind == result.KindConform:
				return usageErr(e, cmd, "%s is a conform result; only run results, or capacity shards' documents, merge", a)
			case kind != firstKind:
				return usageErr(e, cmd, "%s is a %s result, %s a %s result: runs merge with runs, capacity shards with capacity shards", a, kind, args[0], firstKind)
			case kind == result.KindCapacity:
				caps = append(caps, d.(*result.Capacity))
			default:
				runs = append(runs, d.(*result.Run))
			}
		}
		if len(caps) > 0 {
			return mergeCapacity(e, caps, args, *out)
		}
		merged, warns, thOK, err := engine.MergeShards(runs, args)
		for _, w := range warns {
			fmt.Fprintf(e.stderr, "lobbybench %s: warning: %s\n", cmd, w)
		}
		if err != nil {
			return usageErr(e, cmd, "%v", err)
		}
		if err := writeOutput(e, *out, func(w io.Writer) error { return reports.WriteJSON(w, merged) }); err != nil {
			return usageErr(e, cmd, "%v", err)
		}
		passed := 0
		for _, r := range merged.Thresholds {
			if r.Pass {
				passed++
			}
		}
		fmt.Fprintf(e.stderr, "lobbybench %s: %s, %s, %d failed, %s; thresholds %d/%d passed\n", cmd,
			words.Count(merged.Shards, "shard"), words.Count(merged.Totals.Requests, "request"), merged.Totals.Failures, words.Count(merged.Totals.Violations, "violation"), passed, len(merged.Thresholds))
		if hl := merged.Headline(); hl.Partial() || merged.Totals.Violations > 0 || len(merged.StepsNeverSucceeded()) > 0 || hl.Status == result.StatusInconclusive {
			fmt.Fprintf(e.stderr, "lobbybench %s: %s\n", cmd, hl.Text)
		}
		// The merge exits as the run it makes up would have: a merge of
		// shards that lacks one, or holds a late or interrupted one, or
		// one that saw the target down, is never a plain pass.
		return runExit(merged, merged.Interrupted(), thOK)
	}
}

// mergeCapacity is `report merge` of the shards' documents of a sharded
// capacity ladder (capacity.Merge): the merged ladder's JSON to out (or
// stdout), what it lacks and its headline to stderr, and the exit code
// `capacity` would give it.
func mergeCapacity(e *env, caps []*result.Capacity, names []string, out string) int {
	const cmd = "report merge"
	merged, warns, err := capacity.Merge(caps, names)
	for _, w := range warns {
		fmt.Fprintf(e.stderr, "lobbybench %s: warning: %s\n", cmd, w)
	}
	if err != nil {
		return usageErr(e, cmd, "%v", err)
	}
	if err := writeOutput(e, out, func(w io.Writer) error { return reports.WriteCapacityJSON(w, merged) }); err != nil {
		return usageErr(e, cmd, "%v", err)
	}
	for _, c := range merged.Coverage {
		fmt.Fprintf(e.stderr, "lobbybench %s: coverage: %s\n", cmd, c)
	}
	fmt.Fprintf(e.stderr, "lobbybench %s: %s of a %d-load ladder, %s merged: %s\n", cmd, words.Count(merged.Shards, "shard"),
		len(merged.Settings.Loads), words.Count(len(merged.Steps), "step"), merged.Headline().Text)
	return capacityExit(merged)
}
