package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

var repStart = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// repRunOf builds a one-step ("join") run result from latency samples (µs)
// and a failure count, as a shard would write it.
func repRunOf(t *testing.T, values []int64, fails int64, ths ...result.ThresholdResult) *result.Run {
	t.Helper()
	h := result.NewLatencyHistogram()
	sec := result.NewSecondHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if err := sec.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	lat, err := result.NewLatency(h)
	if err != nil {
		t.Fatal(err)
	}
	p, err := result.NewPoint(0, int64(len(values))+fails, fails, sec)
	if err != nil {
		t.Fatal(err)
	}
	r := result.NewRun()
	r.Scenario, r.Target, r.StartedAt, r.DurationNS = "smoke.yaml", "127.0.0.1:7777", repStart, time.Second
	n := int64(len(values))
	r.Steps = []result.Series{{Name: "join", Requests: n + fails, Successes: n, Failures: fails,
		FailuresByReason: map[string]int64{result.ReasonTimeout: fails}, Latency: lat, Uncorrected: lat}}
	r.Messages = []result.Series{}
	r.Totals = result.Totals{Requests: n + fails, Successes: n, Failures: fails,
		FailuresByReason: map[string]int64{result.ReasonTimeout: fails}}
	r.Violations, r.RateLimits, r.Malformed = []result.Violation{}, []result.RateLimitFinding{}, []result.MalformedFinding{}
	r.TimeSeries = []result.Point{p}
	r.Thresholds = append([]result.ThresholdResult{}, ths...)
	return r
}

func repSeq(lo, step int64, n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = lo + int64(i)*step
	}
	return v
}

func repWriteDoc(t *testing.T, dir, name string, doc any) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := reports.WriteJSON(f, doc); err != nil {
		t.Fatal(err)
	}
	return path
}

func repConformOf(verdicts ...string) *result.Conform {
	c := result.NewConform()
	c.Protocol, c.Target, c.StartedAt = "udplobby", "127.0.0.1:7777", repStart
	for i, v := range verdicts {
		c.Cases = append(c.Cases, result.Case{ID: "udp-lobby/5/" + string(rune('1'+i)), Section: "5", Description: "case",
			Requirement: "MUST", Level: result.LevelMust, Verdict: v,
			Wire: []result.WireEntry{{Dir: result.DirSent, Hex: "0100"}}})
	}
	return c
}

// repFixture writes the result files the report tests share.
type repFixture struct {
	dir                                      string
	base, same, slower, conf, confWorse, bad string
}

func newRepFixture(t *testing.T) repFixture {
	dir := t.TempDir()
	base := repRunOf(t, repSeq(1000, 10, 100), 0)
	slower := repRunOf(t, repSeq(1300, 13, 100), 0) // p99 +30%
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema_version": 99, "kind": "run"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return repFixture{
		dir:       dir,
		base:      repWriteDoc(t, dir, "base.json", base),
		same:      repWriteDoc(t, dir, "same.json", base),
		slower:    repWriteDoc(t, dir, "slower.json", slower),
		conf:      repWriteDoc(t, dir, "conf.json", repConformOf("pass", "pass", "fail")),
		confWorse: repWriteDoc(t, dir, "conf2.json", repConformOf("fail", "pass", "pass")),
		bad:       bad,
	}
}

