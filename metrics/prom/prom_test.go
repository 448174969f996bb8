package prom

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture records known samples: "join" gets 100 successes at 10, 30, …,
// 1990 µs (exact in HDR below 2048) and 3 failures; the message "Reply"
// gets 5 successes; two violations of one rule.
func fixture() (*metrics.Collector, []int64) {
	c := metrics.NewCollector(t0)
	join := c.Step("join")
	reply := c.Message("Reply")
	r := c.NewRecorder()
	var vals []int64
	for i := range 100 {
		us := int64(10 + 20*i)
		vals = append(vals, us)
		r.Record(join, t0, t0.Add(time.Duration(us/2)*time.Microsecond), t0.Add(time.Duration(us)*time.Microsecond))
	}
	for range 5 {
		r.Record(reply, t0, t0, t0.Add(300*time.Microsecond))
	}
	r.Fail(join, result.ReasonTimeout, t0.Add(time.Second))
	r.Fail(join, result.ReasonTimeout, t0.Add(time.Second))
	r.Fail(join, result.ReasonJoinDeny, t0.Add(time.Second))
	r.Retry(join)
	r.Dropped(join)
	r.SessionStarted()
	r.SessionStarted()
	r.SessionFinished()
	r.Violation("U-CRC", t0, []byte{1}, nil, "")
	r.Violation("U-CRC", t0, []byte{2}, nil, "")
	r.Bytes(join, 120, 140)
	r.Bytes(-1, 5, 0)
	r.Players(t0, 3, 0)
	r.Players(t0.Add(time.Second), -1, 2)
	return c, vals
}

