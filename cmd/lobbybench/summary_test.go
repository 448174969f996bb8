package main

import (
	"flag"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

func TestCounterLines(t *testing.T) {
	tests := []struct {
		name     string
		counters []string
		want     []string
	}{
		{"none", nil, nil},
		{"grouped in order", []string{"udp-lobby.replies.SERVER_HELLO 3", "udp-lobby.replies.LOBBY_ROOM_LIST 2", "udp-lobby.requests.CLIENT_HELLO 3", "udp-lobby.sessions 4"},
			[]string{"udp-lobby.replies: SERVER_HELLO=3 LOBBY_ROOM_LIST=2", "udp-lobby.requests: CLIENT_HELLO=3", "udp-lobby: sessions=4"}},
		{"a group met again joins its line", []string{"a.x 1", "b.y 2", "a.z 3"}, []string{"a: x=1 z=3", "b: y=2"}},
		{"no dot", []string{"sessions 4"}, []string{"sessions=4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := counterLines(tt.counters); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("counterLines(%q) = %q, want %q", tt.counters, got, tt.want)
			}
		})
	}
}

// assertNarrow fails for each line of out wider than reports.TermWidth
// runes (the report's text has no wide runes).
func assertNarrow(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > reports.TermWidth {
			t.Errorf("stdout line %d is %d columns wide, over %d:\n%s", i+1, n, reports.TermWidth, l)
		}
	}
}

// firstParagraph is out up to its first blank line, its folded lines
// joined again with single spaces.
func firstParagraph(out string) string {
	p, _, _ := strings.Cut(strings.TrimSpace(out), "\n\n")
	return strings.Join(strings.Fields(p), " ")
}

// harnessSummary is the engine summary of a run with harness figures h,
// checked narrow: as printed, and its words joined by single spaces.
func harnessSummary(t *testing.T, h result.Harness) (out, flat string) {
	t.Helper()
	var b strings.Builder
	res := &engine.Result{Run: &result.Run{}, Engine: &engine.Info{Protocol: "udp-lobby", Shard: "0/1", Harness: h}}
	writeEngineSummary(&b, res)
	out = b.String()
	assertNarrow(t, out)
	return out, strings.Join(strings.Fields(out), " ")
}

// TestEngineSummaryStray: stray datagrams (other programs' traffic, not
// the target's) are named in the Harness lines when there were any, and
// only then.
func TestEngineSummaryStray(t *testing.T) {
	for _, tt := range []struct {
		stray int64
		want  string // "" = no stray line
	}{
		{0, ""},
		{1, "1 stray datagram from ports the target never used"},
		{70, "70 stray datagrams from ports the target never used"},
	} {
		out, flat := harnessSummary(t, result.Harness{StrayDatagrams: tt.stray})
		switch {
		case tt.want == "" && strings.Contains(flat, "stray"):
			t.Errorf("stray %d: a stray line:\n%s", tt.stray, out)
		case tt.want != "" && !strings.Contains(flat, tt.want+", not replies to any request"):
			t.Errorf("stray %d: no %q in:\n%s", tt.stray, tt.want, out)
		}
	}
}