func TestReportCommandLine(t *testing.T) {
	fx := newRepFixture(t)
	out := filepath.Join(fx.dir, "out.html")
	tests := []dispatchCase{
		{"no subcommand", []string{"report"}, exitUsage, "", "want a subcommand", true},
		{"unknown subcommand", []string{"report", "pdf"}, exitUsage, "", `unknown subcommand "pdf"`, true},
		{"html no files", []string{"report", "html"}, exitUsage, "", "at least one", true},
		{"html missing file", []string{"report", "html", filepath.Join(fx.dir, "nope.json")}, exitUsage, "", "nope.json", true},
		{"html newer schema", []string{"report", "html", fx.bad}, exitUsage, "", "schema_version 99", true},
		{"html label count", []string{"report", "html", fx.base, fx.same, "--labels", "a"}, exitUsage, "", "--labels has 1 name for 2 results", true},
		{"html to stdout", []string{"report", "html", fx.base}, exitOK, "<!DOCTYPE html>", "", false},
		{"html unknown flag after files", []string{"report", "html", fx.base, "--nope"}, exitUsage, "", "-nope", true},
		{"html to file", []string{"report", "html", fx.base, fx.slower, "-o", out}, exitOK, "", "", false},
		{"junit two files", []string{"report", "junit", fx.base, fx.same}, exitUsage, "", "exactly one", true},
		{"junit run", []string{"report", "junit", fx.base}, exitOK, "<testsuites", "", false},
		{"markdown two files", []string{"report", "markdown", fx.base, fx.same}, exitUsage, "", "exactly one", true},
		{"markdown newer schema", []string{"report", "markdown", fx.bad}, exitUsage, "", "schema_version 99", true},
		{"markdown run", []string{"report", "markdown", fx.base}, exitOK, "### lobbybench run: smoke.yaml", "", false},
		{"markdown conform", []string{"report", "markdown", fx.conf}, exitOK, "# Conformance: udplobby", "", false},
		{"markdown to a missing directory", []string{"report", "markdown", fx.base, "-o", filepath.Join(fx.dir, "nope", "r.md")}, exitUsage, "", "nope", true},
		{"compare one file", []string{"report", "compare", fx.base}, exitUsage, "", "want BASE.json and NEW.json", true},
		{"compare bad gate", []string{"report", "compare", fx.base, fx.same, "--max-p99-increase", "ten"}, exitUsage, "", "max-p99-increase", true},
		{"compare negative gate", []string{"report", "compare", fx.base, fx.same, "--max-error-rate-increase=-1pp"}, exitUsage, "", "max-error-rate-increase", true},
		{"compare bad format", []string{"report", "compare", fx.base, fx.same, "--format", "xml"}, exitUsage, "", "--format", true},
		{"compare mixed kinds", []string{"report", "compare", fx.base, fx.conf}, exitUsage, "", "conform result", true},
		{"compare same", []string{"report", "compare", fx.base, fx.same}, exitOK, "Gates: all passed", "", false},
		{"compare slower breaks p99 gate", []string{"report", "compare", fx.base, fx.slower}, exitThreshold, "FAIL join: p99_increase_pct", "", false},
		{"compare slower, under the floor", []string{"report", "compare", fx.base, fx.slower, "--min-delta", "1h"}, exitOK, "Not gated: join p99", "", false},
		{"compare negative floor", []string{"report", "compare", fx.base, fx.slower, "--min-delta=-1ms"}, exitUsage, "", "--min-delta", true},
		{"compare floor without unit", []string{"report", "compare", fx.base, fx.slower, "--min-delta", "5"}, exitUsage, "", "has no unit", true},
		{"compare slower, gate at 50%", []string{"report", "compare", fx.base, fx.slower, "--max-p99-increase", "50%"}, exitOK, "Gates: all passed", "", false},
		{"compare slower, gate off", []string{"report", "compare", "--max-p99-increase=off", fx.base, fx.slower}, exitOK, "Gates: all passed", "", false},
		{"compare slower, p50 gate", []string{"report", "compare", fx.base, fx.slower, "--max-p99-increase=off", "--max-p50-increase", "20"}, exitThreshold, "p50_increase_pct", "", false},
		{"compare conform newly failing", []string{"report", "compare", fx.conf, fx.confWorse}, exitThreshold, "newly failing", "", false},
		{"compare conform gate off", []string{"report", "compare", fx.conf, fx.confWorse, "--fail-on-new-failures=false"}, exitOK, "Gates: all passed", "", false},
		{"merge conform", []string{"report", "merge", fx.conf}, exitUsage, "", "is a conform result; only run results, or capacity shards' documents, merge", true},
		{"merge nothing", []string{"report", "merge"}, exitUsage, "", "at least one", true},
	}
	for _, sub := range []string{"html", "junit", "markdown", "compare", "merge"} {
		tests = append(tests, dispatchCase{sub + " --help", []string{"report", sub, "--help"}, exitOK, "Usage: lobbybench report " + sub, "", false})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", repTrunc(stdout), tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if tt.oneLine && strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
		})
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Runs side by side", ">base<", ">slower<"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("out.html lacks %q", want)
		}
	}
}

func repTrunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestReportJUnitIsXML(t *testing.T) {
	fx := newRepFixture(t)
	for _, in := range []string{fx.base, fx.conf} {
		out := filepath.Join(fx.dir, "junit.xml")
		if code, _, stderr := runCLI(t, "report", "junit", in, "-o", out); code != exitOK {
			t.Fatalf("%s: exit %d: %s", in, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Tests int `xml:"tests,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testsuite>testcase"`
		}
		if err := xml.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if in == fx.conf && (v.Tests != 3 || len(v.Cases) != 3) {
			t.Errorf("conform junit: %d tests, %d cases, want 3", v.Tests, len(v.Cases))
		}
	}
}

// repPartialDocs writes an interrupted run and an incomplete one (a
// --workers worker left no result) into dir and returns their paths.
func repPartialDocs(t *testing.T, dir string) (interrupted, incomplete string) {
	t.Helper()
	i := repRunOf(t, repSeq(1000, 10, 100), 0)
	i.ShardRuns = []result.ShardRun{{Shard: "0/1", Interrupted: true}}
	n := repRunOf(t, repSeq(1000, 10, 100), 0)
	n.Incomplete = []string{"worker 1/2 died (signal: killed): the result is incomplete"}
	return repWriteDoc(t, dir, "int.json", i), repWriteDoc(t, dir, "inc.json", n)
}

// TestReportMarkdown: `report markdown` renders a run JSON with
// WriteRunMarkdown and a conform JSON with WriteConformMarkdown, to -o
// FILE as to stdout, and a partial run leads with its headline.
func TestReportMarkdown(t *testing.T) {
	fx := newRepFixture(t)
	intr, inc := repPartialDocs(t, fx.dir)
	for _, tt := range []struct {
		name, in, first string
	}{
		{"run", fx.base, "### lobbybench run: smoke.yaml"},
		{"conform", fx.conf, "# Conformance: udplobby"},
		{"interrupted", intr, "**INTERRUPTED · the run was stopped after 1s"},
		{"incomplete", inc, "**INCOMPLETE · the load was not all generated (1 worker left no result)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(fx.dir, tt.name+".md")
			if code, _, stderr := runCLI(t, "report", "markdown", tt.in, "-o", out); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(string(data), "\n"); !strings.HasPrefix(first, tt.first) {
				t.Errorf("first line %q, want %q", first, tt.first)
			}
			_, stdout, _ := runCLI(t, "report", "markdown", tt.in)
			if stdout != string(data) {
				t.Errorf("stdout differs from -o FILE")
			}
		})
	}
}

// TestReportCompareHeadline: `report compare` leads with the headline of
// a partial side, interrupted or incomplete, whichever side it is, and
// breaks the interrupted_runs gate.
func TestReportCompareHeadline(t *testing.T) {
	fx := newRepFixture(t)
	intr, inc := repPartialDocs(t, fx.dir)
	for _, tt := range []struct {
		name, base, new, first string
	}{
		{"interrupted new", fx.base, intr, "INTERRUPTED new run: the run was stopped"},
		{"interrupted base", intr, fx.base, "INTERRUPTED base run: the run was stopped"},
		{"incomplete new", fx.base, inc, "INCOMPLETE new run: the load was not all generated"},
		{"incomplete base", inc, fx.base, "INCOMPLETE base run: the load was not all generated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "report", "compare", tt.base, tt.new)
			if code != exitThreshold {
				t.Errorf("exit %d, want %d: %s", code, exitThreshold, stderr)
			}
			if first, _, _ := strings.Cut(stdout, "\n"); !strings.HasPrefix(first, tt.first) {
				t.Errorf("first line %q, want %q", first, tt.first)
			}
			if !strings.Contains(stdout, "interrupted_runs") {
				t.Errorf("the interrupted_runs gate is not broken:\n%s", stdout)
			}
		})
	}
}

