package reports

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// capacityFixture is a search that held up to 200/s, broke at 220/s on
// its error rate, and broke U-SEQ from 220/s.
func capacityFixture() *result.Capacity {
	steps := []result.CapacityStep{
		{Load: 50, Verdict: result.CapPass, Requests: 400, Throughput: 50, P50US: 300, P99US: 900, SendLagP99US: 80, Headline: "PASS · the threshold passed", ServerCPUSeconds: 0.4, ServerPeakRSSBytes: 30 << 20},
		{Load: 100, Verdict: result.CapPass, Requests: 800, Throughput: 100, P50US: 320, P99US: 1200, SendLagP99US: 90, Headline: "PASS · the threshold passed"},
		{Load: 200, Verdict: result.CapPass, Requests: 1600, Throughput: 199.5, P50US: 400, P99US: 4000, ErrorRate: 0.01, SendLagP99US: 120, Headline: "PASS · the threshold passed"},
		{Load: 400, Verdict: result.CapFail, Requests: 3200, Throughput: 205, P50US: 9000, P99US: 250000, ErrorRate: 0.48, SendLagP99US: 300,
			Broke: []string{"errors.rate < 5% (measured 48.00%)", "rule U-SEQ (40 violations)"}, Violations: map[string]int64{"U-SEQ": 40}, Headline: "FAIL · 1 of 1 threshold breached", Drain: "not drained: 3 rooms listed after --drain 30s, baseline 0"},
		{Load: 300, Verdict: result.CapFail, Requests: 2400, Throughput: 204, P50US: 5000, P99US: 90000, ErrorRate: 0.3, SendLagP99US: 200, Broke: []string{"errors.rate < 5% (measured 30.00%)"}, Headline: "FAIL · 1 of 1 threshold breached"},
		{Load: 250, Verdict: result.CapFail, Requests: 2000, Throughput: 203, P50US: 2000, P99US: 40000, ErrorRate: 0.18, SendLagP99US: 150, Broke: []string{"errors.rate < 5% (measured 18.00%)", "rule U-SEQ (2 violations)"}, Violations: map[string]int64{"U-SEQ": 2}, Headline: "FAIL · 1 of 1 threshold breached"},
		{Load: 220, Verdict: result.CapFail, Requests: 1760, Throughput: 201, P50US: 800, P99US: 20000, ErrorRate: 0.08, SendLagP99US: 130, Broke: []string{"errors.rate < 5% (measured 8.00%)"}, Headline: "FAIL · 1 of 1 threshold breached"},
	}
	return &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Scenario: "list-poll", Target: "127.0.0.1:9000", Protocol: "udp-lobby", Model: "open",
		StartedAt: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC), DurationNS: 90 * time.Second,
		Settings:    result.CapacitySettings{Start: 50, Max: 100000, Precision: 0.1, StepNS: 10 * time.Second, WarmupNS: 2 * time.Second, DrainNS: 30 * time.Second, BudgetNS: 5 * time.Minute, LagBoundNS: 100 * time.Millisecond},
		Sustainable: 200, BrokeAt: 220, BrokeFirst: "errors.rate < 5% (measured 8.00%)", Stop: result.StopPrecision, StopText: "200 held, 220 broke: within --precision 10%",
		Steps: steps, Rules: result.RuleOnsets(steps)}
}

// mergedFixture is the merge of two shards' documents of the ladder 50,
// 100, 200, 400, of which shard 1/2 played only the first three loads.
func mergedFixture() *result.Capacity {
	steps := []result.CapacityStep{
		{Load: 50, Verdict: result.CapPass, Requests: 400, Throughput: 50, P50US: 300, P99US: 900, SendLagP99US: 80, Headline: "PASS · the threshold passed"},
		{Load: 100, Verdict: result.CapPass, Requests: 800, Throughput: 100, P50US: 320, P99US: 1200, SendLagP99US: 90, Headline: "PASS · the threshold passed"},
		{Load: 200, Verdict: result.CapFail, Requests: 1600, Throughput: 182, P50US: 700, P99US: 30000, ErrorRate: 0.09, SendLagP99US: 120, Broke: []string{"errors.rate < 5% (measured 9.00%)"},
			Headline: "FAIL · 1 of 1 threshold breached", Drain: "shard 1/2: not drained: 2 rooms listed after --drain 30s, baseline 0"},
		{Load: 400, Verdict: result.CapHarnessBound, Requests: 1500, Throughput: 150, P50US: 900, P99US: 60000, ErrorRate: 0.25, SendLagP99US: 100,
			Why: "shard 1/2 has no run of this step", Headline: "INCOMPLETE · the load was not all generated (1 worker left no result): the figures cover only what ran"},
	}
	return &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Scenario: "list-poll", Target: "10.0.0.5:9000", Protocol: "udp-lobby", Model: "open",
		StartedAt: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC), DurationNS: 50 * time.Second,
		Settings:    result.CapacitySettings{Start: 50, Max: 400, StepNS: 10 * time.Second, WarmupNS: 2 * time.Second, DrainNS: 30 * time.Second, BudgetNS: 5 * time.Minute, LagBoundNS: 100 * time.Millisecond, Loads: []float64{50, 100, 200, 400}},
		Sustainable: 100, BrokeAt: 200, BrokeFirst: "errors.rate < 5% (measured 9.00%)", Stop: result.StopLadder, StopText: "100 held, 200 broke: the limit lies between (a fixed ladder, not bisected)",
		Shards: 2, Coverage: []string{"step 4 (400/s): not played by shard 1/2 (its ladder ended: the --budget 40s ran out before 400 (36s used, a step takes 13s))"},
		Steps: steps, Rules: result.RuleOnsets(steps)}
}

