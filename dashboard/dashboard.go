// Package dashboard serves a live page a run can be watched in (`run
// --dashboard-addr`): the HTML report's charts and tables (package
// reports' renderer, nothing drawn twice) of the run so far, updated
// about once a second, led by the headline the final report would have
// were the run to end now, with the thresholds judged so far; then, once
// the run is over, the final report itself, the same document the --html
// file holds, for as long as the caller keeps serving (`--serve-linger`).
//
// The page (GET /) is a plain HTML shell with a small inline script, no
// framework and no build step. It polls GET /state, a small JSON document
// (headline, counters, thresholds, a sequence number), every second, and
// when the sequence moved fetches GET /report, the report document, and
// shows its body. While the run goes on, the time so far is shown against
// the planned length (Options.Planned) with a progress bar. A poll that
// fails (the server gone, a network cut) during the run turns the page's
// connection line into "connection lost, retrying…" with the time of the
// last update, and the polling goes on: the page recovers by itself when
// the server answers again. Once the final report is shown the page says
// "the run is over (final report below)" and polls no more: the server
// going away after --serve-linger is the end, not a lost connection.
//
// The run is sampled once a second (Server.Update), whoever watches; the
// report is rendered at most once per sample, on the first request that
// wants it, never per request: a page left open costs the run one render
// a second, none when nobody watches.
package dashboard

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// DefaultEvery is how often a Server started by Listen samples the run.
const DefaultEvery = time.Second

// Source returns the run so far with its thresholds judged (engine.Live.Run).
type Source func() (*result.Run, error)

// Options tune a Server. The zero value is ready to use.
type Options struct {
	// HTML are the report's options, as the --html file is written with.
	HTML reports.HTMLOptions
	// Every is how often Listen's server samples the run; 0 means
	// DefaultEvery.
	Every time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Conns is the connection budget Listen's server shares with the
	// run's other observers (nil: one of its own).
	Conns *observe.Budget
	// Planned is how long the run is planned to last: its load's stages
	// and the grace its last sessions get (0: not known). The page shows
	// the time so far against it ("running, 14 s of 30 s planned").
	Planned time.Duration
}

// Phases of a run as /state says them.
const (
	PhaseWaiting = "waiting" // no run yet: the scenario is loading, the target being checked, --start-at
	PhaseRunning = "running" // the load is running: the figures are the run so far
	PhaseFinal   = "final"   // the run is over: the report is the final one
)

// State is the document GET /state returns.
type State struct {
	// Seq changes whenever there is a new sample or the final report:
	// the page fetches /report again when it moved.
	Seq   int64  `json:"seq"`
	Phase string `json:"phase"`
	// Updated is when the figures were taken (zero while waiting).
	Updated time.Time `json:"updated,omitzero"`
	// ElapsedS is the run's duration so far, in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// PlannedS is Options.Planned in seconds (omitted when not known).
	PlannedS float64 `json:"planned_s,omitempty"`
	// Status and Headline are result.Run.Headline's: the final report's
	// banner, judged on the run so far.
	Status     string      `json:"status"`
	Headline   string      `json:"headline"`
	Counters   Counters    `json:"counters"`
	Harness    Harness     `json:"harness"`
	Thresholds []Threshold `json:"thresholds"`
	// Error is why the last sample failed ("" when it did not).
	Error string `json:"error,omitempty"`
}

// Counters are the run's totals so far.
type Counters struct {
	Requests         int64 `json:"requests"`
	Successes        int64 `json:"successes"`
	Failures         int64 `json:"failures"`
	Violations       int64 `json:"violations"`
	SessionsStarted  int64 `json:"sessions_started"`
	SessionsFinished int64 `json:"sessions_finished"`
}

// Harness is the load generator's own figures so far: how late it sent
// (the worst step's send lag p99: result.Run.WorstSendLag) and the CPU its
// process used (the embedded server's included when it runs in it).
type Harness struct {
	SendLagP99US int64  `json:"send_lag_p99_us"`
	SendLagStep  string `json:"send_lag_step,omitempty"` // "": no send lag recorded yet
	// CPUSeconds is the process's CPU so far; 0 when not known (a live
	// --workers run: the parent does not have its workers' CPU).
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// Text says the above in one line, as the page shows it.
	Text string `json:"text"`
}