func TestReportCompareJSON(t *testing.T) {
	fx := newRepFixture(t)
	code, stdout, stderr := runCLI(t, "report", "compare", fx.base, fx.slower, "--format", "json")
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d: %s", code, exitThreshold, stderr)
	}
	var c result.Comparison
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(c.Steps) != 1 || c.Steps[0].P99ChangePct < 25 || len(c.Breaches) != 1 {
		t.Errorf("comparison = %+v", c)
	}
}

// TestReportCompareOldIDs: a conform baseline stored by a build before the
// case ids were renamed ("udp/5/1") pairs with today's result
// ("udp-lobby/5/1"): a verdict that did not change is no change, one that
// did is reported under today's id, and no case counts as new. The
// rendering of the old result shows today's ids too.
func TestReportCompareOldIDs(t *testing.T) {
	dir := t.TempDir()
	old := repConformOf("pass", "fail", "pass")
	for i := range old.Cases {
		old.Cases[i].ID = strings.Replace(old.Cases[i].ID, "udp-lobby/", "udp/", 1)
	}
	base := repWriteDoc(t, dir, "old.json", old)
	if data, err := os.ReadFile(base); err != nil || !strings.Contains(string(data), `"id": "udp/5/1"`) {
		t.Fatalf("the baseline does not hold the old ids (%v)", err)
	}
	for _, tt := range []struct {
		name     string
		new      *result.Conform
		code     int
		changed  []string
		newlyBad []string
	}{
		{"same verdicts", repConformOf("pass", "fail", "pass"), exitOK, nil, nil},
		{"one newly failing", repConformOf("pass", "fail", "fail"), exitThreshold, []string{"udp-lobby/5/3"}, []string{"udp-lobby/5/3"}},
		{"one fixed", repConformOf("pass", "pass", "pass"), exitOK, []string{"udp-lobby/5/2"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			newPath := repWriteDoc(t, dir, "new.json", tt.new)
			code, stdout, stderr := runCLI(t, "report", "compare", base, newPath, "--format", "json")
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			var c result.ConformComparison
			if err := json.Unmarshal([]byte(stdout), &c); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			ids := func(chs []result.CaseChange) []string {
				var out []string
				for _, ch := range chs {
					if ch.BaseVerdict == "" {
						t.Errorf("%s counted as a new case: the old id did not pair", ch.ID)
					}
					out = append(out, ch.ID)
				}
				return out
			}
			if got := ids(c.Changed); !slices.Equal(got, tt.changed) {
				t.Errorf("changed %v, want %v", got, tt.changed)
			}
			if got := ids(c.NewlyFailing); !slices.Equal(got, tt.newlyBad) {
				t.Errorf("newly failing %v, want %v", got, tt.newlyBad)
			}
		})
	}
	code, stdout, stderr := runCLI(t, "report", "markdown", base)
	if code != exitOK || !strings.Contains(stdout, "udp-lobby/5/2") || strings.Contains(stdout, "udp/5/2") {
		t.Errorf("report markdown of the old result: exit %d, ids not today's:\n%s%s", code, stdout, stderr)
	}
}

