package metrics

import (
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/result"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestRecordCorrectedAndUncorrected(t *testing.T) {
	tests := []struct {
		name                       string
		intended, sent, done       time.Duration
		wantCorr, wantUnc, wantLag int64 // µs, exact for values < 2048
	}{
		// on schedule: both figures equal, no send lag
		{"on time", 0, 0, 1000 * time.Microsecond, 1000, 1000, 0},
		// sent 500µs late: corrected includes the wait, uncorrected not,
		// and the send lag is the wait
		{"late send", 0, 500 * time.Microsecond, 1500 * time.Microsecond, 1500, 1000, 500},
		// clock oddity: done before sent clamps at 0
		{"negative", time.Millisecond, time.Millisecond, 0, 0, 0, 0},
		// sent before its intended time (a clock step): lag clamps at 0
		{"early", time.Millisecond, 0, 2 * time.Millisecond, 1000, 2000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector(t0)
			k := c.Step("join")
			r := c.NewRecorder()
			r.Record(k, at(tt.intended), at(tt.sent), at(tt.done))
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			s := run.Steps[0]
			if s.Latency.MaxUS != tt.wantCorr || s.Uncorrected.MaxUS != tt.wantUnc || s.SendLag.MaxUS != tt.wantLag || s.SendLag.Count != 1 {
				t.Errorf("corrected %d uncorrected %d send lag %d (of %d), want %d %d %d", s.Latency.MaxUS, s.Uncorrected.MaxUS, s.SendLag.MaxUS, s.SendLag.Count, tt.wantCorr, tt.wantUnc, tt.wantLag)
			}
			if s.Successes != 1 || s.Requests != 1 || run.Totals.Requests != 1 {
				t.Errorf("counts %+v totals %+v", s, run.Totals)
			}
		})
	}
}

func TestClampAboveRange(t *testing.T) {
	c := NewCollector(t0)
	k := c.Step("slow")
	r := c.NewRecorder()
	r.Record(k, t0, t0, at(time.Hour))
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Steps[0].Latency; got.Count != 1 || got.MaxUS < result.HighestUS*999/1000 {
		t.Errorf("clamped latency = %+v, want one value near %d", got, result.HighestUS)
	}
}

func TestCountsAndOrder(t *testing.T) {
	c := NewCollector(t0)
	list, join := c.Step("list_rooms"), c.Step("join")
	msg := c.Message("JoinReply")
	if c.Step("join") != join {
		t.Fatal("Step is not idempotent")
	}
	if c.Message("join") == join {
		t.Fatal("message and step names share a name space")
	}
	r1, r2 := c.NewRecorder(), c.NewRecorder()
	// r2 sees join before list_rooms; output order must stay registration order.
	r2.Record(join, t0, t0, at(time.Millisecond))
	r2.Fail(join, result.ReasonJoinDeny, at(1500*time.Millisecond))
	r1.Record(list, t0, t0, at(2*time.Millisecond))
	r1.Fail(list, result.ReasonTimeout, at(2*time.Second))
	r1.Fail(join, result.ReasonTimeout, at(2*time.Second))
	r1.Retry(join)
	r1.Retry(join)
	r2.Dropped(list)
	r1.Record(msg, t0, t0, at(time.Millisecond))
	r1.SessionStarted()
	r2.SessionStarted()
	r2.SessionFinished()
	for i := 0; i < 5; i++ {
		r1.Violation("U-CRC", at(time.Second), []byte{0xde, 0xad, byte(i)}, []byte{1}, "bad crc")
	}
	r2.Violation("U-CRC", at(time.Second), []byte{0xbe, 0xef}, nil, "")
	r2.Violation("A-LEN", at(time.Second), []byte{0}, nil, "")

	live := c.Live()
	// the message sample re-records a request: not in the live totals
	wantLive := Live{Requests: 5, Successes: 2, Failures: 3, Retries: 2, Dropped: 1, Violations: 7, SessionsStarted: 2, SessionsFinished: 1}
	if live != wantLive {
		t.Errorf("Live = %+v, want %+v", live, wantLive)
	}

	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != 2 || run.Steps[0].Name != "list_rooms" || run.Steps[1].Name != "join" {
		t.Fatalf("steps = %+v", run.Steps)
	}
	if len(run.Messages) != 1 || run.Messages[0].Name != "JoinReply" {
		t.Fatalf("messages = %+v", run.Messages)
	}
	j := run.Steps[1]
	if j.Successes != 1 || j.Failures != 2 || j.Retries != 2 || j.FailuresByReason[result.ReasonTimeout] != 1 || j.FailuresByReason[result.ReasonJoinDeny] != 1 {
		t.Errorf("join = %+v", j)
	}
	tot := run.Totals
	if tot.Requests != 5 || tot.Successes != 2 || tot.Failures != 3 || tot.Dropped != 1 || tot.Retries != 2 ||
		tot.SessionsStarted != 2 || tot.SessionsFinished != 1 || tot.Violations != 7 || tot.FailuresByReason[result.ReasonTimeout] != 2 {
		t.Errorf("totals = %+v", tot)
	}
	if len(run.Violations) != 2 || run.Violations[0].Rule != "A-LEN" || run.Violations[1].Rule != "U-CRC" {
		t.Fatalf("violations = %+v", run.Violations)
	}
	crc := run.Violations[1]
	if crc.Count != 6 || len(crc.Samples) != result.MaxViolationSamples || crc.Samples[0].Packet != "dead00" || crc.Samples[0].Request != "01" || crc.Samples[0].OffsetNS != time.Second {
		t.Errorf("U-CRC = %+v", crc)
	}
	// seconds: 0 has 2 successes + 0 errors (list, join; msg is not a
	// step); 1 has join deny; 2 has two timeouts
	want := []struct{ sec, req, errs int64 }{{0, 2, 0}, {1, 1, 1}, {2, 2, 2}}
	if len(run.TimeSeries) != len(want) {
		t.Fatalf("time series = %+v", run.TimeSeries)
	}
	for i, w := range want {
		p := run.TimeSeries[i]
		if p.Second != w.sec || p.Requests != w.req || p.Errors != w.errs {
			t.Errorf("point %d = %+v, want %+v", i, p, w)
		}
	}
	if run.TimeSeries[0].P99US != 2000 && run.TimeSeries[0].P99US != 2007 {
		// 2 significant digits: 2000 µs lands in a 16 µs bucket
		t.Errorf("second 0 p99 = %d, want ~2000", run.TimeSeries[0].P99US)
	}
	if run.DurationNS != 2*time.Second {
		t.Errorf("duration = %v", run.DurationNS)
	}
}

