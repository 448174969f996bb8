package result

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestMergeExact splits random samples over shards and checks the merged
// percentiles equal those of one histogram fed every sample.
func TestMergeExact(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const shards = 3
	all := NewLatencyHistogram()
	allSec := map[int64]*hdrhistogram.Histogram{}
	runs := make([]*Run, shards)
	for i := range runs {
		h, u := NewLatencyHistogram(), NewLatencyHistogram()
		secs := map[int64]*hdrhistogram.Histogram{}
		for n := 0; n < 20000; n++ {
			// log-normal-ish spread from ~100µs to seconds
			v := int64(100 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*50))
			_ = h.RecordValue(v)
			_ = u.RecordValue(v / 2)
			_ = all.RecordValue(v)
			sec := int64(n % (5 + i)) // shards cover different seconds
			if secs[sec] == nil {
				secs[sec] = NewSecondHistogram()
			}
			if allSec[sec] == nil {
				allSec[sec] = NewSecondHistogram()
			}
			_ = secs[sec].RecordValue(v)
			_ = allSec[sec].RecordValue(v)
		}
		r := NewRun()
		r.StartedAt = fixedStart.Add(time.Duration(i) * time.Millisecond)
		r.DurationNS = 10 * time.Second
		lat, err := NewLatency(h)
		if err != nil {
			t.Fatal(err)
		}
		unc, err := NewLatency(u)
		if err != nil {
			t.Fatal(err)
		}
		r.Steps = []Series{{Name: "join", Requests: 20003, Successes: 20000, Failures: 1, Cut: 2, CutSilent: 1,
			FailuresByReason: map[string]int64{ReasonTimeout: 1}, Latency: lat, Uncorrected: unc}}
		r.Totals = Totals{Requests: 20003, Successes: 20000, Failures: 1, Cut: 2, FailuresByReason: map[string]int64{ReasonTimeout: 1}, SessionsStarted: 7}
		for s := int64(0); s < int64(5+i); s++ {
			r.TimeSeries = append(r.TimeSeries, pointOf(t, s, 1, 0))
			p, err := NewPoint(s, secs[s].TotalCount(), 0, secs[s])
			if err != nil {
				t.Fatal(err)
			}
			r.TimeSeries[len(r.TimeSeries)-1] = p
		}
		r.Violations = []Violation{{Rule: "U-CRC", Count: 2, Samples: []ViolationSample{{Packet: "aa"}, {Packet: "bb"}}}}
		r.Thresholds = []ThresholdResult{{Name: "x", Pass: true}}
		// round-trip through JSON as a real shard file would
		var buf bytes.Buffer
		if err := writeJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRun(&buf)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = back
	}
	m, err := Merge(runs...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewLatency(all)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Steps[0].Latency
	if got.Count != want.Count || got.P50US != want.P50US || got.P90US != want.P90US || got.P99US != want.P99US ||
		got.P999US != want.P999US || got.MaxUS != want.MaxUS || got.MinUS != want.MinUS || got.MeanUS != want.MeanUS {
		t.Errorf("merged latency %+v\nwant %+v", got, want)
	}
	if got.Hist != want.Hist {
		t.Error("merged histogram encoding differs from the single histogram's")
	}
	if m.Shards != shards || m.Totals.Requests != 3*20003 || m.Totals.FailuresByReason[ReasonTimeout] != 3 || m.Totals.SessionsStarted != 21 {
		t.Errorf("merged totals %+v shards %d", m.Totals, m.Shards)
	}
	if s := m.Steps[0]; s.Cut != 6 || s.CutSilent != 3 {
		t.Errorf("merged cut %d, silent %d; want 6, 3", s.Cut, s.CutSilent)
	}
	if m.Steps[0].Uncorrected.Count != 60000 {
		t.Errorf("uncorrected count %d", m.Steps[0].Uncorrected.Count)
	}
	if len(m.TimeSeries) != 7 {
		t.Fatalf("time series has %d points, want 7 (union of seconds)", len(m.TimeSeries))
	}
	for _, p := range m.TimeSeries {
		h := allSec[p.Second]
		if p.Requests != h.TotalCount() || p.P50US != h.ValueAtPercentile(50) || p.P99US != h.ValueAtPercentile(99) {
			t.Errorf("second %d: %+v, want req %d p50 %d p99 %d", p.Second, p, h.TotalCount(), h.ValueAtPercentile(50), h.ValueAtPercentile(99))
		}
	}
	if v := m.Violations; len(v) != 1 || v[0].Count != 6 || len(v[0].Samples) != MaxViolationSamples {
		t.Errorf("violations %+v", v)
	}
	if len(m.Thresholds) != 0 {
		t.Errorf("merge kept thresholds %+v", m.Thresholds)
	}
	if !m.StartedAt.Equal(fixedStart) || m.DurationNS != 10*time.Second+2*time.Millisecond {
		t.Errorf("start %v duration %v", m.StartedAt, m.DurationNS)
	}
	// inputs untouched
	if runs[0].Steps[0].Latency.Count != 20000 {
		t.Error("merge modified its input")
	}
}