// TestReportMerge splits one set of samples over three shards: the merge
// must give the percentiles of a single histogram of every sample, and
// thresholds must be judged on the merged data (each shard passes
// "errors.count < 10" with 4 errors; the merge has 12 and fails).
func TestReportMerge(t *testing.T) {
	dir := t.TempDir()
	all := repSeq(100, 37, 3000)
	th := []result.ThresholdResult{
		{Name: "errors.count < 10", Metric: "errors.count", Op: "<", Limit: 10, Observed: 4, Pass: true},
		{Name: "join.p99 < 1s", Metric: "join.p99", Op: "<", Limit: 1, Observed: 0.1, Pass: true},
		{Name: "sessions.completed >= 0", Metric: "sessions.completed", Op: ">=", Limit: 0, Pass: true},
	}
	var paths []string
	for i := range 3 {
		var part []int64
		for j := i; j < len(all); j += 3 {
			part = append(part, all[j])
		}
		paths = append(paths, repWriteDoc(t, dir, "shard-"+string(rune('0'+i))+".json", repRunOf(t, part, 4, th...)))
	}
	out := filepath.Join(dir, "merged.json")
	code, _, stderr := runCLI(t, append(append([]string{"report", "merge"}, paths...), "-o", out)...)
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d (errors.count fails on the merge): %s", code, exitThreshold, stderr)
	}
	if !strings.Contains(stderr, "3 shards, 3012 requests, 12 failed") || !strings.Contains(stderr, "thresholds 2/3 passed") {
		t.Errorf("summary line: %q", stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := result.ReadRun(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := result.NewLatency(repHistOf(t, all))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Steps[0].Latency
	got.Hist, want.Hist = "", ""
	if got != want {
		t.Errorf("merged latency %+v, want single-run %+v", got, want)
	}
	if m.Shards != 3 || m.Totals.Failures != 12 || m.TimeSeries[0].Requests != 3012 {
		t.Errorf("shards %d, failures %d, second 0 requests %d", m.Shards, m.Totals.Failures, m.TimeSeries[0].Requests)
	}
	var names []string
	for _, r := range m.Thresholds {
		names = append(names, r.Name)
		if r.Metric != "errors.count" && !r.Pass {
			t.Errorf("threshold %q failed on the merge: %+v", r.Name, r)
		}
		if r.Metric == "errors.count" && (r.Pass || r.Observed != 12) {
			t.Errorf("errors.count threshold = %+v, want failed with 12 observed", r)
		}
	}
	if !slices.Equal(names, []string{"errors.count < 10", "join.p99 < 1s", "sessions.completed >= 0"}) {
		t.Errorf("thresholds %v", names)
	}

	// To stdout, and without thresholds: exit 0.
	plain := repWriteDoc(t, dir, "plain.json", repRunOf(t, all[:10], 0))
	code, stdout, stderr := runCLI(t, "report", "merge", plain, plain)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if m, err := result.ReadRun(strings.NewReader(stdout)); err != nil || m.Totals.Requests != 20 {
		t.Errorf("stdout merge: %v, %+v", err, m)
	}
}

func repHistOf(t *testing.T, values []int64) *hdrhistogram.Histogram {
	t.Helper()
	h := result.NewLatencyHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestReportMergeShardCoverage(t *testing.T) {
	dir := t.TempDir()
	shard := func(name, id string) string {
		r := repRunOf(t, repSeq(100, 7, 50), 0)
		r.ShardRuns = []result.ShardRun{{Shard: id}}
		return repWriteDoc(t, dir, name, r)
	}
	s0, s1, s2 := shard("s0.json", "0/3"), shard("s1.json", "1/3"), shard("s2.json", "2/3")
	u0, u1 := shard("u0.json", "0/1"), shard("u1.json", "0/1")
	tests := []struct {
		name  string
		files []string
		warns []string // substrings of stderr; none when empty
		code  int
		miss  []string // the merged document's missing_shards
	}{
		{"complete", []string{s0, s1, s2}, nil, exitOK, nil},
		{"unsharded runs are not checked", []string{u0, u1}, nil, exitOK, nil},
		{"duplicate", []string{s0, s1, s2, s1}, []string{"shard 1/3 is in both " + s1 + " and " + s1 + ": its load is counted twice"}, exitOK, nil},
		// A merge lacking a shard covers part of the run: it is never a
		// plain pass, in its exit code or its headline.
		{"missing", []string{s2, s0}, []string{"shard 1/3 missing", "INCOMPLETE · the load was not all generated (shard 1/3 missing from the merge)"}, exitIncomplete, []string{"1/3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"report", "merge"}, tc.files...), "-o", filepath.Join(dir, "m.json"))
			code, _, stderr := runCLI(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "m.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				MissingShards []string `json:"missing_shards"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || !slices.Equal(doc.MissingShards, tc.miss) {
				t.Errorf("missing_shards %q (%v), want %q", doc.MissingShards, err, tc.miss)
			}
			if len(tc.warns) == 0 && strings.Contains(stderr, "warning") {
				t.Errorf("unexpected warning: %s", stderr)
			}
			for _, w := range tc.warns {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}