// harnessOf is the harness figures of run, elapsed as it is.
func harnessOf(run *result.Run) Harness {
	var h Harness
	h.SendLagP99US, h.SendLagStep = run.WorstSendLag()
	for _, sr := range run.ShardRuns {
		h.CPUSeconds += sr.Harness.CPUSeconds
	}
	h.Text = "harness: send lag p99 "
	if h.SendLagStep == "" {
		h.Text += "not recorded yet"
	} else {
		h.Text += words.US(h.SendLagP99US) + " (" + h.SendLagStep + ")"
	}
	switch el := run.DurationNS.Seconds(); {
	case h.CPUSeconds > 0 && el > 0:
		h.Text += fmt.Sprintf(", CPU %.1f s (%.0f%% of one core)", h.CPUSeconds, 100*h.CPUSeconds/el)
	case h.CPUSeconds > 0:
		h.Text += fmt.Sprintf(", CPU %.1f s", h.CPUSeconds)
	}
	return h
}

// Threshold is one threshold judged on the run so far, as the report's
// table says it.
type Threshold struct {
	Name string `json:"name"`
	// Verdict is "pass", "fail", "harness-bound" or "no data".
	Verdict  string `json:"verdict"`
	Observed string `json:"observed"`
	Limit    string `json:"limit"`
}

// snapshot is one sample of the run, or the final report.
type snapshot struct {
	state State
	run   *result.Run
	html  []byte // the final report; a live one is rendered on demand
}

// Server is the live page of one run. Safe for concurrent use.
type Server struct {
	opts Options
	now  func() time.Time

	mu     sync.Mutex
	src    Source
	seq    int64
	snap   snapshot
	series series

	renderMu   sync.Mutex
	renderSeq  int64
	renderHTML []byte
	renderErr  error
	renders    int // how many live reports were rendered (tests)

	shell []byte

	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc
	done   chan struct{}
}

//go:embed page.html
var pageText string

var pageTemplate = template.Must(template.New("page").Parse(pageText))

// New returns a server waiting for its run (SetSource), not listening:
// Handler serves it, Update samples it.
func New(opts Options) *Server {
	s := &Server{opts: opts, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	title := opts.HTML.Title
	if title == "" {
		title = "lobbybench live"
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, struct{ Title string }{title}); err != nil {
		panic(err) // a constant template and a string: cannot fail
	}
	s.shell = b.Bytes()
	s.snap.state = s.stamp(State{Phase: PhaseWaiting, Headline: "waiting for the run to start", Thresholds: []Threshold{}})
	return s
}

// Listen binds addr and serves s's page there until Close, sampling the
// run every Options.Every once it has one. The error names the address.
func Listen(addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := New(opts)
	s.ln = ln
	s.srv = observe.Serve(ln, s.Handler(), opts.Conns)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	every := opts.Every
	if every <= 0 {
		every = DefaultEvery
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = s.Update()
			}
		}
	}()
	return s, nil
}

// Addr is where Listen's server listens ("" for New's).
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops sampling and serving.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	s.cancel()
	<-s.done
	return s.srv.Close()
}

// SetSource gives s its run, sampled from the next Update on.
func (s *Server) SetSource(src Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src = src
}

// Update samples the run once: its figures, the time series point of the
// interval since the last sample, its thresholds and headline. Nothing
// happens before SetSource or after Finish. Listen's server calls it
// every Options.Every.
func (s *Server) Update() error {
	s.mu.Lock()
	src, final := s.src, s.snap.state.Phase == PhaseFinal
	s.mu.Unlock()
	if src == nil || final {
		return nil
	}
	run, err := src()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.state.Phase == PhaseFinal {
		return nil
	}
	if err == nil && run.DurationNS <= 0 {
		// Before the start instant (--start-at, the workers' common
		// start): nothing to show yet.
		return nil
	}
	if err == nil {
		err = s.series.add(run)
	}
	if err != nil {
		s.snap.state.Error = err.Error()
		return err
	}
	run.TimeSeries = s.series.points()
	s.seq++
	s.snap = snapshot{run: run, state: s.stamp(stateOf(run, s.seq, PhaseRunning, now))}
	return nil
}

// Finish shows run, the final result, from now on: the report the --html
// file holds (reports.WriteHTML with Options.HTML), rendered once.
func (s *Server) Finish(run *result.Run) error {
	var b bytes.Buffer
	if err := reports.WriteHTML(&b, s.opts.HTML, run); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.snap = snapshot{run: run, html: b.Bytes(), state: s.stamp(stateOf(run, s.seq, PhaseFinal, now))}
	return nil
}

// stamp adds what s knows of the run beyond its figures to st: its
// planned length.
func (s *Server) stamp(st State) State {
	st.PlannedS = s.opts.Planned.Seconds()
	return st
}

