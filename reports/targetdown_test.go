package reports

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// downRun is passingRun whose target went down at +1.2 s, refused, and
// was not back by the end: the failures of "join" happened after.
func downRun(t testing.TB) *result.Run {
	r := passingRun(t)
	r.Outages = []result.Outage{{StartNS: 1200 * time.Millisecond, LastUpNS: 1100 * time.Millisecond, Kind: result.DownRefused,
		Detail: "dial tcp 127.0.0.1:7777: connect: connection refused", During: []string{"join"}, AnsweredBefore: 145,
		Failures: map[string]int64{result.ReasonTimeout: 3}}}
	r.Totals.FailuresWhileDown = map[string]int64{result.ReasonTimeout: 3}
	r.NoteTargetDown()
	return r
}

// TestTargetDownFirst: a run whose target went down says TARGET DOWN
// first in every format, before INTERRUPTED, INCOMPLETE or FAIL, with the
// rest of the verdict after; a recovery drill's fault the target came
// back from is not TARGET DOWN, one it never came back from is.
func TestTargetDownFirst(t *testing.T) {
	down := downRun(t)
	back := passingRun(t)
	back.Outages = []result.Outage{{StartNS: 1200 * time.Millisecond, LastUpNS: 1100 * time.Millisecond, EndNS: 4600 * time.Millisecond, Back: true, Kind: result.DownSilent}}
	interrupted := downRun(t)
	interrupted.ShardRuns = []result.ShardRun{{Shard: "0/1", Interrupted: true}}
	incomplete := downRun(t)
	incomplete.Incomplete = []string{"worker 1/2 died"}
	failing := downRun(t)
	failing.Thresholds[1].Pass = false
	drillBack := passingRun(t)
	drillBack.Outages = []result.Outage{{StartNS: time.Second, EndNS: 2 * time.Second, Back: true, Kind: result.DownExited, Fault: "kill -9 at +1s"}}
	drillDead := passingRun(t)
	drillDead.Outages = []result.Outage{{StartNS: time.Second, Kind: result.DownExited, Fault: "kill -9 at +1s", Exit: "killed by SIGKILL"}}
	tests := []struct {
		name, status string
		run          *result.Run
		says         []string
	}{
		{"not back", result.StatusTargetDown, down, []string{"TARGET DOWN · at +1.2 s (refused), not back by the end (145 requests answered before; 3 timeout after); on what ran: all 2 thresholds passed"}},
		{"back", result.StatusTargetDown, back, []string{"TARGET DOWN · at +1.2 s (silent) for 3.4 s (back at +4.6 s)"}},
		{"interrupted too", result.StatusTargetDown, interrupted, []string{"TARGET DOWN · at +1.2 s", "; then INTERRUPTED · the run was stopped"}},
		{"incomplete too", result.StatusTargetDown, incomplete, []string{"TARGET DOWN · at +1.2 s", "; then INCOMPLETE · "}},
		{"failing too", result.StatusTargetDown, failing, []string{"TARGET DOWN · at +1.2 s", "; then FAIL · 1 of 2 thresholds breached"}},
		{"drill, back", result.StatusPass, drillBack, []string{"PASS · "}},
		{"drill, never back", result.StatusTargetDown, drillDead, []string{"TARGET DOWN · at +1.0 s (exited: killed by SIGKILL), not back by the end"}},
	}
	render := func(t *testing.T, f func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hl := tt.run.Headline()
			if hl.Status != tt.status {
				t.Fatalf("headline %+v, want status %s", hl, tt.status)
			}
			for _, s := range tt.says {
				if !strings.Contains(hl.Text, s) {
					t.Errorf("headline %q lacks %q", hl.Text, s)
				}
			}
			if tt.status != result.StatusTargetDown {
				return
			}
			if strings.Contains(hl.Text, "PASS") {
				t.Errorf("headline %q says PASS", hl.Text)
			}
			term := render(t, func(b *bytes.Buffer) error { return WriteRunTable(b, tt.run) })
			if first := paragraphs(term)[0]; first != hl.Text {
				t.Errorf("terminal: first line %q", first)
			}
			if ps := paragraphs(term); ps[len(ps)-1] != hl.Text {
				t.Errorf("terminal: does not end with the headline:\n%s", term)
			}
			md := render(t, func(b *bytes.Buffer) error { return WriteRunMarkdown(b, tt.run) })
			if first, _, _ := strings.Cut(md, "\n"); first != "**"+mdInline(hl.Text)+"**" {
				t.Errorf("Markdown: first line %q", first)
			}
			j := render(t, func(b *bytes.Buffer) error { return WriteRunJUnit(b, tt.run) })
			if !strings.Contains(j, `<error message="TARGET DOWN`) || !strings.Contains(j, `type="target_down"`) {
				t.Errorf("JUnit does not lead with an error testcase:\n%s", j)
			}
			h := render(t, func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, tt.run) })
			if !strings.Contains(h, `<p class="status target_down">TARGET DOWN`) {
				t.Error("HTML banner does not say TARGET DOWN")
			}
			for _, side := range []string{"base", "new"} {
				base, nw := passingRun(t), tt.run
				if side == "base" {
					base, nw = tt.run, passingRun(t)
				}
				c, err := result.Compare(base, nw, result.DefaultGates())
				if err != nil {
					t.Fatal(err)
				}
				cmp := render(t, func(b *bytes.Buffer) error { return WriteCompareTable(b, c) })
				if c.OK() || !strings.HasPrefix(cmp, "TARGET DOWN "+side+" run: at +") {
					t.Errorf("compare with the %s side down: ok %v, table:\n%s", side, c.OK(), cmp)
				}
			}
		})
	}
}

