package reports

import (
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// fmtLat renders figure us of distribution l: "-" when l holds no sample
// (a step with no success), never a "0µs" that looks measured.
func fmtLat(l result.Latency, us int64) string {
	if l.Count == 0 {
		return "-"
	}
	return words.US(us)
}

// fmtLag renders a send-lag distribution as "p50/p99/max" ("-" when no
// request recorded one, as in documents older than send lag).
func fmtLag(l result.Latency) string {
	if l.Count == 0 {
		return "-"
	}
	return words.US(l.P50US) + "/" + words.US(l.P99US) + "/" + words.US(l.MaxUS)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func sortedReasons(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// WriteRunTable writes a terminal summary of run, every line at most
// TermWidth columns: totals, per step and per message type a table of
// counts and one of latency (corrected p50, p90, p99 and max, the
// uncorrected p99 and the send lag p99 beside them; p99.9 and the send
// lag's p50 and max are in the JSON and the HTML), failures by reason,
// violated rules, findings and thresholds. What about calls (each given w)
// add the caller's lines about the run (run's harness figures), which go
// with the run's warnings (writeRunWarnings) before the thresholds, so
// that the verdict stays the last line.
func WriteRunTable(w io.Writer, run *result.Run, about ...func(io.Writer)) error {
	ew := &errWriter{w: w}
	writeRunTableHead(ew, run)
	writeSeriesTables(ew, run)
	writeLobbyTable(ew, run)
	writeRunTableTarget(ew, run)
	writeRunTableFindings(ew, run)
	for _, f := range about {
		f(ew)
	}
	writeRunWarnings(ew, run)
	writeRunTableVerdict(ew, run)
	return ew.err
}

// writeRunTableHead writes the partial run's headline first, what ran
// and the totals.
func writeRunTableHead(ew *errWriter, run *result.Run) {
	t := run.Totals
	if hl := run.Headline(); hl.Partial() || len(run.StepsNeverSucceeded()) > 0 {
		// First, before any figure: what follows is a partial run
		// (interrupted, or not all its load generated), or one with a
		// step that has no successful sample.
		writeWrapped(ew, hl.Text, 2)
		fmt.Fprintln(ew)
	}
	writeWrapped(ew, fmt.Sprintf("Run %s against %s: %s, %s", words.OrDash(run.Scenario), words.OrDash(run.Target), run.DurationNS.Round(time.Millisecond), words.Count(run.Shards, "shard")), 2)
	// The totals sentence in two lines, each a whole clause.
	head := strings.TrimSuffix(totalsLine(run), ", "+totalsTail(t))
	writeWrapped(ew, head, 2)
	tail := totalsTail(t)
	writeWrapped(ew, strings.ToUpper(tail[:1])+tail[1:], 2)
	fmt.Fprintln(ew)
}

// writeSeriesTables writes, for the steps and for the message types, a
// table of counts and one of latency, and the steps that never succeeded.
func writeSeriesTables(ew *errWriter, run *result.Run) {
	for _, part := range []struct {
		title, col string
		rows       []result.Series
	}{{"Steps", "STEP", run.Steps}, {"Messages", "MESSAGE", run.Messages}} {
		if len(part.rows) == 0 {
			continue
		}
		var counts, lat [][]string
		for _, s := range part.rows {
			l := s.Latency
			counts = append(counts, []string{s.Name, itoa(s.Requests), itoa(s.Successes), itoa(s.Failures), itoa(s.Cut), words.Pct(s.ErrorRate()), itoa(s.Retries), itoa(s.Dropped)})
			lag := "-"
			if s.SendLag.Count > 0 {
				lag = words.US(s.SendLag.P99US)
			}
			lat = append(lat, []string{s.Name, fmtLat(l, l.P50US), fmtLat(l, l.P90US), fmtLat(l, l.P99US), fmtLat(l, l.MaxUS), fmtLat(s.Uncorrected, s.Uncorrected.P99US), lag})
		}
		fmt.Fprintf(ew, "%s (latency from the intended send time):\n", part.title)
		writeColumns(ew, 2, "lrrrrrrr", []string{part.col, "REQS", "OK", "FAIL", "CUT", "ERR%", "RETRY", "DROP"}, counts)
		fmt.Fprintln(ew)
		writeColumns(ew, 2, "lrrrrrr", []string{part.col, "p50", "p90", "p99", "MAX", "p99 uncorr", "lag p99"}, lat)
		if part.title == "Steps" {
			for _, line := range NeverSucceeded(run) {
				writeWrapped(ew, line, 2)
			}
		}
		fmt.Fprintln(ew)
	}
}

// writeRunTableTarget writes the target's outages, what its process cost
// and the recovery drill.
func writeRunTableTarget(ew *errWriter, run *result.Run) {
	if len(run.Outages) > 0 {
		fmt.Fprintln(ew, "Target outages (watchdog):")
		for i, line := range OutageLines(run) {
			writeWrapped(ew, "  "+line, 4)
			if out := run.Outages[i].Output; len(out) > 0 {
				fmt.Fprintln(ew, "  its last output:")
				for _, l := range out {
					writeWrapped(ew, "    | "+l, 6)
				}
			}
		}
		fmt.Fprintln(ew)
	}
	if lines := TargetLines(run); len(lines) > 0 {
		fmt.Fprintln(ew, "Target process (what the load cost the server):")
		for _, line := range lines {
			writeWrapped(ew, "  "+line, 4)
		}
		fmt.Fprintln(ew)
	}
	if run.Drill != nil {
		fmt.Fprintln(ew, "Recovery drill:")
		for _, line := range run.Drill.Lines() {
			writeWrapped(ew, "  "+line, 4)
		}
		fmt.Fprintln(ew)
	}
}

// writeRunTableFindings writes the failures by reason, violations,
// malformed and rate-limit findings.
func writeRunTableFindings(ew *errWriter, run *result.Run) {
	t := run.Totals
	if len(t.FailuresByReason) > 0 {
		fmt.Fprintln(ew, "Failures by reason:")
		header, rows := reasonTable(t, "REASON", "COUNT", "WHILE DOWN", "WHILE UP")
		writeColumns(ew, 2, "lrrr", header, rows)
		fmt.Fprintln(ew)
	}
	if len(run.Violations) > 0 {
		fmt.Fprintln(ew, "Protocol violations:")
		writeColumns(ew, 2, "lrl", []string{"RULE", "COUNT", "FIRST PACKET"}, violationRows(run.Violations))
		fmt.Fprintln(ew)
	}
	if len(run.Malformed) > 0 {
		fmt.Fprintln(ew, "Malformed packets:")
		writeColumns(ew, 2, "lrrr", []string{"KIND", "SENT", "UNEXPECTED REPLIES", "LIVENESS KEPT"}, malformedRows(run.Malformed))
		fmt.Fprintln(ew)
	}
	if len(run.RateLimits) > 0 {
		fmt.Fprintln(ew, "Rate limits:")
		writeColumns(ew, 2, "lrrrrrr", []string{"SOURCE", "LIMIT/S", "SENT", "ACCEPTED", "LIMITED", "OTHERS p99", "OTHERS ERRORS"}, rateLimitRows(run.RateLimits))
		for _, f := range run.RateLimits {
			if f.Note != "" { // what the limit was found by, and what the first refusal got
				writeWrapped(ew, "  "+f.Source+": "+f.Note, 4)
			}
		}
		fmt.Fprintln(ew)
	}
}

// writeRunTableVerdict writes the thresholds and, last, the headline.
func writeRunTableVerdict(ew *errWriter, run *result.Run) {
	if len(run.Thresholds) > 0 {
		var rows [][]string
		for _, th := range run.Thresholds {
			rows = append(rows, []string{th.Name, thresholdVerdict(run, th, "pass", "FAIL", "HARNESS-BOUND"), th.ObservedText(), th.LimitText()})
		}
		fmt.Fprintln(ew, "Thresholds:")
		writeColumns(ew, 2, "llrl", []string{"THRESHOLD", "RESULT", "OBSERVED", "LIMIT"}, rows)
	}
	if hl := run.Headline(); hl.Text != "" {
		// The verdict again where the eye ends up.
		fmt.Fprintln(ew)
		writeWrapped(ew, hl.Text, 2)
	}
}

// totalsLine is the run's totals in one sentence: requests (and their
// rate over the run), outcomes, retries, dropped starts, violations and
// sessions.
func totalsLine(run *result.Run) string {
	t := run.Totals
	rps := 0.0
	if secs := run.DurationNS.Seconds(); secs > 0 {
		rps = float64(t.Requests) / secs
	}
	return fmt.Sprintf("Requests %d (%.1f/s), ok %d, %s, cut %d, retries %d, ", t.Requests, rps, t.Successes, t.FailedText(), t.Cut, t.Retries) +
		totalsTail(t)
}

// totalsTail is the end of totalsLine: dropped starts, violations and
// sessions.
func totalsTail(t result.Totals) string {
	return fmt.Sprintf("dropped starts %d, violations %d, sessions %d started / %d finished", t.Dropped, t.Violations, t.SessionsStarted, t.SessionsFinished)
}

// The rows of the run's smaller tables, shared by the terminal and the
// Markdown so both show the same facts in the same units.

// reasonRows: reason, count, sorted by reason.
// reasonTable is the failures-by-reason table of t with the given
// column names: reason and count, and when the target was down during
// the run (Totals.FailuresWhileDown) the count split into while down and
// while up.
func reasonTable(t result.Totals, reason, count, down, up string) ([]string, [][]string) {
	if t.FailuresWhileDown == nil {
		return []string{reason, count}, reasonRows(t.FailuresByReason)
	}
	var rows [][]string
	for _, k := range sortedReasons(t.FailuresByReason) {
		d := t.FailuresWhileDown[k]
		rows = append(rows, []string{k, itoa(t.FailuresByReason[k]), itoa(d), itoa(max(t.FailuresByReason[k]-d, 0))})
	}
	return []string{reason, count, down, up}, rows
}

// OutageLines says each of the run's outages in one line: "down at
// +1.2 s (refused: dial tcp …: connection refused), last seen up at
// +1.0 s, not back by the end; during: create, join; failures: 9
// conn_refused".
func OutageLines(run *result.Run) []string {
	var out []string
	for _, o := range run.Outages {
		line := fmt.Sprintf("down at +%s (%s", words.Seconds(o.StartNS), o.Kind)
		if o.Detail != "" {
			line += ": " + o.Detail
		}
		line += fmt.Sprintf("), last seen up at +%s, ", words.Seconds(o.LastUpNS))
		if o.Back {
			line += fmt.Sprintf("back at +%s after %s", words.Seconds(o.EndNS), words.Seconds(o.EndNS-o.StartNS))
		} else {
			line += "not back by the end"
		}
		if o.Exit != "" {
			line += "; " + o.Exit
		}
		if o.Fault != "" {
			line += "; fault: " + o.Fault
		}
		if len(o.During) > 0 {
			line += "; during: " + strings.Join(o.During, ", ")
		}
		if len(o.Failures) > 0 {
			line += "; failures: " + result.ReasonsText(o.Failures)
		}
		if len(o.FailuresAfter) > 0 {
			line += "; after it came back, for the state the restart lost: " + result.ReasonsText(o.FailuresAfter)
		}
		out = append(out, line)
	}
	return out
}

func reasonRows(m map[string]int64) [][]string {
	var rows [][]string
	for _, k := range sortedReasons(m) {
		rows = append(rows, []string{k, itoa(m[k])})
	}
	return rows
}

// violationRows: rule, count, first packet (hex, cut at 32 digits).
func violationRows(vs []result.Violation) [][]string {
	var rows [][]string
	for _, v := range vs {
		sample := ""
		if len(v.Samples) > 0 {
			sample = truncHex(v.Samples[0].Packet, 32)
		}
		rows = append(rows, []string{v.Rule, itoa(v.Count), sample})
	}
	return rows
}

// malformedRows: kind, sent, unexpected replies, liveness kept/checked.
func malformedRows(ms []result.MalformedFinding) [][]string {
	var rows [][]string
	for _, m := range ms {
		rows = append(rows, []string{m.Kind, itoa(m.Sent), itoa(m.UnexpectedReplies), m.LivenessText()})
	}
	return rows
}

// rateLimitRows: source, limit/s, sent, accepted, limited, the other
// sources' p99 before -> while limited, their errors.
func rateLimitRows(rs []result.RateLimitFinding) [][]string {
	var rows [][]string
	for _, r := range rs {
		rows = append(rows, []string{r.Source, strconv.FormatFloat(r.ObservedLimitPerSec, 'f', 1, 64), itoa(r.Sent), itoa(r.Accepted), itoa(r.Limited),
			words.US(r.OtherSourcesP99BeforeUS) + " -> " + words.US(r.OtherSourcesP99AfterUS), itoa(r.OtherSourcesErrors)})
	}
	return rows
}

func truncHex(h string, n int) string {
	if len(h) <= n {
		return h
	}
	return h[:n] + "…"
}

// writeGates writes the gate verdicts of a comparison: all passed, or
// each breach.
func writeGates(w io.Writer, breaches []result.Breach) {
	if len(breaches) == 0 {
		fmt.Fprintln(w, "Gates: all passed")
		return
	}
	fmt.Fprintf(w, "Gates: %d broken\n", len(breaches))
	for _, b := range breaches {
		writeWrapped(w, fmt.Sprintf("  FAIL %s", b), 4)
	}
}

// errWriter keeps the first write error so renderers check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// ConformTextOptions shape WriteConformText.
type ConformTextOptions struct {
	// Quiet prints only failures, warnings, the skipped cases when the
	// run has a skip budget (Conform.MaxSkips), the outages and the count
	// line (which counts the cases not run).
	Quiet bool
	// Verbose also prints the notes of passing cases.
	Verbose bool
	// MaxWireBytes bounds the hex shown per wire entry (0 means 128).
	MaxWireBytes int
	// MaxWireEntries bounds the wire entries shown per failure (0 means
	// 40); the JSON keeps them all.
	MaxWireEntries int
}

// WriteConformText writes the terminal report of c: the run's notes, one
// line per case (✔ pass, ✘ fail, ! warn, i info, - skip, ⊘ not run) grouped by
// document section, with the requirement, expected and actual under each
// failure and warning, the hex wire log under each failure (Autobahn's wire
// log), and a final count line. The verdict (Conform.Headline) is the
// caller's to print.
func WriteConformText(w io.Writer, c *result.Conform, o ConformTextOptions) error {
	ew := &errWriter{w: w}
	if !o.Quiet {
		fmt.Fprintf(ew, "lobbybench conform: %s %s", c.Protocol, c.Target)
		if c.Strict {
			fmt.Fprint(ew, " (strict)")
		}
		fmt.Fprintln(ew)
		for _, n := range c.Notes {
			fmt.Fprintf(ew, "  %s\n", n)
		}
	}
	writeOutagesText(ew, c.Outages)
	section := ""
	for _, k := range c.Cases {
		// Quiet keeps what can fail the run: failures, warnings, and the
		// skips when a skip budget (--max-skips) counts them.
		if o.Quiet && k.Verdict != result.VerdictFail && k.Verdict != result.VerdictWarn && !(k.Verdict == result.VerdictSkip && c.MaxSkips != nil) {
			continue
		}
		if k.Section != section {
			section = k.Section
			fmt.Fprintf(ew, "\n%s\n", section)
		}
		fmt.Fprintf(ew, "  %s %-9s %s", verdictSymbol(k.Verdict), k.ID, k.Description)
		if k.Verdict == result.VerdictWarn || k.Verdict == result.VerdictInfo || k.Verdict == result.VerdictSkip || k.Verdict == result.VerdictNotRun {
			fmt.Fprintf(ew, " [%s]", k.Verdict)
		}
		fmt.Fprintln(ew)
		writeCaseDetailText(ew, &k, o)
	}
	fmt.Fprintf(ew, "\n%s\n", c.CountLine())
	return ew.err
}

// writeCaseDetailText writes what goes under case k's line: the
// requirement, expected and actual (and the wire log of a failure) under
// a failure or warning, the reason of a skip or a case not run, the
// observations of an info case, the notes of a pass under o.Verbose.
func writeCaseDetailText(ew *errWriter, k *result.Case, o ConformTextOptions) {
	switch k.Verdict {
	case result.VerdictFail, result.VerdictWarn:
		fmt.Fprintf(ew, "      requirement (%s): %s\n", strings.ToUpper(k.Level), k.Requirement)
		if k.Rule != "" {
			fmt.Fprintf(ew, "      rule:     %s\n", k.Rule)
		}
		fmt.Fprintf(ew, "      expected: %s\n", k.Expected)
		fmt.Fprintf(ew, "      actual:   %s\n", k.Actual)
		for _, n := range k.Notes {
			fmt.Fprintf(ew, "      note:     %s\n", n)
		}
		if k.Verdict == result.VerdictFail {
			writeWireText(ew, k.Wire, k.WireElided, o.MaxWireBytes, o.MaxWireEntries)
		}
	case result.VerdictSkip:
		fmt.Fprintf(ew, "      skipped:  %s\n", k.Actual)
	case result.VerdictNotRun:
		fmt.Fprintf(ew, "      %s\n", k.Actual)
	case result.VerdictInfo:
		if k.Actual != "" {
			fmt.Fprintf(ew, "      %s\n", k.Actual)
		}
		for _, n := range k.Notes {
			fmt.Fprintf(ew, "      %s\n", n)
		}
	case result.VerdictPass:
		if o.Verbose {
			for _, n := range k.Notes {
				fmt.Fprintf(ew, "      %s\n", n)
			}
		}
	}
}

// writeOutagesText writes one block per outage: when the target was found
// down and how, when it last answered, the cases in flight, an owned
// process's exit and last output lines, and whether it came back.
func writeOutagesText(w io.Writer, os []result.Outage) {
	for _, o := range os {
		fmt.Fprintf(w, "\ntarget down at +%v (%s), last answered at +%v", o.StartNS.Round(time.Millisecond), o.What(), o.LastUpNS.Round(time.Millisecond))
		if o.Back {
			fmt.Fprintf(w, ", back at +%v", o.EndNS.Round(time.Millisecond))
		}
		fmt.Fprintln(w)
		if o.Detail != "" {
			fmt.Fprintf(w, "  check:  %s\n", o.Detail)
		}
		if len(o.During) > 0 {
			fmt.Fprintf(w, "  during: %s\n", strings.Join(o.During, ", "))
		}
		if ct := o.CulpritText(); ct != "" {
			fmt.Fprintf(w, "  re-run alone: %s: %s\n", strings.Join(o.ReRunAlone, ", "), ct)
		}
		if o.Exit != "" {
			fmt.Fprintf(w, "  exit:   %s\n", o.Exit)
		}
		for _, l := range o.Output {
			fmt.Fprintf(w, "  output: %s\n", l)
		}
	}
}

// verdictSymbol is a verdict's terminal mark: ✔ pass, ✘ fail, ! warn,
// i info, - skip, ⊘ not run.
func verdictSymbol(v string) string {
	switch v {
	case result.VerdictPass:
		return "✔"
	case result.VerdictFail:
		return "✘"
	case result.VerdictWarn:
		return "!"
	case result.VerdictInfo:
		return "i"
	case result.VerdictSkip:
		return "-"
	case result.VerdictNotRun:
		return "⊘"
	}
	return "?"
}

// writeWireText writes a failure's wire log: per entry its direction,
// offset, addresses, size and note, then its bytes in hex, 16 a line.
func writeWireText(w io.Writer, wire []result.WireEntry, elided, max, maxEntries int) {
	if len(wire) == 0 {
		return
	}
	if max <= 0 {
		max = 128
	}
	if maxEntries <= 0 {
		maxEntries = 40
	}
	if len(wire) > maxEntries {
		elided += len(wire) - maxEntries
		wire = wire[:maxEntries]
	}
	fmt.Fprintln(w, "      wire:")
	for _, e := range wire {
		from, to, arrow := e.Local, e.Peer, "→"
		if e.Dir == result.DirRecv {
			from, to, arrow = e.Peer, e.Local, "←"
		}
		note := ""
		if e.Note != "" {
			note = "  " + e.Note
		}
		d, err := hex.DecodeString(e.Hex)
		if err != nil {
			fmt.Fprintf(w, "        %s +%.3fms %s → %s (not hex: %v)%s\n", arrow, float64(e.OffsetNS)/float64(time.Millisecond), from, to, err, note)
			continue
		}
		fmt.Fprintf(w, "        %s +%.3fms %s → %s (%s)%s\n", arrow, float64(e.OffsetNS)/float64(time.Millisecond), from, to, words.Count(len(d), "byte"), note)
		cut := 0
		if len(d) > max {
			cut = len(d) - max
			d = d[:max]
		}
		for i := 0; i < len(d); i += 16 {
			fmt.Fprintf(w, "          %04x  % x\n", i, d[i:min(i+16, len(d))])
		}
		if cut > 0 {
			fmt.Fprintf(w, "          … %d more %s\n", cut, words.Plural(cut, "byte"))
		}
	}
	if elided > 0 {
		fmt.Fprintf(w, "        … %d more %s (--json keeps up to %d per case)\n", elided, words.Plural(elided, "entry"), result.MaxCaseWireEntries)
	}
}