func TestFindings(t *testing.T) {
	c := NewCollector(t0)
	c.AddMalformed("bad_crc", 10, 1, 10, 9)
	c.AddMalformed("truncated", 5, 0, 5, 5)
	c.AddMalformed("bad_crc", 2, 0, 2, 2)
	c.AddRateLimit(result.RateLimitFinding{Source: "127.0.0.2", ObservedLimitPerSec: 100})
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := []result.MalformedFinding{{Kind: "bad_crc", Sent: 12, UnexpectedReplies: 1, LivenessChecks: 12, LivenessKept: 11}, {Kind: "truncated", Sent: 5, LivenessChecks: 5, LivenessKept: 5}}
	if len(run.Malformed) != 2 || run.Malformed[0] != want[0] || run.Malformed[1] != want[1] {
		t.Errorf("malformed = %+v", run.Malformed)
	}
	if len(run.RateLimits) != 1 || run.RateLimits[0].Source != "127.0.0.2" {
		t.Errorf("rate limits = %+v", run.RateLimits)
	}
}

// TestConcurrentSnapshot records from several goroutines while snapshots and
// Live run, then checks nothing was lost (run with -race).
func TestConcurrentSnapshot(t *testing.T) {
	c := NewCollector(t0)
	k := c.Step("ping")
	const workers, per = 4, 5000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = c.Live()
				if _, err := c.Snapshot(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for w := 0; w < workers; w++ {
		r := c.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				d := time.Duration(i) * time.Millisecond
				r.Record(k, at(d), at(d), at(d+time.Duration(i%1000)*time.Microsecond))
			}
		}()
	}
	wg.Wait()
	close(stop)
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Steps[0].Latency.Count; got != workers*per {
		t.Errorf("count = %d, want %d", got, workers*per)
	}
	var sum int64
	for _, p := range run.TimeSeries {
		sum += p.Requests
	}
	if sum != workers*per {
		t.Errorf("time series sums to %d, want %d", sum, workers*per)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	c := NewCollector(t0)
	k := c.Step("ping")
	r := c.NewRecorder()
	r.Record(k, t0, t0, t0)
	r.Fail(k, result.ReasonTimeout, t0)
	now := t0
	allocs := memfig.Allocs(1000, func() {
		r.Record(k, now, now, now.Add(300*time.Microsecond))
		r.Fail(k, result.ReasonTimeout, now)
	})
	if allocs != 0 {
		t.Errorf("Record+Fail allocate %.1f times per call", allocs)
	}
}