// TestTargetDownGolden: every format of a run whose target went down,
// whole: the outage, the failures split down/up, the shaded charts.
func TestTargetDownGolden(t *testing.T) {
	r := downRun(t)
	tests := []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"run_down_table.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, r) }},
		{"run_down.md", func(b *bytes.Buffer) error { return WriteRunMarkdown(b, r) }},
		{"run_down_junit.xml", func(b *bytes.Buffer) error { return WriteRunJUnit(b, r) }},
		{"run_down.json", func(b *bytes.Buffer) error { return WriteJSON(b, r) }},
		{"run_down.html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, r) }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(tt.file, ".html") {
				if n, k := strings.Count(b.String(), `<rect class="down"`), strings.Count(b.String(), `<span class="key band"></span>target down (shaded)`); n != 3 || k != 3 {
					t.Errorf("%d shaded rects and %d legend keys, want a band and a legend key on each of 3 charts", n, k)
				}
				checkHTMLGolden(t, tt.file, b.Bytes())
				return
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
		})
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadRun(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Outages, r.Outages) || !reflect.DeepEqual(back.Totals.FailuresWhileDown, r.Totals.FailuresWhileDown) || back.Headline() != r.Headline() {
		t.Errorf("JSON round trip lost the outage: %+v", back.Outages)
	}
}

// TestMergeOutages: shards' outages merge into their union.
func TestMergeOutages(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		in   []result.Outage
		want []result.Outage
	}{
		{"none", nil, nil},
		{"overlapping", []result.Outage{
			{StartNS: 2 * s, LastUpNS: s, EndNS: 4 * s, Back: true, Kind: result.DownSilent, During: []string{"join"}, Failures: map[string]int64{"timeout": 2}, AnsweredBefore: 10},
			{StartNS: 1 * s, LastUpNS: s / 2, EndNS: 3 * s, Back: true, Kind: result.DownRefused, During: []string{"create"}, Failures: map[string]int64{"timeout": 1}, AnsweredBefore: 5},
		}, []result.Outage{
			{StartNS: 1 * s, LastUpNS: s / 2, EndNS: 4 * s, Back: true, Kind: result.DownRefused, During: []string{"create", "join"}, Failures: map[string]int64{"timeout": 3}, AnsweredBefore: 15},
		}},
		{"disjoint", []result.Outage{
			{StartNS: 5 * s, EndNS: 6 * s, Back: true, Kind: result.DownSilent},
			{StartNS: 1 * s, EndNS: 2 * s, Back: true, Kind: result.DownSilent},
		}, []result.Outage{
			{StartNS: 1 * s, EndNS: 2 * s, Back: true, Kind: result.DownSilent, During: []string{}},
			{StartNS: 5 * s, EndNS: 6 * s, Back: true, Kind: result.DownSilent, During: []string{}},
		}},
		{"one open swallows the later", []result.Outage{
			{StartNS: 1 * s, Kind: result.DownRefused},
			{StartNS: 3 * s, EndNS: 4 * s, Back: true, Kind: result.DownSilent, Fault: "kill"},
		}, []result.Outage{
			{StartNS: 1 * s, Kind: result.DownRefused, During: []string{}},
		}},
		{"a later open one keeps it open", []result.Outage{
			{StartNS: 1 * s, EndNS: 3 * s, Back: true, Kind: result.DownRefused, Fault: "kill"},
			{StartNS: 2 * s, Kind: result.DownRefused, Fault: "kill"},
		}, []result.Outage{
			{StartNS: 1 * s, Kind: result.DownRefused, Fault: "kill", During: []string{}},
		}},
	}
	norm := func(os []result.Outage) []result.Outage {
		for i := range os {
			if os[i].During == nil {
				os[i].During = []string{}
			}
		}
		return os
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]result.Outage(nil), tt.in...)
			got := norm(result.MergeOutages(tt.in))
			if !reflect.DeepEqual(got, norm(tt.want)) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(in, tt.in) {
				t.Error("the input was modified")
			}
		})
	}
	// Through Merge: the document says it first.
	a, b := passingRun(t), downRun(t)
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Outages) != 1 || m.Totals.FailuresWhileDown[result.ReasonTimeout] != 3 || !strings.HasPrefix(m.TargetDown, "TARGET DOWN · at +1.2 s") {
		t.Errorf("merged: outages %+v, failures while down %v, target_down %q", m.Outages, m.Totals.FailuresWhileDown, m.TargetDown)
	}
}
