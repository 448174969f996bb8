package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// downConform is sampleConform during which the target died: the case in
// flight failed with the death, the two after it were not run.
func downConform() *result.Conform {
	c := sampleConform()
	c.Cases[1].Actual = "the server stopped answering during this case (refused: nothing listens: connect to 127.0.0.1:7777: connection refused)"
	c.Cases[3].Verdict, c.Cases[3].Actual, c.Cases[3].Notes = result.VerdictNotRun, "not run: target down since udp-lobby/5/2", nil
	c.Cases[4].Verdict, c.Cases[4].Actual = result.VerdictNotRun, "not run: target down since udp-lobby/5/2"
	c.Outages = []result.Outage{{StartNS: 700 * time.Millisecond, LastUpNS: 200 * time.Millisecond, Kind: result.DownRefused,
		Detail: "connect to 127.0.0.1:7777: connection refused", During: []string{"udp-lobby/5/2"}}}
	return c
}

// TestConformTargetDownFirst: a target that stopped answering leads every
// format with TARGET DOWN, before an interruption or a failure; its
// not-run cases are counted apart from skips and shown in each format.
func TestConformTargetDownFirst(t *testing.T) {
	c := downConform()
	want := "TARGET DOWN · the server stopped answering (refused: nothing listens) during udp-lobby/5/2; 2 cases not run — FAIL · 1 of 5 cases failed; 1 warning"
	if hl := c.Headline(); hl.Status != result.StatusTargetDown || hl.Text != want {
		t.Fatalf("headline %+v\nwant %q", hl, want)
	}
	if s := c.Summary(); s.NotRun != 2 || s.Skip != 0 {
		t.Errorf("summary %+v: want 2 not run, 0 skipped", s)
	}
	tests := []struct {
		file  string
		write func(*bytes.Buffer) error
		lead  string
		shows string // how a not-run case shows
	}{
		{"conform_down.txt", func(b *bytes.Buffer) error { return WriteConformText(b, c, ConformTextOptions{}) }, "target down at +700ms (refused: nothing listens)", "⊘ udp-lobby/7/1"},
		{"conform_down_junit.xml", func(b *bytes.Buffer) error { return WriteConformJUnit(b, c) }, `<error message="TARGET DOWN`, `<skipped message="not run: target down since udp-lobby/5/2">`},
		{"conform_down.md", func(b *bytes.Buffer) error { return WriteConformMarkdown(b, c) }, "**TARGET DOWN", "⛔ not run"},
		{"conform_down.html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, c) }, `<p class="status target_down">TARGET DOWN`, `class="v-not_run"`},
		{"conform_down.json", func(b *bytes.Buffer) error { return WriteJSON(b, c) }, `"outages": [`, `"verdict": "not_run"`},
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
			if !strings.Contains(s, tt.shows) {
				t.Errorf("no %q", tt.shows)
			}
		})
	}

	// Precedence: TARGET DOWN > INTERRUPTED > FAIL.
	c.Interrupted = true
	if hl := c.Headline(); hl.Status != result.StatusTargetDown || !strings.Contains(hl.Text, " — INTERRUPTED · ") {
		t.Errorf("down and interrupted: %+v", hl)
	}
	c.Outages = nil
	if hl := c.Headline(); hl.Status != result.StatusInterrupted {
		t.Errorf("interrupted only: %+v", hl)
	}
	// A scheduled fault the target came back from is no TARGET DOWN.
	c.Interrupted = false
	c.Outages = []result.Outage{{Kind: result.DownRefused, Fault: "kill -9 at +1s", Back: true}}
	if hl := c.Headline(); hl.Status != result.StatusFail {
		t.Errorf("fault it recovered from: %+v", hl)
	}
}

// TestCompareConformTargetDown: a suite during which the target died
// covers only part of its cases: comparing it breaks GateComplete, like an
// interrupted one.
func TestCompareConformTargetDown(t *testing.T) {
	cmp, err := result.CompareConform(sampleConform(), downConform(), result.DefaultGates())
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Incomplete) != 1 || !strings.HasPrefix(cmp.Incomplete[0], "TARGET DOWN new suite: the server stopped answering") || cmp.OK() {
		t.Errorf("incomplete %q, breaches %+v", cmp.Incomplete, cmp.Breaches)
	}
}