// TestShardedSnapshotsMergeExactly records the same samples into one
// collector and split across two, and checks result.Merge of the two
// snapshots equals the single snapshot.
func TestShardedSnapshotsMergeExactly(t *testing.T) {
	one := NewCollector(t0)
	shards := []*Collector{NewCollector(t0), NewCollector(t0)}
	ko := one.Step("join")
	ro := one.NewRecorder()
	rs := []*Recorder{shards[0].NewRecorder(), shards[1].NewRecorder()}
	ks := []Key{shards[0].Step("join"), shards[1].Step("join")}
	for i := 0; i < 20000; i++ {
		d := time.Duration(i) * 150 * time.Microsecond
		lat := time.Duration((i*7919)%50000) * time.Microsecond
		intended, sent, done := at(d), at(d+lat/3), at(d+lat)
		ro.Record(ko, intended, sent, done)
		rs[i%2].Record(ks[i%2], intended, sent, done)
		if i%97 == 0 {
			ro.Fail(ko, result.ReasonTimeout, done)
			rs[i%2].Fail(ks[i%2], result.ReasonTimeout, done)
		}
	}
	want, err := one.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var parts []*result.Run
	for _, c := range shards {
		s, err := c.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, s)
	}
	got, err := result.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps[0].Latency != want.Steps[0].Latency || got.Steps[0].Uncorrected != want.Steps[0].Uncorrected {
		t.Errorf("merged latency\n%+v\nwant\n%+v", got.Steps[0].Latency, want.Steps[0].Latency)
	}
	if got.Totals.Requests != want.Totals.Requests || got.Totals.Failures != want.Totals.Failures {
		t.Errorf("totals %+v want %+v", got.Totals, want.Totals)
	}
	if len(got.TimeSeries) != len(want.TimeSeries) {
		t.Fatalf("%d points, want %d", len(got.TimeSeries), len(want.TimeSeries))
	}
	for i := range got.TimeSeries {
		if got.TimeSeries[i] != want.TimeSeries[i] {
			t.Errorf("point %d = %+v, want %+v", i, got.TimeSeries[i], want.TimeSeries[i])
		}
	}
}

