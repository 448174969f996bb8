package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// TestInterruptedFirst: an interrupted run says so first in every format,
// even when every threshold passed on the part that ran.
func TestInterruptedFirst(t *testing.T) {
	run := sampleRun(t)
	for i := range run.Thresholds {
		run.Thresholds[i].Pass = true
	}
	run.ShardRuns = []result.ShardRun{{Shard: "0/1", Interrupted: true}}
	const want = "INTERRUPTED"

	var tb bytes.Buffer
	if err := WriteRunTable(&tb, run); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(tb.String(), "\n"); !strings.HasPrefix(first, want) {
		t.Errorf("terminal: first line %q, want it to start with %q", first, want)
	}

	var jb bytes.Buffer
	if err := WriteRunJUnit(&jb, run); err != nil {
		t.Fatal(err)
	}
	j := jb.String()
	if !strings.Contains(j, `<testsuites name="lobbybench run" tests="4" failures="1" errors="1"`) || !strings.Contains(j, `<error message="INTERRUPTED`) {
		t.Errorf("JUnit has no error testcase for the interruption:\n%s", j)
	}
	if strings.Index(j, "lobbybench.run") > strings.Index(j, "lobbybench.thresholds") {
		t.Error("JUnit: the interruption is not the first suite")
	}

	var hb bytes.Buffer
	if err := WriteHTML(&hb, HTMLOptions{}, run); err != nil {
		t.Fatal(err)
	}
	if h := hb.String(); !strings.Contains(h, `<p class="status interrupted">INTERRUPTED`) || strings.Contains(h, "PASS ·") {
		t.Errorf("HTML banner does not say interrupted (or still says PASS)")
	}

	whole := sampleRun(t)
	c, err := result.Compare(whole, run, result.DefaultGates())
	if err != nil {
		t.Fatal(err)
	}
	var cb bytes.Buffer
	if err := WriteCompareTable(&cb, c); err != nil {
		t.Fatal(err)
	}
	if c.OK() || !strings.HasPrefix(cb.String(), "INTERRUPTED new run") {
		t.Errorf("compare of an interrupted run: ok %v, table:\n%s", c.OK(), cb.String())
	}
}

// TestConformHeadline: under --strict a warning fails in the JUnit as in
// the exit code, a skip budget fails a hollow run, and the skip count is
// in the headline of every format.
func TestConformHeadline(t *testing.T) {
	c := sampleConform()
	for i := range c.Cases {
		if c.Cases[i].Verdict == result.VerdictFail {
			c.Cases[i].Verdict = result.VerdictPass
		}
	}
	s := c.Summary()
	if s.Warn == 0 || s.Skip == 0 {
		t.Fatalf("fixture needs a warning and a skip: %+v", s)
	}
	junit := func(c *result.Conform) string {
		var b bytes.Buffer
		if err := WriteConformJUnit(&b, c); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if hl := c.Headline(); hl.Status != result.StatusPass || !strings.Contains(hl.Text, "skipped") {
		t.Errorf("lenient headline %+v", hl)
	}
	if j := junit(c); !strings.Contains(j, `failures="0"`) {
		t.Errorf("lenient JUnit has failures:\n%s", j)
	}
	c.Strict = true
	if hl := c.Headline(); hl.Status != result.StatusFail || !strings.Contains(hl.Text, "strict") {
		t.Errorf("strict headline %+v", hl)
	}
	if j := junit(c); !strings.Contains(j, `<testsuites name="lobbybench conform" tests="5" failures="1"`) || !strings.Contains(j, `type="should (strict)"`) {
		t.Errorf("strict JUnit: the warning is not a failure:\n%s", j)
	}
	c.Strict = false
	budget := s.Skip - 1
	c.MaxSkips = &budget
	if hl := c.Headline(); hl.Status != result.StatusFail || !strings.Contains(hl.Text, "over --max-skips") {
		t.Errorf("over-budget headline %+v", hl)
	}
	if j := junit(c); !strings.Contains(j, `type="skip budget"`) {
		t.Errorf("over-budget JUnit has no failing skip budget case:\n%s", j)
	}
	budget = s.Skip
	if j := junit(c); strings.Contains(j, `type="skip budget"`) || c.Headline().Status != result.StatusPass {
		t.Errorf("within budget still fails")
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"markdown": func(b *bytes.Buffer) error { return WriteConformMarkdown(b, c) },
		"html":     func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, c) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.Headline().Text) {
			t.Errorf("%s lacks the headline %q", name, c.Headline().Text)
		}
	}
}

// TestWithoutPassingWire: passing cases lose their wire log (and say so),
// others keep theirs, the original is untouched.
func TestWithoutPassingWire(t *testing.T) {
	c := sampleConform()
	c.Cases[0].Verdict = result.VerdictPass
	c.Cases[0].Wire = []result.WireEntry{{Dir: result.DirSent, Hex: "00"}, {Dir: result.DirRecv, Hex: "01"}}
	var keep int
	for _, k := range c.Cases[1:] {
		keep += len(k.Wire)
	}
	d := c.WithoutPassingWire()
	if len(c.Cases[0].Wire) != 2 || len(d.Cases[0].Wire) != 0 || d.Cases[0].WireOmitted != 2 {
		t.Errorf("original %d entries, copy %d (omitted %d)", len(c.Cases[0].Wire), len(d.Cases[0].Wire), d.Cases[0].WireOmitted)
	}
	var kept int
	for _, k := range d.Cases[1:] {
		if k.Verdict != result.VerdictPass {
			kept += len(k.Wire)
		}
	}
	if keep > 0 && kept == 0 {
		t.Error("failing cases lost their wire log")
	}
	var b bytes.Buffer
	if err := WriteConformJUnit(&b, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 wire log entries of this passing case left out") {
		t.Error("JUnit does not say the wire log was left out")
	}
}

