package dashboard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

var t0 = time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)

// fakeClock is the injected clock: it moves only when told.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// runOf records n list_rooms requests (every fifth failing with fails)
// the way a run's recorders do and returns the run so far at elapsed,
// its thresholds judged as the engine's live view judges them.
func runOf(t *testing.T, n int, fails bool, elapsed time.Duration, ths ...result.Threshold) *result.Run {
	t.Helper()
	c := metrics.NewCollector(t0)
	r := c.NewRecorder()
	list := c.Step("list_rooms")
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if fails && i%5 == 0 {
			r.Fail(list, result.ReasonTimeout, at.Add(time.Second))
			continue
		}
		r.Record(list, at, at, at.Add(time.Duration(200+i%50)*time.Microsecond))
		r.SessionStarted()
	}
	run, err := c.LiveSet().Run(t0, elapsed)
	if err != nil {
		t.Fatal(err)
	}
	run.Scenario, run.Target = "live-test", "127.0.0.1:9"
	run.ShardRuns = []result.ShardRun{{Shard: "0/1"}}
	result.EvaluateThresholds(run, ths)
	run.NoteTargetDown()
	return run
}

var errRate = result.Threshold{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01}

func get(t *testing.T, h http.Handler, path string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, b
}

func state(t *testing.T, h http.Handler) State {
	t.Helper()
	code, b := get(t, h, "/state")
	if code != http.StatusOK {
		t.Fatalf("/state: %d %s", code, b)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("/state: %v: %s", err, b)
	}
	return st
}

// TestStateAdvances: before the run /state waits and /report is 503;
// each sample moves the sequence, the counters and the time series
// (drawn in the report), and the report is rendered once per sample,
// however often it is asked for.
func TestStateAdvances(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := New(Options{Now: clk.Now})
	h := s.Handler()
	if st := state(t, h); st.Phase != PhaseWaiting || st.Seq != 0 {
		t.Fatalf("before the run: %+v", st)
	}
	if code, _ := get(t, h, "/report"); code != http.StatusServiceUnavailable {
		t.Fatalf("/report before the run: %d, want 503", code)
	}
	n := 0
	s.SetSource(func() (*result.Run, error) { return runOf(t, n, false, time.Duration(n/100)*time.Second, errRate), nil })
	var prev State
	for i, tc := range []struct {
		records      int
		wantRequests int64
	}{{100, 100}, {200, 200}, {350, 350}} {
		n = tc.records
		clk.now = clk.now.Add(time.Second)
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		st := state(t, h)
		if st.Phase != PhaseRunning || st.Seq != prev.Seq+1 || st.Counters.Requests != tc.wantRequests || !st.Updated.Equal(clk.now) {
			t.Fatalf("sample %d: %+v", i, st)
		}
		if len(st.Thresholds) != 1 || st.Thresholds[0].Verdict != "pass" || st.Status != result.StatusPass {
			t.Fatalf("sample %d: thresholds %+v, headline %q", i, st.Thresholds, st.Headline)
		}
		for range 3 {
			if code, b := get(t, h, "/report"); code != http.StatusOK || !bytes.Contains(b, []byte("PASS · ")) {
				t.Fatalf("/report: %d %.200s", code, b)
			}
		}
		if s.renders != i+1 {
			t.Fatalf("sample %d: %d renders, want one per sample", i, s.renders)
		}
		prev = st
	}
	s.mu.Lock()
	pts := s.series.points()
	s.mu.Unlock()
	var sum int64
	for _, p := range pts {
		sum += p.Requests
	}
	if sum != 350 || len(pts) < 2 || pts[len(pts)-1].P99US == 0 || pts[len(pts)-1].Hist == "" {
		t.Fatalf("time series %+v: want the 350 requests spread over the samples, with latencies", pts)
	}
	// Each point's latencies are those recorded in its interval: the
	// last interval's 150 requests, not the run's 350.
	if h, err := pts[len(pts)-1].Histogram(); err != nil || h.TotalCount() != 150 {
		t.Fatalf("the last point holds %v latencies (%v), want the interval's 150", h.TotalCount(), err)
	}
	if _, b := get(t, h, "/report"); !bytes.Contains(b, []byte("Latency per second")) {
		t.Fatalf("the report draws no latency per second")
	}
}