func TestOutOfOrderSeconds(t *testing.T) {
	c := NewCollector(t0)
	k := c.Step("ping")
	r := c.NewRecorder()
	for _, d := range []time.Duration{2500 * time.Millisecond, 1100 * time.Millisecond, 2600 * time.Millisecond, -time.Second} {
		r.Record(k, at(d), at(d), at(d))
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// the sample before start is counted in second 0
	want := map[int64]int64{0: 1, 1: 1, 2: 2}
	if len(run.TimeSeries) != len(want) {
		t.Fatalf("points %+v", run.TimeSeries)
	}
	for _, p := range run.TimeSeries {
		if want[p.Second] != p.Requests {
			t.Errorf("second %d has %d requests, want %d", p.Second, p.Requests, want[p.Second])
		}
	}
}

// TestCompactedSecondsStayExact records 30 s so early seconds get encoded,
// then reopens one with a late sample, and checks every point against an
// independent per-second histogram.
func TestCompactedSecondsStayExact(t *testing.T) {
	c := NewCollector(t0)
	k := c.Step("ping")
	r := c.NewRecorder()
	ref := map[int64]*hdrhistogram.Histogram{}
	rec := func(d, lat time.Duration) {
		r.Record(k, at(d), at(d), at(d+lat))
		sec := int64((d + lat) / time.Second)
		if ref[sec] == nil {
			ref[sec] = result.NewSecondHistogram()
		}
		_ = ref[sec].RecordValue(int64(lat / time.Microsecond))
	}
	for i := 0; i < 3000; i++ {
		rec(time.Duration(i)*10*time.Millisecond, time.Duration(100+i%900)*time.Microsecond)
	}
	c.mu.Lock()
	compacted := c.seconds[0].h == nil && c.seconds[0].point != nil
	c.mu.Unlock()
	if !compacted {
		t.Fatal("second 0 was not compacted after 30 s")
	}
	rec(2*time.Second, 5*time.Millisecond) // late: reopens second 2
	rec(31*time.Second, time.Millisecond)
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(run.TimeSeries) != len(ref) {
		t.Fatalf("%d points, want %d", len(run.TimeSeries), len(ref))
	}
	for _, p := range run.TimeSeries {
		h := ref[p.Second]
		if p.Requests != h.TotalCount() || p.P50US != h.ValueAtPercentile(50) || p.P99US != h.ValueAtPercentile(99) {
			t.Errorf("second %d: %+v, want n=%d p50=%d p99=%d", p.Second, p, h.TotalCount(), h.ValueAtPercentile(50), h.ValueAtPercentile(99))
		}
	}
}

// TestStepAndMessageCountedOnce records every request twice, under its step
// and its message type, as the clients do: the live totals and the time
// series must count it once, as Totals do, while the message type keeps
// its own series.
func TestStepAndMessageCountedOnce(t *testing.T) {
	c := NewCollector(t0)
	msg := c.Message("Hello") // registered first: kinds are per key, not by order
	step := c.Step("hello")
	r1, r2 := c.NewRecorder(), c.NewRecorder()
	for i := range 30 {
		r := r1
		if i%2 == 1 {
			r = r2
		}
		done := at(time.Duration(i) * 100 * time.Millisecond) // seconds 0, 1, 2
		if i%5 == 4 {
			r.Fail(msg, result.ReasonTimeout, done)
			r.Fail(step, result.ReasonTimeout, done)
			continue
		}
		r.Record(msg, t0, t0, done)
		r.Record(step, t0, t0, done)
		if i%3 == 0 {
			r.Retry(msg)
			r.Retry(step)
		}
	}
	r1.Dropped(step)
	r2.Record(msg, t0, t0, at(5*time.Second)) // a message alone makes no point

	live := c.Live()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tot := run.Totals
	want := Live{Requests: 30, Successes: 24, Failures: 6, Retries: 8, Dropped: 1}
	if live != want {
		t.Errorf("Live = %+v, want %+v", live, want)
	}
	if tot.Requests != want.Requests || tot.Failures != want.Failures || tot.Retries != want.Retries || tot.Dropped != want.Dropped {
		t.Errorf("totals = %+v, want %+v", tot, want)
	}
	var req, errs int64
	for _, p := range run.TimeSeries {
		req += p.Requests
		errs += p.Errors
		if p.Requests != 10 || p.Errors != 2 {
			t.Errorf("point %+v, want 10 requests and 2 errors", p)
		}
	}
	if len(run.TimeSeries) != 3 || req != tot.Requests || errs != tot.Failures {
		t.Errorf("time series %d points, %d requests, %d errors; want 3, %d, %d", len(run.TimeSeries), req, errs, tot.Requests, tot.Failures)
	}
	if len(run.Messages) != 1 || run.Messages[0].Requests != 31 || run.Messages[0].Retries != 8 || run.Messages[0].Latency.Count != 25 {
		t.Errorf("messages = %+v", run.Messages)
	}
}

// A ping held back by its predecessor's slow reply is late by the
// server's doing: its send lag counts from the reply, its corrected
// latency from the schedule.
func TestRecordReady(t *testing.T) {
	for _, tt := range []struct {
		name                        string
		intended, ready, sent, done time.Duration
		wantCorr, wantLag           int64
	}{
		{"reply after due", 0, 800 * time.Microsecond, 850 * time.Microsecond, 1000 * time.Microsecond, 1000, 50},
		{"reply before due", 500 * time.Microsecond, 100 * time.Microsecond, 530 * time.Microsecond, 900 * time.Microsecond, 400, 30},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector(t0)
			k := c.Step("ping")
			c.NewRecorder().RecordReady(k, at(tt.intended), at(tt.ready), at(tt.sent), at(tt.done))
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if s := run.Steps[0]; s.Latency.MaxUS != tt.wantCorr || s.SendLag.MaxUS != tt.wantLag {
				t.Errorf("corrected %d send lag %d, want %d %d", s.Latency.MaxUS, s.SendLag.MaxUS, tt.wantCorr, tt.wantLag)
			}
		})
	}
}

// TestCutSilent: a cut request counts as silent when it had waited
// result.SilentAfter, or its whole timeout, without a reply; a step's run
// (wait and timeout unknown) never does. Sums over recorders.
func TestCutSilent(t *testing.T) {
	for _, tc := range []struct {
		name            string
		waited, timeout time.Duration
		silent          bool
	}{
		{"just sent", 10 * time.Millisecond, 5 * time.Second, false},
		{"a second without a reply", result.SilentAfter, 5 * time.Second, true},
		{"its whole timeout", 200 * time.Millisecond, 200 * time.Millisecond, true},
		{"short of a short timeout", 199 * time.Millisecond, 200 * time.Millisecond, false},
		{"no timeout known", 500 * time.Millisecond, 0, false},
		{"a step's run", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector(t0)
			k := c.Message("LOBBY_LIST_ROOMS")
			r1, r2 := c.NewRecorder(), c.NewRecorder()
			r1.Cut(k, tc.waited, tc.timeout)
			r2.Cut(k, tc.waited, tc.timeout)
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			if tc.silent {
				want = 2
			}
			if s := run.Messages[0]; s.Cut != 2 || s.CutSilent != want {
				t.Errorf("cut %d, silent %d; want 2 cut, %d silent", s.Cut, s.CutSilent, want)
			}
		})
	}
}