func TestMergeErrors(t *testing.T) {
	bad := sampleRun(t)
	bad.Steps[0].Latency.Hist = "not base64!"
	conf := NewRun()
	conf.Kind = KindConform
	tests := []struct {
		name string
		runs []*Run
		want string
	}{
		{"none", nil, "no runs"},
		{"nil", []*Run{nil}, "nil"},
		{"wrong kind", []*Run{conf}, "kind"},
		{"bad histogram", []*Run{bad}, "decode histogram"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.runs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	base := sampleRun(t) // join p99 45.02ms, error rate 10%
	tests := []struct {
		name   string
		mutate func(r *Run)
		gates  []Gate
		want   []string // breach subjects
	}{
		{"identical", func(r *Run) {}, DefaultGates(), nil},
		// p99 +9.3%: under the 10% gate
		{"small p99 increase", func(r *Run) { r.Steps[1].Latency = latencyOf(t, ramp(1000, 1100, 45)...) }, DefaultGates(), nil},
		{"big p99 increase", func(r *Run) { r.Steps[1].Latency = latencyOf(t, ramp(1000, 1200, 45)...) }, DefaultGates(), []string{"join"}},
		// p50 690µs -> 1.19ms: the 99% intervals of 100 samples (560-830µs,
		// 1.06-1.33ms) are apart.
		{"p50 gate", func(r *Run) { r.Steps[0].Latency = latencyOf(t, ramp(700, 10, 100)...) }, []Gate{{Metric: GateP50IncreasePct, Max: 5}}, []string{"list_rooms"}},
		// p50 690µs -> 790µs (+14%) is within the noise of 100 samples.
		{"p50 within noise", func(r *Run) { r.Steps[0].Latency = latencyOf(t, ramp(300, 10, 100)...) }, []Gate{{Metric: GateP50IncreasePct, Max: 5}}, nil},
		// The same big increase under a 10ms floor does not break.
		{"under the floor", func(r *Run) { r.Steps[1].Latency = latencyOf(t, ramp(1000, 1200, 45)...) }, []Gate{{Metric: GateP99IncreasePct, Max: 10, MinDeltaUS: 10000}}, nil},
		// 5/50 -> 6/50 is +2pp on join, +0.67pp run-wide (6/150)
		{"error rate", func(r *Run) { r.Steps[1].Failures = 6; r.Totals.Failures = 6 }, DefaultGates(), []string{"join", "run"}},
		// 5/50 -> 5/49 is +0.2pp: under 0.5
		{"error rate small", func(r *Run) { r.Steps[1].Requests = 49 }, DefaultGates(), nil},
		{"new rule", func(r *Run) { r.Violations = append(r.Violations, Violation{Rule: "A-SEQ", Count: 2}) }, DefaultGates(), []string{"A-SEQ"}},
		{"new rule allowed", func(r *Run) { r.Violations = append(r.Violations, Violation{Rule: "A-SEQ", Count: 2}) }, nil, nil},
		// new step: no latency gate, but its error rate counts from 0
		{"new step", func(r *Run) {
			r.Steps = append(r.Steps, Series{Name: "ready", Requests: 10, Failures: 1, Latency: latencyOf(t, 99999)})
		}, DefaultGates(), []string{"ready"}},
		// faster is never a breach
		{"improvement", func(r *Run) { r.Steps[1].Latency = latencyOf(t, ramp(10, 10, 45)...) }, DefaultGates(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nr := sampleRun(t)
			tt.mutate(nr)
			c, err := Compare(base, nr, tt.gates)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range c.Breaches {
				got = append(got, b.Subject)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("breaches %v, want %v (deltas %+v)", c.Breaches, tt.want, c.Steps)
			}
			if c.OK() != (len(tt.want) == 0) {
				t.Error("OK disagrees with Breaches")
			}
			if _, err := json.Marshal(c); err != nil {
				t.Errorf("comparison does not marshal: %v", err)
			}
		})
	}
	if _, err := Compare(base, base, []Gate{{Metric: "p42", Max: 1}}); err == nil {
		t.Error("unknown gate accepted")
	}
}

func TestCompareDeltaValues(t *testing.T) {
	base := sampleRun(t)
	nr := sampleRun(t)
	nr.Steps[1].Latency = latencyOf(t, ramp(2000, 2000, 45)...) // roughly doubles
	nr.Steps[1].Failures = 10
	c, err := Compare(base, nr, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Steps[1]
	wantP99 := float64(d.NewP99US-d.BaseP99US) / float64(d.BaseP99US) * 100
	if d.P99ChangePct != wantP99 || d.P99ChangePct < 99 || d.P99ChangePct > 101 {
		t.Errorf("p99 change %.3f%%, want %.3f (~100)", d.P99ChangePct, wantP99)
	}
	if d.ErrorRateChangePP < 9.999 || d.ErrorRateChangePP > 10.001 { // 10% -> 20%
		t.Errorf("error rate change %.4fpp, want 10", d.ErrorRateChangePP)
	}
}

func TestCompareConform(t *testing.T) {
	base := sampleConform()
	nr := sampleConform()
	nr.Cases[0].Verdict = VerdictFail // pass -> fail
	nr.Cases[1].Verdict = VerdictPass // fail -> pass
	nr.Cases = append(nr.Cases, Case{ID: "udp-lobby/9/1", Verdict: VerdictFail})
	c, err := CompareConform(base, nr, DefaultGates())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.NewlyFailing) != 2 || c.NewlyFailing[0].ID != "udp-lobby/5/1" || c.NewlyFailing[1].ID != "udp-lobby/9/1" || c.NewlyFailing[1].BaseVerdict != "" {
		t.Errorf("newly failing %+v", c.NewlyFailing)
	}
	if len(c.Fixed) != 1 || c.Fixed[0].ID != "udp-lobby/5/2" {
		t.Errorf("fixed %+v", c.Fixed)
	}
	if c.OK() || len(c.Breaches) != 2 {
		t.Errorf("breaches %+v", c.Breaches)
	}
	same, err := CompareConform(base, base, DefaultGates())
	if err != nil || !same.OK() || len(same.Changed) != 0 {
		t.Errorf("self comparison %+v %v", same, err)
	}
}

func TestRead(t *testing.T) {
	var runJSON, confJSON bytes.Buffer
	if err := writeJSON(&runJSON, sampleRun(t)); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(&confJSON, sampleConform()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in, wantErr string
	}{
		{"run", runJSON.String(), ""},
		{"conform", confJSON.String(), ""},
		{"future version", `{"schema_version":99,"kind":"run"}`, "schema_version 99"},
		{"no version", `{"kind":"run"}`, "schema_version 0"},
		{"unknown kind", `{"schema_version":1,"kind":"bench"}`, "unknown kind"},
		{"not json", `hello`, "not a lobbybench result"},
		{"bad field", `{"schema_version":1,"kind":"run","totals":"x"}`, "run document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Read(strings.NewReader(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || v != nil {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := ReadRun(strings.NewReader(confJSON.String())); err == nil {
		t.Error("ReadRun accepted a conform document")
	}
	if _, err := ReadConform(strings.NewReader(runJSON.String())); err == nil {
		t.Error("ReadConform accepted a run document")
	}
	// round trip is lossless
	back, err := ReadRun(strings.NewReader(runJSON.String()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := writeJSON(&again, back); err != nil {
		t.Fatal(err)
	}
	if again.String() != runJSON.String() {
		t.Error("run JSON does not round-trip")
	}
}

func TestLatencyHistogramCountMismatch(t *testing.T) {
	l := latencyOf(t, 1, 2, 3)
	l.Count = 4
	if _, err := l.Histogram(); err == nil {
		t.Error("count mismatch not detected")
	}
}

func TestRunLookup(t *testing.T) {
	r := sampleRun(t)
	tests := []struct {
		name    string
		lookup  func(string) (Series, bool)
		key     string
		wantReq int64
		wantOK  bool
	}{
		{"step", r.Step, "join", 50, true},
		{"missing step", r.Step, "ready", 0, false},
		{"message", r.Message, "JoinReply", 45, true},
		{"step name is not a message", r.Message, "join", 0, false},
	}
	for _, tt := range tests {
		s, ok := tt.lookup(tt.key)
		if ok != tt.wantOK || s.Requests != tt.wantReq {
			t.Errorf("%s: got %v %d, want %v %d", tt.name, ok, s.Requests, tt.wantOK, tt.wantReq)
		}
	}
}

// TestLatencyCI: the order-statistic interval brackets the percentile,
// narrows with more samples, and two samples of one distribution are not
// judged different.
func TestLatencyCI(t *testing.T) {
	small := histOf(t, ramp(1, 1, 100)...)
	big := histOf(t, ramp(1, 1, 100000)...)
	if lo, hi := LatencyCI(small, 0.5); lo > 50 || hi < 50 || hi-lo < 20 {
		t.Errorf("100 samples: p50 in [%d, %d], want a wide interval around 50", lo, hi)
	}
	if lo, hi := LatencyCI(big, 0.99); lo > 99000 || hi < 99000 || float64(hi-lo) > 0.01*99000 {
		t.Errorf("100000 samples: p99 in [%d, %d], want within 1%% of 99000", lo, hi)
	}
	if lo, hi := LatencyCI(histOf(t), 0.99); lo != 0 || hi != 0 {
		t.Errorf("empty: [%d, %d]", lo, hi)
	}
	// Two runs of one distribution (interleaved halves of the same
	// samples): new's p99 is a little higher, over a 0% gate, but within
	// the noise; 5% slower on 10,000 samples each is beyond it.
	var a, b, slow []int64
	for i, v := range ramp(10, 1, 20000) {
		if i%2 == 0 {
			a = append(a, v)
		} else {
			b = append(b, v+v/500) // 0.2%: inside the noise of 10,000 samples
			slow = append(slow, v+v/20)
		}
	}
	base, nr := sampleRun(t), sampleRun(t)
	base.Steps[1].Latency = latencyOf(t, a...)
	nr.Steps[1].Latency = latencyOf(t, b...)
	gates := []Gate{{Metric: GateP99IncreasePct, Max: 0}}
	c, err := Compare(base, nr, gates)
	if err != nil {
		t.Fatal(err)
	}
	if !c.OK() || len(c.Spared) != 1 || !strings.Contains(c.Spared[0], "within the noise") {
		t.Errorf("one distribution judged a regression: breaches %v, spared %v (p99 %d -> %d)", c.Breaches, c.Spared, c.Steps[1].BaseP99US, c.Steps[1].NewP99US)
	}
	nr.Steps[1].Latency = latencyOf(t, slow...)
	if c, err = Compare(base, nr, gates); err != nil || c.OK() {
		t.Errorf("5%% slower on 10,000 samples not judged a regression: %v %v", err, c.Spared)
	}
}