// TestConformInterruptedFirst: an interrupted conform result leads every
// format with INTERRUPTED, whatever its cases say (golden files hold each
// format whole).
func TestConformInterruptedFirst(t *testing.T) {
	c := sampleConform()
	c.Interrupted = true
	hl := c.Headline()
	if hl.Status != result.StatusInterrupted || !strings.HasPrefix(hl.Text, "INTERRUPTED · the suite was stopped after") || !strings.Contains(hl.Text, "(on that part: FAIL · ") {
		t.Fatalf("headline %+v", hl)
	}
	tests := []struct {
		file  string
		write func(*bytes.Buffer) error
		lead  string
	}{
		{"conform_interrupted_junit.xml", func(b *bytes.Buffer) error { return WriteConformJUnit(b, c) }, `<error message="INTERRUPTED`},
		{"conform_interrupted.md", func(b *bytes.Buffer) error { return WriteConformMarkdown(b, c) }, "**INTERRUPTED"},
		{"conform_interrupted.html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, c) }, `<p class="status interrupted">INTERRUPTED`},
		{"conform_interrupted.json", func(b *bytes.Buffer) error { return WriteJSON(b, c) }, `"status": "interrupted"`},
	}
	first := c.Cases[0].ID
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(tt.file, ".html") {
				checkHTMLGolden(t, tt.file, b.Bytes())
			} else {
				golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
			}
			s := b.String()
			if i, j := strings.Index(s, tt.lead), strings.Index(s, first); i < 0 || j < 0 || i > j {
				t.Errorf("%q at %d, first case %s at %d", tt.lead, i, first, j)
			}
		})
	}
	c.Interrupted = false
	if c.Headline().Status == result.StatusInterrupted {
		t.Error("a whole suite reads as interrupted")
	}
}

// TestIncompleteFirst: a run that did not generate all its load (a
// --workers worker left no result, sessions could not open their socket)
// says INCOMPLETE first in every format, even when every threshold
// passed on what ran; interrupted as well, it says both.
func TestIncompleteFirst(t *testing.T) {
	dead := passingRun(t)
	dead.Incomplete = []string{"worker 1/2 died (signal: killed): the result is incomplete"}
	starts := passingRun(t)
	starts.Sessions = &result.Sessions{Started: 50, Failed: 7, FailedStarts: 7}
	both := passingRun(t)
	both.Incomplete = dead.Incomplete
	both.ShardRuns = []result.ShardRun{{Shard: "0/2", Interrupted: true}}
	tests := []struct {
		name, status, lead, says string
		run                      *result.Run
	}{
		{"dead worker", result.StatusIncomplete, "INCOMPLETE", "1 worker left no result", dead},
		{"failed starts", result.StatusIncomplete, "INCOMPLETE", "7 sessions could not open their socket", starts},
		{"interrupted too", result.StatusInterrupted, "INTERRUPTED", "1 worker left no result", both},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hl := tt.run.Headline()
			if hl.Status != tt.status || !strings.HasPrefix(hl.Text, tt.lead+" · ") || !strings.Contains(hl.Text, tt.says) ||
				!strings.Contains(hl.Text, "(on that part: all 2 thresholds passed)") {
				t.Fatalf("headline %+v, want %s saying %q", hl, tt.status, tt.says)
			}
			render := func(f func(*bytes.Buffer) error) string {
				var b bytes.Buffer
				if err := f(&b); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			term := render(func(b *bytes.Buffer) error { return WriteRunTable(b, tt.run) })
			if first := paragraphs(term)[0]; first != hl.Text {
				t.Errorf("terminal: first line %q", first)
			}
			md := render(func(b *bytes.Buffer) error { return WriteRunMarkdown(b, tt.run) })
			if first, _, _ := strings.Cut(md, "\n"); first != "**"+mdInline(hl.Text)+"**" {
				t.Errorf("Markdown: first line %q", first)
			}
			j := render(func(b *bytes.Buffer) error { return WriteRunJUnit(b, tt.run) })
			if !strings.Contains(j, `errors="1"`) || !strings.Contains(j, `<error message="`+tt.lead) || !strings.Contains(j, `type="`+tt.status+`"`) ||
				strings.Index(j, "lobbybench.run") > strings.Index(j, "lobbybench.thresholds") {
				t.Errorf("JUnit does not lead with an error testcase:\n%s", j)
			}
			js := render(func(b *bytes.Buffer) error { return WriteJSON(b, tt.run) })
			st, _ := json.Marshal(tt.status)
			vd, _ := json.Marshal(hl.Text)
			want := fmt.Sprintf("{\n  \"schema_version\": 1,\n  \"kind\": \"run\",\n  \"status\": %s,\n  \"verdict\": %s,\n", st, vd)
			if !strings.HasPrefix(js, want) {
				t.Errorf("JSON does not lead with the headline:\n%.300s", js)
			}
			h := render(func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, tt.run) })
			if !strings.Contains(h, `<p class="status `+tt.status+`">`+tt.lead) || strings.Contains(h, "PASS ·") {
				t.Errorf("HTML banner does not say %s (or still says PASS)", tt.lead)
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
				cmp := render(func(b *bytes.Buffer) error { return WriteCompareTable(b, c) })
				if c.OK() || !strings.HasPrefix(cmp, tt.lead+" "+side+" run: ") {
					t.Errorf("compare with the %s side partial: ok %v, table:\n%s", side, c.OK(), cmp)
				}
			}
		})
	}
	if hl := passingRun(t).Headline(); hl.Status != result.StatusPass || hl.Partial() {
		t.Errorf("a whole passing run: %+v", hl)
	}
}