// TestHeadlineLeads: the page leads with the headline the final report
// would have, TARGET DOWN before INTERRUPTED before INCOMPLETE before
// FAIL, in /state and in the report's banner.
func TestHeadlineLeads(t *testing.T) {
	down := []result.Outage{{StartNS: 2 * time.Second, LastUpNS: 1750 * time.Millisecond, Kind: result.DownRefused}}
	for _, tc := range []struct {
		name       string
		change     func(*result.Run)
		fails      bool
		wantStatus string
		wantPrefix string
	}{
		{"pass", nil, false, result.StatusPass, "PASS · "},
		{"a breached threshold", nil, true, result.StatusFail, "FAIL · "},
		{"a dead worker", func(r *result.Run) { r.Incomplete = []string{"worker 1/2 died: the result is incomplete"} }, true,
			result.StatusIncomplete, "INCOMPLETE · "},
		{"interrupted", func(r *result.Run) {
			r.ShardRuns[0].Interrupted = true
			r.Incomplete = []string{"worker 1/2 died"}
		}, true, result.StatusInterrupted, "INTERRUPTED · "},
		{"target down", func(r *result.Run) {
			r.ShardRuns[0].Interrupted = true
			r.Outages = down
			r.NoteTargetDown()
		}, true, result.StatusTargetDown, "TARGET DOWN · "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Now: func() time.Time { return t0 }})
			s.SetSource(func() (*result.Run, error) {
				r := runOf(t, 200, tc.fails, 3*time.Second, errRate)
				if tc.change != nil {
					tc.change(r)
				}
				return r, nil
			})
			if err := s.Update(); err != nil {
				t.Fatal(err)
			}
			st := state(t, s.Handler())
			if st.Status != tc.wantStatus || !strings.HasPrefix(st.Headline, tc.wantPrefix) {
				t.Fatalf("status %q, headline %q; want %q, %q…", st.Status, st.Headline, tc.wantStatus, tc.wantPrefix)
			}
			if tc.fails && !strings.Contains(st.Headline, "1 of 1 threshold breached") {
				t.Errorf("headline %q does not carry the breach", st.Headline)
			}
			_, b := get(t, s.Handler(), "/report")
			banner := `<p class="status ` + tc.wantStatus + `">` + strings.ReplaceAll(templateEscape(st.Headline), "\n", "")
			if !bytes.Contains(b, []byte(banner[:min(len(banner), 60)])) {
				t.Errorf("the report does not lead with %q", banner)
			}
		})
	}
}

// templateEscape escapes the few characters a headline holds as
// html/template does.
func templateEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// TestFinalReport: after Finish the page serves the final report, the
// same document the --html file holds, and later samples change nothing.
func TestFinalReport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails bool
		want  string
	}{{"pass", false, result.StatusPass}, {"fail", true, result.StatusFail}} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Now: func() time.Time { return t0 }})
			n := 100
			s.SetSource(func() (*result.Run, error) { return runOf(t, n, tc.fails, time.Second, errRate), nil })
			if err := s.Update(); err != nil {
				t.Fatal(err)
			}
			final := runOf(t, 400, tc.fails, 4*time.Second, errRate)
			if err := s.Finish(final); err != nil {
				t.Fatal(err)
			}
			n = 999
			if err := s.Update(); err != nil {
				t.Fatal(err)
			}
			st := state(t, s.Handler())
			if st.Phase != PhaseFinal || st.Status != tc.want || st.Counters.Requests != 400 || st.Seq != 2 {
				t.Fatalf("after the end: %+v", st)
			}
			var want bytes.Buffer
			if err := reports.WriteHTML(&want, reports.HTMLOptions{}, final); err != nil {
				t.Fatal(err)
			}
			if _, b := get(t, s.Handler(), "/report"); !bytes.Equal(b, want.Bytes()) {
				t.Fatalf("/report after the end is not the HTML report of the final result")
			}
		})
	}
}

// TestPageShell: the page is the shell in testdata (its script polls
// /state and fetches /report; -update rewrites it).
func TestPageShell(t *testing.T) {
	code, b := get(t, New(Options{}).Handler(), "/")
	if code != http.StatusOK {
		t.Fatalf("/: %d", code)
	}
	golden.Check(t, "testdata/page.golden.html", b)
	if code, _ := get(t, New(Options{}).Handler(), "/nothing"); code != http.StatusNotFound {
		t.Fatalf("/nothing: %d, want 404", code)
	}
}

// TestListen: a bad or taken address is an error, not a panic; a good
// one serves until Close, sampling by itself.
func TestListen(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Options{Every: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, addr := range []string{"nonsense", "127.0.0.1:99999", s.Addr()} {
		if x, err := Listen(addr, Options{}); err == nil {
			x.Close()
			t.Errorf("Listen(%q) did not fail", addr)
		}
	}
	resp, err := http.Get("http://" + s.Addr() + "/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/state: %d", resp.StatusCode)
	}
}

