// Package prom exposes a running load test's metrics (a *metrics.Collector)
// in the Prometheus text and OpenMetrics formats, with the maintained client
// library, so Prometheus and a Grafana board can watch a long soak.
//
// One call serves them:
//
//	addr, err := prom.Serve(ctx, "127.0.0.1:9464", collector) // GET /metrics until ctx ends
//
// A --workers parent serves the same metrics merged over its workers: a
// Source built from each worker's latest metrics.LiveState (MergeLive),
// plus lobbybench_worker_state{shard,state} (Options.Workers).
//
// Collector is a prometheus.Collector reading the live recorder at scrape
// time: run-wide counters from metrics.Collector.Live (atomics), per-step
// and per-message counters and latency from metrics.Collector.LiveKeys
// (histogram merges, no encoding) and violations per rule. Latency is
// exported twice per step and message type, both corrected for
// coordinated omission (from the intended send time):
//
//   - lobbybench_step_latency_seconds, a histogram with fixed buckets
//     (50µs … 60s), so PromQL can compute windowed percentiles:
//     histogram_quantile(0.99, rate(lobbybench_step_latency_seconds_bucket[1m]))
//   - lobbybench_step_latency_run_seconds, a summary whose quantiles are the
//     HDR histogram's exact percentiles since the start of the run
//     (the figures the final report will show).
//
// The lobby's own measures are exported live too:
// lobbybench_data_sent_bytes_total, lobbybench_data_received_bytes_total
// (payload bytes), lobbybench_players_in_room and
// lobbybench_players_in_game (players now).
//
// When Options.Target is set (lobbybench owns the server with
// --target-cmd, or embeds it), the server's process is exported too, from
// its latest /proc sample: lobbybench_target_cpu_seconds_total{mode="user"
// or "system"} (since its current process started: a restart resets it),
// lobbybench_target_rss_bytes, lobbybench_target_peak_rss_bytes,
// lobbybench_target_threads, lobbybench_target_open_fds and
// lobbybench_target_starts_total.
//
// Bucket counts are exact to the HDR histogram's resolution (3 significant
// digits); _sum is count × HDR mean. Counters carry the run start as their
// created timestamp. A scrape costs a merge of each recorder's histograms
// per key; results are cached for Options.CacheFor (1 s by default) so
// several scrapers cost no more than one.
package prom

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
)

// DefaultBuckets are the latency histogram's upper bounds, in seconds.
var DefaultBuckets = []float64{
	50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3,
	1, 2.5, 5, 10, 30, 60,
}

// Quantiles are the summary quantiles exported from the HDR histograms.
var Quantiles = []float64{0.5, 0.9, 0.99, 0.999}

// Options tune the exporter. The zero value is ready to use.
type Options struct {
	// ConstLabels are added to every lobbybench metric, e.g.
	// {"shard": "0/4", "scenario": "soak"}.
	ConstLabels prometheus.Labels
	// Buckets overrides DefaultBuckets (seconds, ascending).
	Buckets []float64
	// CacheFor is how long one scrape's figures are reused; 0 means 1 s,
	// negative disables the cache.
	CacheFor time.Duration
	// NoRuntime leaves out the Go runtime and process collectors (heap,
	// goroutines, CPU, RSS of the load generator itself).
	NoRuntime bool
	// Target, when set, returns the server's process figures so far
	// (lobbybench owns it with --target-cmd, or embeds it): exported as
	// lobbybench_target_* from its latest sample. Nil or no sample yet:
	// none.
	Target func() *result.TargetProcess
	// Workers, when set (a --workers parent), returns each worker's state:
	// exported as lobbybench_worker_state{shard,state}, 1 for the state it
	// is in and 0 for the others.
	Workers func() []WorkerState
	// Conns is the connection budget ServeWith's server shares with the
	// run's other observers (nil: one of its own).
	Conns *observe.Budget
}

// Source is what a Collector reads at scrape time: a *metrics.Collector
// (one process), or the merge of a --workers run's workers' latest
// metrics.LiveState.
type Source interface {
	Start() time.Time
	Live() metrics.Live
	LiveViolations() []metrics.RuleCount
	LiveKeys() []metrics.LiveKey
}

// Worker states of lobbybench_worker_state.
const (
	WorkerRunning = "running" // the process runs
	WorkerExited  = "exited"  // it ended on its own (a finished run, whatever its exit code)
	WorkerDied    = "died"    // killed by a signal or never started: its last figures stay counted
)