func gather(t *testing.T, c *metrics.Collector, opts Options) map[string]*dto.MetricFamily {
	t.Helper()
	opts.NoRuntime = true
	reg, err := NewRegistry(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// find returns the metric of family name whose labels include want.
func find(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want ...string) *dto.Metric {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no family %s", name)
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if have[want[i]] != want[i+1] {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s with labels %v", name, want)
	return nil
}

func TestCollectorValues(t *testing.T) {
	c, vals := fixture()
	mfs := gather(t, c, Options{ConstLabels: prometheus.Labels{"shard": "0/2"}})

	counters := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"lobbybench_requests_total", nil, 103}, // the steps only: "Reply" re-records
		{"lobbybench_failures_total", nil, 3},
		{"lobbybench_retries_total", nil, 1},
		{"lobbybench_dropped_starts_total", nil, 1},
		{"lobbybench_violations_total", nil, 2},
		{"lobbybench_sessions_started_total", nil, 2},
		{"lobbybench_sessions_finished_total", nil, 1},
		{"lobbybench_data_sent_bytes_total", nil, 125},
		{"lobbybench_data_received_bytes_total", nil, 140},
		{"lobbybench_rule_violations_total", []string{"rule", "U-CRC"}, 2},
		{"lobbybench_step_requests_total", []string{"step", "join"}, 103},
		{"lobbybench_step_failures_total", []string{"step", "join", "reason", "timeout"}, 2},
		{"lobbybench_step_failures_total", []string{"step", "join", "reason", "join_deny"}, 1},
		{"lobbybench_step_retries_total", []string{"step", "join"}, 1},
		{"lobbybench_step_dropped_starts_total", []string{"step", "join"}, 1},
		{"lobbybench_message_requests_total", []string{"message", "Reply"}, 5},
	}
	for _, tt := range counters {
		m := find(t, mfs, tt.name, tt.labels...)
		if got := m.GetCounter().GetValue(); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
		if ct := m.GetCounter().GetCreatedTimestamp().AsTime(); !ct.Equal(t0) {
			t.Errorf("%s created %v, want the run start", tt.name, ct)
		}
		if l := find(t, mfs, tt.name, "shard", "0/2"); l == nil {
			t.Errorf("%s lacks the const label", tt.name)
		}
	}
	if g := find(t, mfs, "lobbybench_sessions_active").GetGauge().GetValue(); g != 1 {
		t.Errorf("sessions_active = %v", g)
	}
	if r, g := find(t, mfs, "lobbybench_players_in_room").GetGauge().GetValue(), find(t, mfs, "lobbybench_players_in_game").GetGauge().GetValue(); r != 2 || g != 2 {
		t.Errorf("players in room %v, in game %v; want 2 and 2", r, g)
	}

	// Histogram: buckets hold exactly the samples ≤ each bound.
	h := find(t, mfs, "lobbybench_step_latency_seconds", "step", "join").GetHistogram()
	if h.GetSampleCount() != 100 {
		t.Errorf("histogram count %d", h.GetSampleCount())
	}
	for _, b := range h.GetBucket() {
		var want uint64
		for _, v := range vals {
			if float64(v) <= b.GetUpperBound()*1e6 {
				want++
			}
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	var sum int64
	for _, v := range vals {
		sum += v
	}
	if got, want := h.GetSampleSum(), float64(sum)/1e6; got < want*0.999 || got > want*1.001 {
		t.Errorf("histogram sum %v, want ≈ %v", got, want)
	}

	// Summaries: the exact HDR percentiles, corrected, uncorrected and
	// send lag.
	for _, tt := range []struct {
		name  string
		scale int64 // uncorrected and send-lag samples are half the corrected ones
	}{{"lobbybench_step_latency_run_seconds", 1}, {"lobbybench_step_uncorrected_latency_run_seconds", 2}, {"lobbybench_step_send_lag_run_seconds", 2}} {
		s := find(t, mfs, tt.name, "step", "join").GetSummary()
		if s.GetSampleCount() != 100 {
			t.Errorf("%s count %d", tt.name, s.GetSampleCount())
		}
		want := map[float64]float64{0.5: 990, 0.9: 1790, 0.99: 1970, 0.999: 1990}
		for _, q := range s.GetQuantile() {
			w := want[q.GetQuantile()] / float64(tt.scale) / 1e6
			if tt.scale == 2 { // (us - us/2) rounds up for odd halves
				w = float64(int64(want[q.GetQuantile()])-int64(want[q.GetQuantile()])/2) / 1e6
			}
			if q.GetValue() != w {
				t.Errorf("%s q%v = %v, want %v", tt.name, q.GetQuantile(), q.GetValue(), w)
			}
		}
	}
	if s := find(t, mfs, "lobbybench_message_latency_run_seconds", "message", "Reply").GetSummary(); s.GetSampleCount() != 5 {
		t.Errorf("message summary count %d", s.GetSampleCount())
	}
}

func TestCollectorEmpty(t *testing.T) {
	c := metrics.NewCollector(t0)
	c.Step("join") // registered but never recorded: not exported
	mfs := gather(t, c, Options{})
	if _, ok := mfs["lobbybench_step_requests_total"]; ok {
		t.Error("a step with no samples was exported")
	}
	if v := find(t, mfs, "lobbybench_requests_total").GetCounter().GetValue(); v != 0 {
		t.Errorf("requests %v", v)
	}
}

func TestCollectorCache(t *testing.T) {
	c := metrics.NewCollector(t0)
	k := c.Step("join")
	r := c.NewRecorder()
	r.Record(k, t0, t0, t0.Add(time.Millisecond))
	now := t0
	for _, tt := range []struct {
		ttl     time.Duration
		advance time.Duration
		want    float64 // requests seen by the second collection
	}{
		{time.Hour, time.Second, 1},       // fresh cache reused
		{time.Second, 2 * time.Second, 2}, // stale cache rebuilt
		{-1, 0, 2},                        // cache off
	} {
		p := NewCollector(c, Options{CacheFor: tt.ttl})
		p.now = func() time.Time { return now }
		before := requestsOf(t, p)
		r.Record(k, t0, t0, t0.Add(time.Millisecond))
		now = now.Add(tt.advance)
		if got := requestsOf(t, p); got != before+tt.want-1 {
			t.Errorf("ttl %v: second collection saw %v requests after %v, want +%v", tt.ttl, got, before, tt.want-1)
		}
	}
}

func requestsOf(t *testing.T, p *Collector) float64 {
	t.Helper()
	for _, m := range p.metrics() {
		if strings.Contains(m.Desc().String(), `"lobbybench_requests_total"`) {
			var d dto.Metric
			if err := m.Write(&d); err != nil {
				t.Fatal(err)
			}
			return d.GetCounter().GetValue()
		}
	}
	t.Fatal("no lobbybench_requests_total")
	return 0
}

func TestServe(t *testing.T) {
	c, _ := fixture()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0", c)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr.String()
	get := func(path, accept string) (int, string, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ct, body := get("/metrics", "")
	if code != 200 || !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics: %d %s", code, ct)
	}
	for _, want := range []string{
		"lobbybench_requests_total 103\n",
		`lobbybench_step_latency_seconds_bucket{step="join",le="0.001"} 50`,
		`lobbybench_step_latency_run_seconds{step="join",quantile="0.99"} 0.00197`,
		"go_goroutines ", // runtime collectors on by default
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	code, ct, body = get("/metrics", "application/openmetrics-text; version=1.0.0")
	if code != 200 || !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("OpenMetrics: %d %s, ends %q", code, ct, body[max(len(body)-20, 0):])
	}
	if !strings.Contains(body, "# TYPE lobbybench_requests counter\n") || !strings.Contains(body, "lobbybench_requests_total 103.0\n") {
		t.Error("OpenMetrics output lacks the request counter")
	}
	if code, _, body := get("/", ""); code != 200 || !strings.Contains(body, "/metrics") {
		t.Errorf("/: %d %q", code, body)
	}
	if code, _, _ := get("/nope", ""); code != 404 {
		t.Errorf("/nope: %d", code)
	}

	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr.String(), time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still accepting 10s after its context ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeBadAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, addr := range []string{ln.Addr().String(), "127.0.0.1:notaport"} {
		if _, err := Serve(context.Background(), addr, metrics.NewCollector(t0)); err == nil || !strings.Contains(err.Error(), "metrics address") {
			t.Errorf("Serve(%q) = %v, want a metrics address error", addr, err)
		}
	}
}

// BenchmarkCollect measures one uncached scrape of a run with 8 recorders
// and 10 steps, each with 10k samples.
func BenchmarkCollect(b *testing.B) {
	c := metrics.NewCollector(t0)
	var keys []metrics.Key
	for i := range 10 {
		keys = append(keys, c.Step(fmt.Sprintf("step%d", i)))
	}
	for w := range 8 {
		r := c.NewRecorder()
		for i := range 10_000 {
			k := keys[i%len(keys)]
			d := time.Duration(50+(i*37+w)%50_000) * time.Microsecond
			r.Record(k, t0, t0, t0.Add(d))
		}
	}
	p := NewCollector(c, Options{CacheFor: -1})
	b.ReportAllocs()
	for b.Loop() {
		if len(p.metrics()) == 0 {
			b.Fatal("no metrics")
		}
	}
}

// TestTargetMetrics: the server's process figures are exported from its
// latest sample (CPU by mode, RSS, peak RSS, threads, open files,
// starts), and not at all before its first sample or without a source.
func TestTargetMetrics(t *testing.T) {
	c, _ := fixture()
	tp := &result.TargetProcess{Command: "srv", Starts: 2, PeakRSSBytes: 64 << 20, Samples: []result.ProcSample{
		{OffsetNS: time.Second, UserNS: time.Second, SystemNS: 100 * time.Millisecond, RSSBytes: 32 << 20, Threads: 4, OpenFDs: 9},
		{OffsetNS: 2 * time.Second, UserNS: 1500 * time.Millisecond, SystemNS: 250 * time.Millisecond, RSSBytes: 48 << 20, Threads: 5, OpenFDs: 11},
	}}
	tests := []struct {
		name   string
		target func() *result.TargetProcess
		want   map[string]float64 // family{mode} → value; nil: no target family
	}{
		{"sampled", func() *result.TargetProcess { return tp }, map[string]float64{
			"lobbybench_target_cpu_seconds_total{user}": 1.5, "lobbybench_target_cpu_seconds_total{system}": 0.25,
			"lobbybench_target_rss_bytes": 48 << 20, "lobbybench_target_peak_rss_bytes": 64 << 20,
			"lobbybench_target_threads": 5, "lobbybench_target_open_fds": 11, "lobbybench_target_starts_total": 2}},
		{"no sample yet", func() *result.TargetProcess { return &result.TargetProcess{Command: "srv", Starts: 1} }, nil},
		{"no source", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mfs := gather(t, c, Options{Target: tt.target})
			if tt.want == nil {
				for name := range mfs {
					if strings.HasPrefix(name, "lobbybench_target_") {
						t.Errorf("family %s exported without a sample", name)
					}
				}
				return
			}
			for key, want := range tt.want {
				name, mode, _ := strings.Cut(strings.TrimSuffix(key, "}"), "{")
				var labels []string
				if mode != "" {
					labels = []string{"mode", mode}
				}
				m := find(t, mfs, name, labels...)
				got := m.GetGauge().GetValue()
				if m.GetCounter() != nil {
					got = m.GetCounter().GetValue()
				}
				if got != want {
					t.Errorf("%s = %v, want %v", key, got, want)
				}
			}
		})
	}
}

// TestWorkerStates: a --workers parent's lobbybench_worker_state has one
// series per worker and state, 1 for the state the worker is in.
func TestWorkerStates(t *testing.T) {
	states := []WorkerState{{"0/3", WorkerRunning}, {"1/3", WorkerExited}, {"2/3", WorkerDied}}
	fams := gather(t, metrics.NewCollector(time.Now()), Options{NoRuntime: true, Workers: func() []WorkerState { return states }})
	f := fams["lobbybench_worker_state"]
	if f == nil || len(f.Metric) != len(states)*len(WorkerStates) {
		t.Fatalf("lobbybench_worker_state: %v", f)
	}
	got := map[[2]string]float64{}
	for _, m := range f.Metric {
		var shard, state string
		for _, l := range m.Label {
			switch l.GetName() {
			case "shard":
				shard = l.GetValue()
			case "state":
				state = l.GetValue()
			}
		}
		got[[2]string{shard, state}] = m.Gauge.GetValue()
	}
	for _, w := range states {
		for _, st := range WorkerStates {
			want := 0.0
			if st == w.State {
				want = 1
			}
			if v, ok := got[[2]string{w.Shard, st}]; !ok || v != want {
				t.Errorf("worker %s state %s = %v (present %v), want %v", w.Shard, st, v, ok, want)
			}
		}
	}
	if _, ok := gather(t, metrics.NewCollector(time.Now()), Options{NoRuntime: true})["lobbybench_worker_state"]; ok {
		t.Error("a single process exports lobbybench_worker_state")
	}
}