// TestEngineSummaryFlows: datagrams a virtual flow's client had no room
// for (the harness's loss) and datagrams for flows no client held are
// named in the Harness lines when there were any, and only then.
func TestEngineSummaryFlows(t *testing.T) {
	for _, tt := range []struct {
		h    result.Harness
		want []string // "" = no flows line
	}{
		{result.Harness{Flows: "virtual"}, nil},
		{result.Harness{Flows: "virtual", FlowsDropped: 3}, []string{"3 datagrams for virtual flows whose clients had 256 unread already: lost in the harness, not by the target (flows_dropped)"}},
		{result.Harness{Flows: "virtual", FlowsUnrouted: 1}, []string{"1 datagram for virtual flows no client held: replies after their clients closed (flows_unrouted)"}},
	} {
		out, flat := harnessSummary(t, tt.h)
		if len(tt.want) == 0 && strings.Contains(flat, "flows_") {
			t.Errorf("%+v: a flows line:\n%s", tt.h, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(flat, w) {
				t.Errorf("%+v: no %q in:\n%s", tt.h, w, out)
			}
		}
	}
}

// TestEngineSummarySources: the Run line names the source addresses of a
// run on sockets, and says virtual flows (an address each, none of the
// source addresses used) for one on virtual flows.
func TestEngineSummarySources(t *testing.T) {
	for _, tt := range []struct {
		flows   string
		sources int
		want    string
	}{
		{"", 0, "seed 0, 1 source address"},
		{"sockets", 4, "seed 0, 4 source addresses"},
		{"virtual", 4, "seed 0, virtual flows (an address:port each)"},
	} {
		var b strings.Builder
		res := &engine.Result{Run: &result.Run{}, Engine: &engine.Info{Protocol: "udp-lobby", Shard: "0/1", Sources: tt.sources, Harness: result.Harness{Flows: tt.flows}}}
		writeEngineSummary(&b, res)
		if flat := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(flat, tt.want) {
			t.Errorf("flows %q, %d sources: no %q in:\n%s", tt.flows, tt.sources, tt.want, b.String())
		}
	}
}

// TestEngineSummaryLatencyEnd: the Harness lines say where the latencies
// end when the clients said, and nothing when they did not.
func TestEngineSummaryLatencyEnd(t *testing.T) {
	for _, tt := range []struct {
		end  string
		want string // "" = no latency_end line
	}{
		{"", ""},
		{result.LatencyEndKernel, "latencies end at each reply's kernel receive stamp (latency_end: kernel receive stamp)"},
		{result.LatencyEndUser, "latencies end when the client saw each reply, after its wake-up: no kernel receive stamps (latency_end: user-space receive)"},
		{result.LatencyEndMixed, "for others (latency_end: mixed)"},
	} {
		out, flat := harnessSummary(t, result.Harness{LatencyEnd: tt.end})
		switch {
		case tt.want == "" && strings.Contains(flat, "latency_end"):
			t.Errorf("%q: a latency_end line:\n%s", tt.end, out)
		case tt.want != "" && !strings.Contains(flat, tt.want):
			t.Errorf("%q: no %q in:\n%s", tt.end, tt.want, out)
		}
	}
}

// TestRunSummaryVerdictLast: on a passing run whose harness sent late,
// the send-lag warning is folded to TermWidth and printed with the
// harness's lines, before the verdict, which is the last line of the
// output (the tail of a CI log); stderr stays empty.
func TestRunSummaryVerdictLast(t *testing.T) {
	lat := result.Latency{Count: 100, P50US: 200, P90US: 400, P99US: 5000, MaxUS: 6000}
	lag := result.Latency{Count: 100, P50US: 100, P99US: 300, MaxUS: 400}
	run := result.NewRun()
	run.Scenario, run.Target, run.DurationNS = "s.yaml", "127.0.0.1:9", 1e9
	run.Steps = []result.Series{{Name: "list_rooms", Requests: 100, Successes: 100, Latency: lat, Uncorrected: lat, SendLag: lag}}
	run.Totals.Requests, run.Totals.Successes = 100, 100
	run.Thresholds = []result.ThresholdResult{{Name: "list_rooms.p99 < 50ms", Metric: "list_rooms.p99", Op: "<", Limit: 0.05, Observed: 0.005, Pass: true}}
	if run.SendLagWarning() == "" {
		t.Fatal("the fixture has no send-lag warning")
	}
	res := &engine.Result{Run: run, Engine: &engine.Info{Protocol: "udp-lobby", Shard: "0/1"}, ThresholdsOK: true}
	var out, errb strings.Builder
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	if code := reportRun(e, res, outputFlags(fs, result.KindRun)); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	text := out.String()
	assertNarrow(t, text)
	if errb.Len() > 0 {
		t.Errorf("stderr %q, want nothing (the warning is in the summary)", errb.String())
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if hl := run.Headline().Text; !strings.HasPrefix(hl, "PASS") || lines[len(lines)-1] != hl {
		t.Errorf("the last line is %q, want the verdict %q:\n%s", lines[len(lines)-1], hl, text)
	}
	warn, harness := strings.Index(text, "the harness sent late"), strings.Index(text, "Harness: peak RSS")
	if warn < 0 || harness < 0 || warn < harness {
		t.Errorf("want the send-lag warning after the harness's lines:\n%s", text)
	}
	if flat := strings.Join(strings.Fields(text), " "); !strings.Contains(flat, run.SendLagWarning()) {
		t.Errorf("the warning is not whole in the summary:\n%s", text)
	}
}