// WorkerStates are the states lobbybench_worker_state has a series for.
var WorkerStates = []string{WorkerRunning, WorkerExited, WorkerDied}

// WorkerState is one --workers worker's state now.
type WorkerState struct {
	Shard string // "i/n"
	State string // one of WorkerStates
}

// Collector is a prometheus.Collector over a live Source.
type Collector struct {
	c       Source
	buckets []float64
	ttl     time.Duration
	now     func() time.Time

	requests, failures, retries, dropped, violations *prometheus.Desc
	sessStarted, sessFinished, sessActive, elapsed   *prometheus.Desc
	dataSent, dataReceived, inRoom, inGame           *prometheus.Desc
	ruleViolations                                   *prometheus.Desc
	kind                                             [2]keyDescs

	target                                             func() *result.TargetProcess
	targetCPU, targetRSS, targetPeakRSS, targetThreads *prometheus.Desc
	targetFDs, targetStarts                            *prometheus.Desc
	workers                                            func() []WorkerState
	workerState                                        *prometheus.Desc

	mu     sync.Mutex
	cached []prometheus.Metric
	at     time.Time
}

// keyDescs are the descriptors of one key kind (steps or messages).
type keyDescs struct {
	requests, failures, retries, dropped *prometheus.Desc
	latency, runLatency, runUncorrected  *prometheus.Desc
	runSendLag                           *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector reading c.
func NewCollector(c Source, opts Options) *Collector {
	cl := opts.ConstLabels
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("lobbybench_"+name, help, labels, cl)
	}
	p := &Collector{
		c:       c,
		buckets: opts.Buckets,
		ttl:     opts.CacheFor,
		now:     time.Now,

		requests:       d("requests_total", "Requests completed (succeeded or failed), summed over steps, first sends only."),
		failures:       d("failures_total", "Requests that failed (timeout, refusal, violation, ...)."),
		retries:        d("retries_total", "Retransmissions, not counted in requests."),
		dropped:        d("dropped_starts_total", "Scheduled starts the generator could not keep (it was saturated)."),
		violations:     d("violations_total", "Protocol rule violations observed."),
		sessStarted:    d("sessions_started_total", "Simulated client sessions started."),
		sessFinished:   d("sessions_finished_total", "Simulated client sessions finished."),
		sessActive:     d("sessions_active", "Simulated client sessions running now."),
		elapsed:        d("elapsed_seconds", "Seconds since the run started."),
		dataSent:       d("data_sent_bytes_total", "UDP/TCP payload bytes the simulated clients sent (handed over at each step's end)."),
		dataReceived:   d("data_received_bytes_total", "UDP/TCP payload bytes the simulated clients received (handed over at each step's end)."),
		inRoom:         d("players_in_room", "Simulated players in a lobby room now, as the clients know it."),
		inGame:         d("players_in_game", "Simulated players in a started game now, as the clients know it."),
		ruleViolations: d("rule_violations_total", "Protocol rule violations by rule id.", "rule"),

		target:        opts.Target,
		targetCPU:     d("target_cpu_seconds_total", "CPU time the server's current process has used since it started, by mode (user, system).", "mode"),
		targetRSS:     d("target_rss_bytes", "The server process's resident memory at its latest sample."),
		targetPeakRSS: d("target_peak_rss_bytes", "The largest resident memory the server's process was sampled at since the run started."),
		targetThreads: d("target_threads", "The server process's threads at its latest sample."),
		targetFDs:     d("target_open_fds", "The server process's open file descriptors at its latest sample."),
		targetStarts:  d("target_starts_total", "Times the server process was started (1 + restarts)."),

		workers:     opts.Workers,
		workerState: d("worker_state", "A --workers worker's state (running, exited, died): 1 for the state it is in. A worker that died still counts with its last figures.", "shard", "state"),
	}
	if p.buckets == nil {
		p.buckets = DefaultBuckets
	}
	if p.ttl == 0 {
		p.ttl = time.Second
	}
	for i, k := range []struct{ prefix, label, what string }{{"step", "step", "scenario step"}, {"message", "message", "protocol message type"}} {
		p.kind[i] = keyDescs{
			requests: d(k.prefix+"_requests_total", "Requests completed per "+k.what+".", k.label),
			failures: d(k.prefix+"_failures_total", "Failed requests per "+k.what+" and reason.", k.label, "reason"),
			retries:  d(k.prefix+"_retries_total", "Retransmissions per "+k.what+".", k.label),
			dropped:  d(k.prefix+"_dropped_starts_total", "Starts not kept per "+k.what+".", k.label),
			latency: d(k.prefix+"_latency_seconds",
				"Latency per "+k.what+" from the intended send time (coordinated-omission corrected), bucketed for windowed quantiles.", k.label),
			runLatency: d(k.prefix+"_latency_run_seconds",
				"Exact HDR percentiles since the run started, from the intended send time (corrected).", k.label),
			runUncorrected: d(k.prefix+"_uncorrected_latency_run_seconds",
				"Exact HDR percentiles since the run started, from the actual send time (uncorrected).", k.label),
			runSendLag: d(k.prefix+"_send_lag_run_seconds",
				"Exact HDR percentiles since the run started of the harness's send lag: actual first send minus intended send time.", k.label),
		}
	}
	return p
}