// shardFixture is shard 0/2's document of the ladder 50, 100, 400, which
// its budget ended after two loads: each step keeps its run.
func shardFixture() *result.Capacity {
	run := func(n int64) *result.Run {
		return &result.Run{SchemaVersion: result.SchemaVersion, Kind: result.KindRun, Scenario: "list-poll", StartedAt: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC), DurationNS: 10 * time.Second,
			Steps: []result.Series{}, Messages: []result.Series{}, Thresholds: []result.ThresholdResult{}, Violations: []result.Violation{}, Malformed: []result.MalformedFinding{}, RateLimits: []result.RateLimitFinding{},
			ShardRuns: []result.ShardRun{{Shard: "0/2", Protocol: "udp-lobby", Model: "open", Seed: 42}}, Shards: 1,
			Totals: result.Totals{Requests: n, Successes: n}, TimeSeries: []result.Point{{Second: 0, Requests: n}}}
	}
	steps := []result.CapacityStep{
		{Load: 50, Verdict: result.CapPass, Requests: 250, Throughput: 25, P50US: 300, P99US: 900, SendLagP99US: 80, Headline: "PASS · the threshold passed", Run: run(250)},
		{Load: 100, Verdict: result.CapPass, Requests: 500, Throughput: 50, P50US: 320, P99US: 1200, SendLagP99US: 90, Headline: "PASS · the threshold passed", Run: run(500)},
	}
	return &result.Capacity{SchemaVersion: result.SchemaVersion, Kind: result.KindCapacity, Scenario: "list-poll", Target: "10.0.0.5:9000", Protocol: "udp-lobby", Model: "open",
		StartedAt: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC), DurationNS: 26 * time.Second, Shard: "0/2",
		Settings: result.CapacitySettings{Start: 50, Max: 400, StepNS: 10 * time.Second, WarmupNS: 2 * time.Second, DrainNS: 30 * time.Second, BudgetNS: 30 * time.Second, LagBoundNS: 100 * time.Millisecond, Loads: []float64{50, 100, 400}},
		Stop:     result.StopBudget, StopText: "the --budget 30s ran out before 400 (26s used, a step takes 13s)",
		Steps: steps, Rules: result.RuleOnsets(steps)}
}

func TestRuleOnsets(t *testing.T) {
	got := result.RuleOnsets(capacityFixture().Steps)
	if len(got) != 1 || got[0] != (result.RuleOnset{Rule: "U-SEQ", FirstLoad: 250, Steps: 2, Count: 42}) {
		t.Errorf("RuleOnsets = %+v, want U-SEQ first at 250 in 2 steps, 42 violations", got)
	}
}