// TestListenObserverBudget: idle keep-alive connections beyond the run's
// observer budget do not pile up: each one over it is answered 503 and
// closed at once, so observers never hold more descriptors than the
// budget the run left them.
func TestListenObserverBudget(t *testing.T) {
	b := observe.NewBudget()
	b.Reserve(1000, 1000) // nothing left after the run: the minimum
	s, err := Listen("127.0.0.1:0", Options{Conns: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	request := func(c net.Conn) (*http.Response, error) {
		c.SetDeadline(time.Now().Add(30 * time.Second)) // a failure bound, not a measure
		if _, err := io.WriteString(c, "GET /state HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	for i := range observe.MinConns + 3 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		resp, err := request(c)
		switch {
		case i < observe.MinConns && (err != nil || resp.StatusCode != http.StatusOK):
			t.Fatalf("connection %d, within the budget: %v %v", i, resp, err)
		case i >= observe.MinConns && (err != nil || resp.StatusCode != http.StatusServiceUnavailable):
			t.Fatalf("connection %d, over the budget: %v %v, want 503", i, resp, err)
		}
	}
	if b.Refused() != 3 {
		t.Errorf("refused %d, want 3", b.Refused())
	}
}

// TestPlannedLength: /state says the run's planned length (stages and
// grace) in every phase, so the page can show "14 s of 30 s planned" and
// a progress bar; unknown, it is left out.
func TestPlannedLength(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }, Planned: 27*time.Second + 3*time.Second})
	h := s.Handler()
	if st := state(t, h); st.PlannedS != 30 {
		t.Fatalf("waiting: planned %v s, want 30", st.PlannedS)
	}
	s.SetSource(func() (*result.Run, error) { return runOf(t, 100, false, 14*time.Second, errRate), nil })
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	if st := state(t, h); st.Phase != PhaseRunning || st.ElapsedS != 14 || st.PlannedS != 30 {
		t.Fatalf("running: %+v, want 14 s of 30 s planned", st)
	}
	if err := s.Finish(runOf(t, 100, false, 29*time.Second, errRate)); err != nil {
		t.Fatal(err)
	}
	if st := state(t, h); st.Phase != PhaseFinal || st.PlannedS != 30 {
		t.Fatalf("final: %+v", st)
	}
	_, b := get(t, New(Options{}).Handler(), "/state")
	if bytes.Contains(b, []byte("planned_s")) {
		t.Fatalf("no planned length known, yet /state says one: %s", b)
	}
}

// TestPageAsksNoIcon: the page names an empty inline icon, so a browser
// asks the server for no /favicon.ico (a 404 in every live page's log).
func TestPageAsksNoIcon(t *testing.T) {
	_, b := get(t, New(Options{}).Handler(), "/")
	if !bytes.Contains(b, []byte(`<link rel="icon" href="data:,">`)) {
		t.Fatalf("the page names no inline icon")
	}
}

// The page says the harness's own figures: the worst step's send lag p99
// and the process's CPU (with its share of one core over the elapsed
// time), each only once known.
func TestHarnessLine(t *testing.T) {
	step := func(name string, n, p99 int64) result.Series {
		return result.Series{Name: name, SendLag: result.Latency{Count: n, P99US: p99}}
	}
	for _, tc := range []struct {
		name    string
		steps   []result.Series
		cpu     []float64 // per shard run
		elapsed time.Duration
		want    Harness
	}{
		{"nothing yet", nil, nil, 0, Harness{Text: "harness: send lag p99 not recorded yet"}},
		{"lag, CPU unknown (--workers)", []result.Series{step("a", 3, 408), step("b", 3, 2160)}, []float64{0, 0}, 2 * time.Second,
			Harness{SendLagP99US: 2160, SendLagStep: "b", Text: "harness: send lag p99 2.16ms (b)"}},
		{"lag and CPU", []result.Series{step("a", 3, 408)}, []float64{1.4}, 2 * time.Second,
			Harness{SendLagP99US: 408, SendLagStep: "a", CPUSeconds: 1.4, Text: "harness: send lag p99 408µs (a), CPU 1.4 s (70% of one core)"}},
		{"shards' CPU adds up", []result.Series{step("a", 3, 0)}, []float64{1, 2}, 2 * time.Second,
			Harness{SendLagStep: "a", CPUSeconds: 3, Text: "harness: send lag p99 0µs (a), CPU 3.0 s (150% of one core)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &result.Run{Steps: tc.steps, DurationNS: tc.elapsed}
			for _, c := range tc.cpu {
				run.ShardRuns = append(run.ShardRuns, result.ShardRun{Harness: result.Harness{CPUSeconds: c}})
			}
			if got := harnessOf(run); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// And /state carries it.
	s := New(Options{Now: func() time.Time { return t0 }})
	s.SetSource(func() (*result.Run, error) { return runOf(t, 10, false, time.Second), nil })
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	if st := state(t, s.Handler()); st.Harness.SendLagStep != "list_rooms" || !strings.HasPrefix(st.Harness.Text, "harness: send lag p99 ") {
		t.Errorf("/state harness %+v", st.Harness)
	}
}