// Describe sends every descriptor the Collector may use.
func (p *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.requests, p.failures, p.retries, p.dropped, p.violations,
		p.sessStarted, p.sessFinished, p.sessActive, p.elapsed, p.ruleViolations,
		p.dataSent, p.dataReceived, p.inRoom, p.inGame} {
		ch <- d
	}
	if p.target != nil {
		for _, d := range []*prometheus.Desc{p.targetCPU, p.targetRSS, p.targetPeakRSS, p.targetThreads, p.targetFDs, p.targetStarts} {
			ch <- d
		}
	}
	if p.workers != nil {
		ch <- p.workerState
	}
	for _, k := range p.kind {
		for _, d := range []*prometheus.Desc{k.requests, k.failures, k.retries, k.dropped, k.latency, k.runLatency, k.runUncorrected, k.runSendLag} {
			ch <- d
		}
	}
}

// Collect reads the live figures (or the cached ones, if fresh) and sends
// them as constant metrics.
func (p *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range p.metrics() {
		ch <- m
	}
}

func (p *Collector) metrics() []prometheus.Metric {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.cached != nil && p.ttl > 0 && now.Sub(p.at) < p.ttl {
		return p.cached
	}
	p.cached, p.at = p.build(now), now
	return p.cached
}

func (p *Collector) build(now time.Time) []prometheus.Metric {
	start := p.c.Start()
	var out []prometheus.Metric
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, float64(v), start, labels...))
	}
	gauge := func(d *prometheus.Desc, v float64) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v))
	}
	l := p.c.Live()
	counter(p.requests, l.Requests)
	counter(p.failures, l.Failures)
	counter(p.retries, l.Retries)
	counter(p.dropped, l.Dropped)
	counter(p.violations, l.Violations)
	counter(p.sessStarted, l.SessionsStarted)
	counter(p.sessFinished, l.SessionsFinished)
	gauge(p.sessActive, float64(max(l.SessionsStarted-l.SessionsFinished, 0)))
	gauge(p.elapsed, max(now.Sub(start).Seconds(), 0))
	counter(p.dataSent, l.DataSent)
	counter(p.dataReceived, l.DataReceived)
	gauge(p.inRoom, float64(l.InRoom))
	gauge(p.inGame, float64(l.InGame))
	for _, v := range p.c.LiveViolations() {
		counter(p.ruleViolations, v.Count, v.Rule)
	}
	out = append(out, p.targetMetrics()...)
	if p.workers != nil {
		for _, w := range p.workers() {
			for _, st := range WorkerStates {
				v := 0.0
				if st == w.State {
					v = 1
				}
				out = append(out, prometheus.MustNewConstMetric(p.workerState, prometheus.GaugeValue, v, w.Shard, st))
			}
		}
	}
	for _, k := range p.c.LiveKeys() {
		kd := p.kind[0]
		if k.Kind == metrics.KindMessage {
			kd = p.kind[1]
		}
		counter(kd.requests, k.Successes+k.Failures, k.Name)
		for reason, n := range k.FailuresByReason {
			counter(kd.failures, n, k.Name, reason)
		}
		counter(kd.retries, k.Retries, k.Name)
		counter(kd.dropped, k.Dropped, k.Name)
		count, sum, buckets := histogramOf(k.Corrected, p.buckets)
		out = append(out, prometheus.MustNewConstHistogramWithCreatedTimestamp(kd.latency, count, sum, buckets, start, k.Name))
		for _, s := range []struct {
			d *prometheus.Desc
			h *hdrhistogram.Histogram
		}{{kd.runLatency, k.Corrected}, {kd.runUncorrected, k.Uncorrected}, {kd.runSendLag, k.SendLag}} {
			count, sum, qs := summaryOf(s.h)
			out = append(out, prometheus.MustNewConstSummaryWithCreatedTimestamp(s.d, count, sum, qs, start, k.Name))
		}
	}
	return out
}

