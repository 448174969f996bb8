package simclient

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestReportProbe checks that a probe's finding reaches the collector with
// its step, the others' latency before and during the limit, and the cut
// note.
func TestReportProbe(t *testing.T) {
	c := metrics.NewCollector(time.Now())
	sh, err := NewShared(testPlan(t, "  - steps: [list_rooms]\n"), netip.AddrPort{}, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	start := time.Now()
	p := NewProbe(scenario.RateProbeSpec{From: 10, To: 100, Over: 2 * time.Second, Loss: 0.05}, start)
	for i := range 20 {
		o := Answered
		if i >= 10 {
			o = Lost // half lost in window 0: the limit
		}
		p.Outcome(time.Millisecond, o)
	}
	sh.Observe(1, start, 2*time.Millisecond, true) // someone else, during the probe
	sh.ReportProbe(p, "probe", "127.0.0.1:1", start, false)
	sh.ReportProbe(p, "probe", "127.0.0.1:1", start, true)
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(run.RateLimits) != 2 {
		t.Fatalf("%d findings, want 2", len(run.RateLimits))
	}
	f := run.RateLimits[0]
	if f.Source != "probe" || f.ObservedLimitPerSec != 10 || f.OtherSourcesP99AfterUS == 0 || strings.Contains(f.Note, "cut short") {
		t.Errorf("finding %+v", f)
	}
	if !strings.HasSuffix(run.RateLimits[1].Note, " (cut short by the end of the run)") {
		t.Errorf("cut finding's note %q", run.RateLimits[1].Note)
	}
}
