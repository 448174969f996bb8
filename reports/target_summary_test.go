package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

func TestOutageCulpritText(t *testing.T) {
	tests := []struct {
		name string
		o    result.Outage
		want string
	}{
		{"nothing re-run", result.Outage{During: []string{"a/1", "a/2"}}, ""},
		{"one culprit", result.Outage{During: []string{"a/1", "a/2"}, ReRunAlone: []string{"a/1", "a/2"}, Culprits: []string{"a/2"}}, "a/2 kills it alone"},
		{"two culprits", result.Outage{During: []string{"a/1", "a/2"}, ReRunAlone: []string{"a/1", "a/2"}, Culprits: []string{"a/1", "a/2"}}, "a/1, a/2 each kill it alone"},
		{"none alone", result.Outage{During: []string{"a/1", "a/2", "a/3"}, ReRunAlone: []string{"a/1", "a/2", "a/3"}}, "it died while a/1, a/2, a/3 ran together; none kills it alone"},
	}
	for _, tt := range tests {
		if got := tt.o.CulpritText(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestConformHeadlineNamesCulprit(t *testing.T) {
	c := result.NewConform()
	c.Cases = []result.Case{{ID: "a/1", Verdict: result.VerdictPass}, {ID: "a/2", Verdict: result.VerdictFail}}
	c.Outages = []result.Outage{{Kind: result.DownExited, Exit: "killed by SIGABRT", Back: true, During: []string{"a/1", "a/2"}, ReRunAlone: []string{"a/1", "a/2"}, Culprits: []string{"a/2"}}}
	want := "TARGET DOWN · the server stopped answering (exited: killed by SIGABRT) during a/1, a/2; a/2 kills it alone — FAIL · 1 of 2 cases failed"
	if got := c.Headline().Text; got != want {
		t.Errorf("headline %q\nwant     %q", got, want)
	}
}

func TestTargetProcessLine(t *testing.T) {
	tests := []struct {
		tp   *result.TargetProcess
		want string
	}{
		{nil, ""},
		{&result.TargetProcess{Starts: 1, PeakRSSBytes: 3 << 20, CPUNS: 1500 * time.Millisecond},
			"target process: 1 start; CPU 1.50s, peak RSS 3.0 MiB (0 samples)"},
		{&result.TargetProcess{Starts: 2, Exits: []string{"killed by SIGABRT", "exited with status 0"}, PeakRSSBytes: 12 << 20, CPUNS: 40 * time.Millisecond},
			"target process: 2 starts, exits: killed by SIGABRT, exited with status 0; CPU 40.00ms, peak RSS 12.0 MiB (0 samples)"},
	}
	for _, tt := range tests {
		if got := tt.tp.Line(); got != tt.want {
			t.Errorf("%q, want %q", got, tt.want)
		}
	}
}

// TestConformFormatsNameCulprit: when conform re-ran the cases in flight
// one at a time, every format names the one that kills the server alone.
func TestConformFormatsNameCulprit(t *testing.T) {
	c := result.NewConform()
	c.Protocol, c.Target = "tcp-lobby", "127.0.0.1:7777"
	c.Cases = []result.Case{{ID: "a/1", Verdict: result.VerdictPass}, {ID: "a/2", Verdict: result.VerdictFail, Actual: "the server died during this case, re-run alone"}}
	c.Outages = []result.Outage{{StartNS: time.Second, Kind: result.DownExited, Exit: "killed by SIGABRT", Back: true, EndNS: 2 * time.Second,
		During: []string{"a/1", "a/2"}, ReRunAlone: []string{"a/1", "a/2"}, Culprits: []string{"a/2"}}}
	for _, f := range Formats() {
		if f.Name == "json" {
			continue // the fields themselves: culprits, rerun_alone
		}
		t.Run(f.Name, func(t *testing.T) {
			var b bytes.Buffer
			if err := f.Write(&b, Options{}, c); err != nil {
				t.Skipf("%s does not render a conform result: %v", f.Name, err)
			}
			if !strings.Contains(b.String(), "a/2 kills it alone") {
				t.Errorf("%s does not name the culprit:\n%.2000s", f.Name, b.String())
			}
		})
	}
}