// stateOf is /state for run: its headline (Run.Headline, the report's
// banner), totals and thresholds as they stand.
func stateOf(run *result.Run, seq int64, phase string, now time.Time) State {
	hl := run.Headline()
	st := State{Seq: seq, Phase: phase, Updated: now.UTC(), ElapsedS: run.DurationNS.Seconds(), Status: hl.Status, Headline: hl.Text,
		Thresholds: []Threshold{}}
	if st.Headline == "" {
		st.Headline = "no threshold to judge yet"
	}
	t := run.Totals
	st.Counters = Counters{Requests: t.Requests, Successes: t.Successes, Failures: t.Failures, Violations: t.Violations,
		SessionsStarted: t.SessionsStarted, SessionsFinished: t.SessionsFinished}
	st.Harness = harnessOf(run)
	for _, th := range run.Thresholds {
		v := "fail"
		switch _, bound := run.HarnessBound(th); {
		case th.Pass:
			v = "pass"
		case th.NoData:
			v = "no data"
		case bound:
			v = "harness-bound"
		}
		st.Thresholds = append(st.Thresholds, Threshold{Name: th.Name, Verdict: v, Observed: th.ObservedText(), Limit: th.LimitText()})
	}
	return st
}

// State returns what GET /state says now.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.state
}

// report returns the report document of the latest snapshot: the final
// one as Finish rendered it, or the live run's, rendered once per sample.
func (s *Server) report() ([]byte, error) {
	s.mu.Lock()
	snap := s.snap
	s.mu.Unlock()
	if snap.html != nil {
		return snap.html, nil
	}
	if snap.run == nil {
		return nil, errNoRun
	}
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	if s.renderSeq != snap.state.Seq {
		var b bytes.Buffer
		s.renderErr = reports.WriteHTML(&b, s.opts.HTML, snap.run)
		s.renderHTML, s.renderSeq = b.Bytes(), snap.state.Seq
		s.renders++
	}
	return s.renderHTML, s.renderErr
}

var errNoRun = errors.New("the run has not started yet")

// Handler serves the page (GET /), its state (GET /state) and the report
// (GET /report).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(s.shell)
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(s.State())
	})
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		b, err := s.report()
		switch {
		case errors.Is(err, errNoRun):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, fmt.Sprintf("rendering the report: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	})
	return mux
}

// series is the live time series a Server builds from its samples: per
// interval between two samples, the requests and failures completed and
// the corrected latencies recorded (the difference of the steps'
// whole-run histograms, at the final series' precision), filed under the
// second the interval mostly covered. The final report's series is the
// run's own, per second of completion.
type series struct {
	pts              []result.Point
	hists            []*hdrhistogram.Histogram // each point's latencies
	prevAt           time.Duration
	prevReq, prevErr int64
	prevCounts       []int64
	started          bool
}

// add files the interval since the last sample of run.
func (s *series) add(run *result.Run) error {
	all := result.NewLatencyHistogram()
	for _, st := range run.Steps {
		h, err := st.Latency.Histogram()
		if err != nil {
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		all.Merge(h)
	}
	snap := all.Export()
	counts := snap.Counts
	at := run.DurationNS
	if !s.started {
		s.started = true
		s.prevCounts = make([]int64, len(counts))
	}
	if at <= s.prevAt && len(s.pts) > 0 {
		return nil
	}
	delta := *snap
	delta.Counts = make([]int64, len(counts))
	for i := range counts {
		if i < len(s.prevCounts) {
			delta.Counts[i] = max(counts[i]-s.prevCounts[i], 0)
		} else {
			delta.Counts[i] = counts[i]
		}
	}
	h := result.NewSecondHistogram()
	h.Merge(hdrhistogram.Import(&delta))
	req, errs := max(run.Totals.Requests-s.prevReq, 0), max(run.Totals.Failures-s.prevErr, 0)
	sec := int64((s.prevAt + (at-s.prevAt)/2) / time.Second)
	if n := len(s.pts); n > 0 && s.pts[n-1].Second == sec {
		// Two samples in one second: one point.
		req += s.pts[n-1].Requests
		errs += s.pts[n-1].Errors
		h.Merge(s.hists[n-1])
		s.pts, s.hists = s.pts[:n-1], s.hists[:n-1]
	}
	p, err := result.NewPoint(sec, req, errs, h)
	if err != nil {
		return err
	}
	s.pts, s.hists = append(s.pts, p), append(s.hists, h)
	s.prevAt, s.prevReq, s.prevErr, s.prevCounts = at, run.Totals.Requests, run.Totals.Failures, counts
	return nil
}

func (s *series) points() []result.Point { return append([]result.Point(nil), s.pts...) }
