package main

import (
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
		var b strings.Builder
		res := &engine.Result{Run: &result.Run{}, Engine: &engine.Info{Protocol: "udp-lobby", Shard: "0/1", Harness: result.Harness{StrayDatagrams: tt.stray}}}
		writeEngineSummary(&b, res)
		out := b.String()
		assertNarrow(t, out)
		flat := strings.Join(strings.Fields(out), " ")
		switch {
		case tt.want == "" && strings.Contains(flat, "stray"):
			t.Errorf("stray %d: a stray line:\n%s", tt.stray, out)
		case tt.want != "" && !strings.Contains(flat, tt.want+", not replies to any request"):
			t.Errorf("stray %d: no %q in:\n%s", tt.stray, tt.want, out)
		}
	}
}