func TestCapacityFormats(t *testing.T) {
	harness := capacityFixture()
	harness.Steps = harness.Steps[:4]
	harness.Steps[3] = result.CapacityStep{Load: 400, Verdict: result.CapHarnessBound, Why: "12 starts dropped late (the generator fell behind)"}
	harness.Stop, harness.StopText, harness.BrokeAt, harness.BrokeFirst = result.StopHarness, "the harness could not offer 400", 0, ""
	harness.Rules = result.RuleOnsets(harness.Steps)
	down := capacityFixture()
	down.Steps = down.Steps[:4]
	down.Steps[3] = result.CapacityStep{Load: 400, Verdict: result.CapTargetDown, Why: "at +3.2 s (refused), not back by the end (812 requests answered before)"}
	down.Stop, down.StopText, down.BrokeAt, down.BrokeFirst = result.StopTargetDown, "the target went down at 400", 0, ""
	down.Rules = nil
	workers := capacityFixture()
	for i := range workers.Steps {
		workers.Steps[i].Workers = 2
	}
	docs := map[string]*result.Capacity{"capacity": capacityFixture(), "capacity_harness": harness, "capacity_down": down,
		"capacity_workers": workers, "capacity_merged": mergedFixture(), "capacity_shard": shardFixture()}
	lead := map[string]string{"capacity": "PASS · sustainable 200/s; 220/s broke first on errors.rate", "capacity_harness": "INCONCLUSIVE · harness-bound at 400/s", "capacity_down": "TARGET DOWN · at 400/s",
		"capacity_workers": "PASS · sustainable 200/s", "capacity_merged": "PASS · sustainable 100/s; 200/s broke first on errors.rate",
		"capacity_shard": "SHARD 0/2 · played its share of 2 of the"}
	// Said, never hidden: what a merge lacks, that workers played the
	// steps, that a shard's document has no verdict alone.
	also := map[string]string{"capacity_merged": "COVERAGE: step 4 (400/s): not played by shard 1/2", "capacity_workers": "2 local worker processes",
		"capacity_shard": "no verdict alone; merge every shard"}
	for name, c := range docs {
		for _, f := range Formats() {
			if f.Help[result.KindCapacity] == "" {
				t.Errorf("format %s has no capacity help", f.Name)
				continue
			}
			var b bytes.Buffer
			if err := f.Write(&b, Options{}, c); err != nil {
				t.Fatalf("%s %s: %v", name, f.Name, err)
			}
			ext := map[string]string{"json": ".json", "html": ".html", "junit": "_junit.xml", "markdown": ".md", "csv": ".csv"}[f.Name]
			golden.Check(t, filepath.Join("testdata", name+ext), b.Bytes())
			if !strings.Contains(b.String(), lead[name]) {
				t.Errorf("%s %s does not say %q", name, f.Name, lead[name])
			}
			if a := also[name]; a != "" && (f.Name == "html" || f.Name == "markdown" || f.Name == "junit" && name != "capacity_workers") && !strings.Contains(strings.Join(strings.Fields(b.String()), " "), a) {
				t.Errorf("%s %s does not say %q", name, f.Name, a)
			}
		}
		var b bytes.Buffer
		if err := WriteCapacityText(&b, c); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", name+".txt"), b.Bytes())
		for i, line := range strings.Split(b.String(), "\n") {
			if w := displayWidth(line); w > TermWidth {
				t.Errorf("%s.txt line %d is %d columns: %q", name, i+1, w, line)
			}
		}
		if !strings.HasPrefix(b.String(), lead[name]) {
			t.Errorf("%s.txt does not lead with %q", name, lead[name])
		}
		if a := also[name]; a != "" && !strings.Contains(strings.Join(strings.Fields(b.String()), " "), a) {
			t.Errorf("%s.txt does not say %q", name, a)
		}
	}
}

func TestCapacityJSONRoundTrip(t *testing.T) {
	c := capacityFixture()
	var b bytes.Buffer
	if err := WriteJSON(&b, c); err != nil {
		t.Fatal(err)
	}
	var back result.Capacity
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != result.KindCapacity || back.Sustainable != 200 || len(back.Steps) != len(c.Steps) || back.Steps[3].Violations["U-SEQ"] != 40 || back.Rules[0].FirstLoad != 250 {
		t.Errorf("round trip lost something: %+v", back)
	}
}

func TestCapacityHeadline(t *testing.T) {
	none := &result.Capacity{Model: "closed", Stop: result.StopNoLoadHeld, BrokeAt: 1, BrokeFirst: "errors.rate < 1% (measured 100.00%)", Steps: []result.CapacityStep{{Load: 1, Verdict: result.CapFail}}}
	if hl := none.Headline(); hl.Status != result.StatusFail || !strings.HasPrefix(hl.Text, "FAIL · no load held: 1 clients broke first on errors.rate") {
		t.Errorf("no load held: %+v", hl)
	}
	maxed := &result.Capacity{Model: "open", Stop: result.StopMax, StopText: "every load held up to --max 80", Sustainable: 80, Steps: []result.CapacityStep{{Load: 80, Verdict: result.CapPass}}}
	if hl := maxed.Headline(); hl.Status != result.StatusPass || hl.Text != "PASS · sustainable 80/s (every load held up to --max 80)" {
		t.Errorf("held to max: %+v", hl)
	}
	// The budget ran out after the first steps broke and before a lower
	// one held: no limit was found, and it must not read PASS.
	cut := &result.Capacity{Model: "closed", Stop: result.StopBudget, StopText: "the --budget 40s ran out (36s used, a step takes 13s)", BrokeAt: 25, BrokeFirst: "rule U-REPLY-SOURCE (348 violations)",
		Steps: []result.CapacityStep{{Load: 50, Verdict: result.CapFail}, {Load: 25, Verdict: result.CapFail}}}
	if hl := cut.Headline(); hl.Status != result.StatusFail || hl.Text != "FAIL · no load held: 25 clients broke first on rule U-REPLY-SOURCE (348 violations), and the search stopped before a lower load held (the --budget 40s ran out (36s used, a step takes 13s))" {
		t.Errorf("budget out before a load held: %+v", hl)
	}
}

// A shard's document is its share of each load: it compares with nothing
// until the shards are merged.
func TestCompareCapacityRefusesShard(t *testing.T) {
	for _, pair := range [][2]*result.Capacity{{shardFixture(), capacityFixture()}, {capacityFixture(), shardFixture()}} {
		if _, err := result.CompareCapacity(pair[0], pair[1], nil); err == nil || !strings.Contains(err.Error(), "is shard 0/2 of a sharded ladder") {
			t.Errorf("compare with a shard's document: %v", err)
		}
	}
	if _, err := result.CompareCapacity(mergedFixture(), capacityFixture(), nil); err != nil {
		t.Errorf("a merged ladder compares: %v", err)
	}
}