// targetMetrics are the server process's figures at its latest sample:
// none until it has one.
func (p *Collector) targetMetrics() []prometheus.Metric {
	if p.target == nil {
		return nil
	}
	tp := p.target()
	if tp == nil || len(tp.Samples) == 0 {
		return nil
	}
	s := tp.Samples[len(tp.Samples)-1]
	out := []prometheus.Metric{
		prometheus.MustNewConstMetric(p.targetCPU, prometheus.CounterValue, s.UserNS.Seconds(), "user"),
		prometheus.MustNewConstMetric(p.targetCPU, prometheus.CounterValue, s.SystemNS.Seconds(), "system"),
		prometheus.MustNewConstMetric(p.targetRSS, prometheus.GaugeValue, float64(s.RSSBytes)),
		prometheus.MustNewConstMetric(p.targetPeakRSS, prometheus.GaugeValue, float64(tp.PeakRSSBytes)),
		prometheus.MustNewConstMetric(p.targetThreads, prometheus.GaugeValue, float64(s.Threads)),
		prometheus.MustNewConstMetric(p.targetStarts, prometheus.CounterValue, float64(tp.Starts)),
	}
	if s.OpenFDs >= 0 {
		out = append(out, prometheus.MustNewConstMetric(p.targetFDs, prometheus.GaugeValue, float64(s.OpenFDs)))
	}
	return out
}

// histogramOf turns an HDR histogram in µs into Prometheus buckets in
// seconds: for each upper bound, the count of values whose HDR bucket
// starts at or below it.
func histogramOf(h *hdrhistogram.Histogram, bounds []float64) (count uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(bounds))
	n := h.TotalCount()
	if n == 0 {
		for _, b := range bounds {
			buckets[b] = 0
		}
		return 0, 0, buckets
	}
	bars := h.Distribution()
	i, cum := 0, int64(0)
	for _, b := range bounds {
		limitUS := b * 1e6
		for i < len(bars) && float64(bars[i].From) <= limitUS {
			cum += bars[i].Count
			i++
		}
		buckets[b] = uint64(cum)
	}
	return uint64(n), h.Mean() * float64(n) / 1e6, buckets
}

// summaryOf gives the exact HDR quantiles in seconds.
func summaryOf(h *hdrhistogram.Histogram) (count uint64, sum float64, qs map[float64]float64) {
	qs = make(map[float64]float64, len(Quantiles))
	n := h.TotalCount()
	pcts := make([]float64, len(Quantiles))
	for i, q := range Quantiles {
		pcts[i] = q * 100
	}
	vals := h.ValueAtPercentilesSlice(pcts)
	for i, q := range Quantiles {
		qs[q] = float64(vals[i]) / 1e6
	}
	return uint64(n), h.Mean() * float64(n) / 1e6, qs
}

// NewRegistry returns a registry holding a Collector for c and, unless
// opts.NoRuntime, the Go runtime and process collectors.
func NewRegistry(c Source, opts Options) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(NewCollector(c, opts)); err != nil {
		return nil, err
	}
	if !opts.NoRuntime {
		if err := reg.Register(collectors.NewGoCollector()); err != nil {
			return nil, err
		}
		if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Handler serves c's metrics (and the runtime's) at any path, in the
// Prometheus text format or OpenMetrics when the scraper asks for it.
func Handler(c Source, opts Options) (http.Handler, error) {
	reg, err := NewRegistry(c, opts)
	if err != nil {
		return nil, err
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, Registry: reg}), nil
}

// Serve listens on addr (e.g. "127.0.0.1:9464", ":9464"; port 0 picks one)
// and serves c's metrics at /metrics until ctx is done, then shuts the
// server down. It returns once listening, with the bound address, so a
// bad or busy address is an error here rather than later.
func Serve(ctx context.Context, addr string, c Source) (net.Addr, error) {
	return ServeWith(ctx, addr, c, Options{})
}

// ServeWith is Serve with options.
func ServeWith(ctx context.Context, addr string, c Source, opts Options) (net.Addr, error) {
	h, err := Handler(c, opts)
	if err != nil {
		return nil, fmt.Errorf("prom: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("prom: metrics address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "lobbybench: metrics at /metrics")
	})
	srv := observe.Serve(ln, mux, opts.Conns)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr(), nil
}
