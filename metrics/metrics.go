package metrics

import (
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/result"
)

// Kind tells whether a Key names a scenario step or a protocol message type.
type Kind uint8

// Key kinds.
const (
	KindStep Kind = iota
	KindMessage
)

// Key identifies a registered step or message type. Keys are small integers
// so the hot path indexes a slice instead of hashing a string.
type Key int32

// Collector owns the recorders of one run, their live counters and the
// run-wide findings; Snapshot merges everything into a result.Run. All
// methods are safe for concurrent use.
type Collector struct {
	start time.Time

	mu        sync.Mutex // guards everything below
	names     []string
	kinds     []Kind
	byName    [2]map[string]Key
	recorders []*Recorder
	seconds   map[int64]*second
	rateLimit []result.RateLimitFinding
	malformed map[string]*result.MalformedFinding
	malOrder  []string
	last      time.Time // latest completion seen by a flush
	// compactedTo: seconds below it have been considered for compaction.
	compactedTo int64
	err         error // first internal error, returned by Snapshot
}

// compactAfter is how many seconds behind the newest flushed second a
// second's histogram is encoded (result.NewPoint) and its ~23 KiB of
// counts freed, so long soaks do not hold one full histogram per second.
const compactAfter = 10

// second is one second of the time series: h while open, point once
// compacted (a later flush into it decodes it again).
type second struct {
	requests, errors int64
	h                *hdrhistogram.Histogram
	point            *result.Point
}

// open makes s.h usable, decoding a compacted second. Callers hold c.mu.
func (c *Collector) open(s *second) {
	if s.h != nil {
		return
	}
	h, err := s.point.Histogram()
	if err != nil {
		// Our own encoding failed to decode: keep counting, report later.
		if c.err == nil {
			c.err = fmt.Errorf("metrics: reopen time-series second %d: %w", s.point.Second, err)
		}
		h = result.NewSecondHistogram()
	}
	s.h, s.point = h, nil
}

// compact encodes the seconds older than newest-compactAfter. Callers hold
// c.mu.
func (c *Collector) compact(newest int64) {
	hi := newest - compactAfter
	if hi <= c.compactedTo {
		return
	}
	visit := func(sec int64, s *second) {
		if s.h == nil {
			return
		}
		p, err := result.NewPoint(sec, s.requests, s.errors, s.h)
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return
		}
		s.point, s.h = &p, nil
	}
	if hi-c.compactedTo > int64(len(c.seconds)) {
		// a jump (idle stretch or odd clock): walk the map, not the range
		for sec, s := range c.seconds {
			if sec < hi {
				visit(sec, s)
			}
		}
	} else {
		for sec := c.compactedTo; sec < hi; sec++ {
			if s := c.seconds[sec]; s != nil {
				visit(sec, s)
			}
		}
	}
	c.compactedTo = hi
}

// NewCollector returns a Collector whose time series counts seconds from
// start (the run's start, used for offsets).
func NewCollector(start time.Time) *Collector {
	return &Collector{
		start:     start,
		byName:    [2]map[string]Key{{}, {}},
		seconds:   map[int64]*second{},
		malformed: map[string]*result.MalformedFinding{},
	}
}

// Start returns the run start given to NewCollector.
func (c *Collector) Start() time.Time { return c.start }

// Step registers (or finds) the step called name and returns its Key.
func (c *Collector) Step(name string) Key { return c.key(KindStep, name) }

// Message registers (or finds) the message type called name and returns its
// Key. Message and step names live in separate name spaces.
func (c *Collector) Message(name string) Key { return c.key(KindMessage, name) }

func (c *Collector) key(kind Kind, name string) Key {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.byName[kind][name]; ok {
		return k
	}
	k := Key(len(c.names))
	c.names = append(c.names, name)
	c.kinds = append(c.kinds, kind)
	c.byName[kind][name] = k
	return k
}

// NewRecorder returns a Recorder feeding c. Make one per worker goroutine
// (or per shard of clients): each holds two full-precision histograms per
// key it sees (about 160 KiB each), so do not make one per simulated client.
func (c *Collector) NewRecorder() *Recorder {
	r := &Recorder{c: c, cur: -1, curHist: result.NewSecondHistogram(), violations: map[string]*result.Violation{}}
	c.mu.Lock()
	c.recorders = append(c.recorders, r)
	c.mu.Unlock()
	return r
}

// Live is a point-in-time sum of the live counters, for progress display.
// Like result.Totals, the request counters sum the steps only: a message
// type's samples re-record requests a step already counted.
type Live struct {
	Requests, Successes, Failures, Retries, Dropped, Violations int64
	SessionsStarted, SessionsFinished                           int64
	// DataSent and DataReceived are the payload bytes handed over so far
	// (Recorder.Bytes); InRoom and InGame the players in a room and in a
	// started game now (Recorder.Players).
	DataSent, DataReceived, InRoom, InGame int64
}

// Live sums the recorders' atomic counters without stopping them. The
// figures are each exact but not mutually consistent to the sample.
func (c *Collector) Live() Live {
	c.mu.Lock()
	rs := c.recorders
	c.mu.Unlock()
	var l Live
	for _, r := range rs {
		l.Successes += r.live.successes.Load()
		l.Failures += r.live.failures.Load()
		l.Retries += r.live.retries.Load()
		l.Dropped += r.live.dropped.Load()
		l.Violations += r.live.violations.Load()
		l.SessionsStarted += r.live.sessionsStarted.Load()
		l.SessionsFinished += r.live.sessionsFinished.Load()
		l.DataSent += r.live.dataSent.Load()
		l.DataReceived += r.live.dataReceived.Load()
		l.InRoom += r.live.inRoom.Load()
		l.InGame += r.live.inGame.Load()
	}
	l.Requests = l.Successes + l.Failures
	return l
}

// AddRateLimit records a rate-limit finding (computed by the engine).
func (c *Collector) AddRateLimit(f result.RateLimitFinding) {
	c.mu.Lock()
	c.rateLimit = append(c.rateLimit, f)
	c.mu.Unlock()
}

// AddMalformed adds to the finding for malformed packets of kind: sent
// packets, replies received where silence was expected, and liveness
// probes made and answered afterwards.
func (c *Collector) AddMalformed(kind string, sent, unexpectedReplies, livenessChecks, livenessKept int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.malformed[kind]
	if m == nil {
		m = &result.MalformedFinding{Kind: kind}
		c.malformed[kind] = m
		c.malOrder = append(c.malOrder, kind)
	}
	m.Sent += sent
	m.UnexpectedReplies += unexpectedReplies
	m.LivenessChecks += livenessChecks
	m.LivenessKept += livenessKept
}

// liveCounters are read by Collector.Live while the owner writes them.
type liveCounters struct {
	successes, failures, retries, dropped, violations atomic.Int64
	sessionsStarted, sessionsFinished                 atomic.Int64
	dataSent, dataReceived, inRoom, inGame            atomic.Int64
}

// keyStats is what a Recorder keeps per key.
type keyStats struct {
	used bool
	// step: the key is a step, so its samples also feed the live totals
	// and the time series (message types re-record the same requests).
	step              bool
	successes         int64
	failures          int64
	retries, dropped  int64
	cut, cutSilent    int64
	reasons           map[string]int64
	corrected, uncorr *hdrhistogram.Histogram
	// lag is the send lag: actual first send minus intended send time,
	// the harness's own lateness (the part of corrected it put there).
	lag *hdrhistogram.Histogram
	// payload bytes of the step (Bytes)
	bytesSent, bytesReceived int64
}

// Recorder is the hot-path sink of one worker. Its methods are safe for
// concurrent use, but they take the Recorder's own mutex, so it is cheapest
// when one goroutine (or a few) owns it: there is no lock shared by all
// recorders. Snapshot takes each recorder's mutex briefly.
type Recorder struct {
	c    *Collector
	live liveCounters

	mu         sync.Mutex
	keys       []keyStats
	cur        int64 // second of curHist, -1 before the first sample
	curReq     int64
	curErr     int64
	curHist    *hdrhistogram.Histogram
	violations map[string]*result.Violation
	violOrder  []string
	last       time.Time
	lobby      lobby // the lobby measures (lobby.go)
	// fails counts this recorder's step failures by tenth of a second,
	// step and reason (FailuresIn): bounded by the run's length, not by
	// its load.
	fails map[failSlot]int64

	// Recorders are written by different cores on every sample; the pad
	// keeps this one's hot tail off the cache line of the next Recorder
	// the allocator places after it (false sharing).
	_ [64]byte
}

// stats returns the stats of k, growing the table if k is new to r. Callers
// hold r.mu.
func (r *Recorder) stats(k Key) *keyStats {
	if int(k) >= len(r.keys) {
		grown := make([]keyStats, int(k)+1)
		copy(grown, r.keys)
		r.keys = grown
	}
	s := &r.keys[k]
	if !s.used {
		s.used = true
		r.c.mu.Lock() // lock order: recorder, then collector
		s.step = int(k) < len(r.c.kinds) && r.c.kinds[k] == KindStep
		r.c.mu.Unlock()
		s.reasons = map[string]int64{}
		s.corrected = result.NewLatencyHistogram()
		s.uncorr = result.NewLatencyHistogram()
		s.lag = result.NewLatencyHistogram()
	}
	return s
}

// secondOf returns the time-series second of t, clamped at 0.
func (r *Recorder) secondOf(t time.Time) int64 {
	return max(int64(t.Sub(r.c.start)/time.Second), 0)
}

func toUS(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if us < 0 {
		return 0
	}
	return us
}

// Record records one successful request of key k: intended is when the
// schedule wanted it sent, sent when it actually left, done when the reply
// arrived. The corrected histogram gets done-intended, the uncorrected one
// done-sent, the send-lag one sent-intended (all in µs, clamped to [0,
// result.HighestUS]). Only a step
// key's samples also count in Live and the time series: a message type's
// re-record a request its step already counted. It does not allocate once k
// has been seen by this recorder.
func (r *Recorder) Record(k Key, intended, sent, done time.Time) {
	r.RecordReady(k, intended, intended, sent, done)
}

// RecordReady is Record for a request that could not be sent before
// ready, a time after intended set by something outside the harness: the
// previous reply of a ping series on a fixed schedule (wrk2: the request
// is due at intended, and the corrected latency counts the wait, but the
// wait is the server's). Its send lag is sent-max(intended, ready).
func (r *Recorder) RecordReady(k Key, intended, ready, sent, done time.Time) {
	corr := toUS(done.Sub(intended))
	unc := toUS(done.Sub(sent))
	if ready.Before(intended) {
		ready = intended
	}
	lag := min(toUS(sent.Sub(ready)), result.HighestUS)
	sec := r.secondOf(done)
	r.mu.Lock()
	s := r.stats(k)
	s.successes++
	corr = min(corr, result.HighestUS)
	unc = min(unc, result.HighestUS)
	_ = s.corrected.RecordValue(corr)
	_ = s.uncorr.RecordValue(unc)
	_ = s.lag.RecordValue(lag)
	step := s.step
	if step {
		r.tick(sec, done)
		r.curReq++
		_ = r.curHist.RecordValue(corr)
	} else if done.After(r.last) {
		r.last = done
	}
	r.mu.Unlock()
	if step {
		r.live.successes.Add(1)
	}
}

// Fail records one failed request of key k for reason (see reports.Reason*)
// completed at done. Failures do not enter the latency histograms; as with
// Record, only a step key's failures count in Live and the time series.
func (r *Recorder) Fail(k Key, reason string, done time.Time) {
	sec := r.secondOf(done)
	r.mu.Lock()
	s := r.stats(k)
	s.failures++
	s.reasons[reason]++
	step := s.step
	if step {
		r.tick(sec, done)
		r.curReq++
		r.curErr++
		if r.fails == nil {
			r.fails = map[failSlot]int64{}
		}
		r.fails[failSlot{tenth: max(int64(done.Sub(r.c.start)/FailResolution), 0), key: k, reason: reason}]++
	} else if done.After(r.last) {
		r.last = done
	}
	r.mu.Unlock()
	if step {
		r.live.failures.Add(1)
	}
}

// Retry counts one retransmission of a request of key k (first sends are
// counted by Record and Fail).
func (r *Recorder) Retry(k Key) {
	r.mu.Lock()
	s := r.stats(k)
	s.retries++
	step := s.step
	r.mu.Unlock()
	if step {
		r.live.retries.Add(1)
	}
}

// Cut counts one request (or step run) of key k that the end of the run
// cut short: sent, but neither answered nor failed. It counts in
// Requests, not in the error rate, and not in Live. waited is how long
// the request had waited for its reply, timeout the longest its policy
// lets an attempt wait (0, 0: unknown, a step's run): one that waited
// result.SilentAfter or its timeout is also counted as silent.
func (r *Recorder) Cut(k Key, waited, timeout time.Duration) {
	silent := waited >= result.SilentAfter || timeout > 0 && waited >= timeout
	r.mu.Lock()
	s := r.stats(k)
	s.cut++
	if silent {
		s.cutSilent++
	}
	r.mu.Unlock()
}

// Dropped counts one start of key k the schedule could not keep.
func (r *Recorder) Dropped(k Key) {
	r.mu.Lock()
	s := r.stats(k)
	s.dropped++
	step := s.step
	r.mu.Unlock()
	if step {
		r.live.dropped.Add(1)
	}
}

// SessionStarted counts one simulated client session started.
func (r *Recorder) SessionStarted() { r.live.sessionsStarted.Add(1) }

// SessionFinished counts one simulated client session finished.
func (r *Recorder) SessionFinished() { r.live.sessionsFinished.Add(1) }

// Violation counts one breach of rule (e.g. "U-CRC") observed at. The first
// result.MaxViolationSamples per rule and recorder keep hex copies of packet
// and of the request that caused it (nil if unsolicited), and detail;
// Snapshot keeps the first of those in recorder-creation order, so the
// samples are the first per recorder, not the first in time across the run.
func (r *Recorder) Violation(rule string, at time.Time, packet, request []byte, detail string) {
	r.mu.Lock()
	v := r.violations[rule]
	if v == nil {
		v = &result.Violation{Rule: rule, Samples: []result.ViolationSample{}}
		r.violations[rule] = v
		r.violOrder = append(r.violOrder, rule)
	}
	v.Count++
	if len(v.Samples) < result.MaxViolationSamples {
		v.Samples = append(v.Samples, result.ViolationSample{
			OffsetNS: at.Sub(r.c.start),
			Packet:   hex.EncodeToString(packet),
			Request:  hex.EncodeToString(request),
			Detail:   detail,
		})
	}
	r.mu.Unlock()
	r.live.violations.Add(1)
}

// tick moves the per-second accumulator to sec, flushing the previous
// second into the collector, so the collector's lock is taken about once per
// second per recorder, not per sample. A sample in an earlier second than
// the current one still lands in its own second (at the cost of an extra
// flush): the series is exact whatever the order. Callers hold r.mu.
func (r *Recorder) tick(sec int64, done time.Time) {
	if done.After(r.last) {
		r.last = done
	}
	if sec == r.cur {
		return
	}
	if r.cur >= 0 {
		r.flushSecond()
	}
	r.cur = sec
}

// flushSecond moves the current second into the collector. Callers hold
// r.mu; it takes c.mu (lock order: recorder, then collector).
func (r *Recorder) flushSecond() {
	if r.curReq == 0 {
		return
	}
	c := r.c
	c.mu.Lock()
	s := c.seconds[r.cur]
	if s == nil {
		s = &second{h: result.NewSecondHistogram()}
		c.seconds[r.cur] = s
	}
	c.open(s)
	s.requests += r.curReq
	s.errors += r.curErr
	s.h.Merge(r.curHist)
	if r.last.After(c.last) {
		c.last = r.last
	}
	c.compact(r.cur)
	c.mu.Unlock()
	r.curReq, r.curErr = 0, 0
	r.curHist.Reset()
}

// Snapshot merges all recorders into a run result. It may be called while
// recording goes on (each recorder is locked only while it is copied) and
// any number of times. Scenario, Target and Thresholds are left for the
// caller to fill.
func (c *Collector) Snapshot() (*result.Run, error) {
	c.mu.Lock()
	rs := append([]*Recorder(nil), c.recorders...)
	names := append([]string(nil), c.names...)
	kinds := append([]Kind(nil), c.kinds...)
	c.mu.Unlock()

	acc := newSnapshotAcc(names)
	run := result.NewRun()
	run.StartedAt = c.start
	for _, r := range rs {
		r.mu.Lock()
		r.flushSecond()
		acc.add(r)
		r.mu.Unlock()
		run.Totals.SessionsStarted += r.live.sessionsStarted.Load()
		run.Totals.SessionsFinished += r.live.sessionsFinished.Load()
	}
	// Steps and messages come out in registration order, whichever
	// recorder saw a key first.
	if err := acc.series(run, kinds); err != nil {
		return nil, err
	}
	if err := acc.lob.result(run); err != nil {
		return nil, err
	}
	acc.violations(run)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	var err error
	if run.TimeSeries, err = c.timeSeries(); err != nil {
		return nil, err
	}
	if c.last.After(c.start) {
		run.DurationNS = c.last.Sub(c.start)
	}
	run.RateLimits = append([]result.RateLimitFinding{}, c.rateLimit...)
	run.Malformed = make([]result.MalformedFinding, 0, len(c.malOrder))
	for _, k := range c.malOrder {
		run.Malformed = append(run.Malformed, *c.malformed[k])
	}
	run.Thresholds = []result.ThresholdResult{}
	return run, nil
}

// seriesAgg is one key's figures summed over the recorders.
type seriesAgg struct {
	s             result.Series
	corr, un, lag *hdrhistogram.Histogram
	used          bool
}

// add sums a recorder's figures of the key into a.
func (a *seriesAgg) add(s *keyStats) {
	a.used = true
	a.s.Successes += s.successes
	a.s.Failures += s.failures
	a.s.Retries += s.retries
	a.s.Dropped += s.dropped
	a.s.Cut += s.cut
	a.s.CutSilent += s.cutSilent
	a.s.DataSent += s.bytesSent
	a.s.DataReceived += s.bytesReceived
	for reason, n := range s.reasons {
		a.s.FailuresByReason[reason] += n
	}
	a.corr.Merge(s.corrected)
	a.un.Merge(s.uncorr)
	a.lag.Merge(s.lag)
}

// series returns the key's series, its latencies from the merged
// histograms.
func (a *seriesAgg) series() (result.Series, error) {
	var err error
	if a.s.Latency, err = result.NewLatency(a.corr); err != nil {
		return result.Series{}, err
	}
	if a.s.Uncorrected, err = result.NewLatency(a.un); err != nil {
		return result.Series{}, err
	}
	if a.s.SendLag, err = result.NewLatency(a.lag); err != nil {
		return result.Series{}, err
	}
	a.s.Requests = a.s.Successes + a.s.Failures + a.s.Cut
	return a.s, nil
}

// snapshotAcc holds what Snapshot sums over the recorders.
type snapshotAcc struct {
	aggs      []seriesAgg // by key
	viol      map[string]*result.Violation
	violOrder []string
	lob       lobbyAcc
}

func newSnapshotAcc(names []string) *snapshotAcc {
	a := &snapshotAcc{aggs: make([]seriesAgg, len(names)), viol: map[string]*result.Violation{}}
	for i := range a.aggs {
		a.aggs[i] = seriesAgg{s: result.Series{Name: names[i], FailuresByReason: map[string]int64{}},
			corr: result.NewLatencyHistogram(), un: result.NewLatencyHistogram(), lag: result.NewLatencyHistogram()}
	}
	return a
}

// add sums recorder r, which the caller holds locked, into a.
func (a *snapshotAcc) add(r *Recorder) {
	a.lob.add(r)
	for k := range r.keys {
		if s := &r.keys[k]; s.used {
			a.aggs[k].add(s)
		}
	}
	for _, rule := range r.violOrder {
		v := r.violations[rule]
		acc := a.viol[rule]
		if acc == nil {
			acc = &result.Violation{Rule: rule, Samples: []result.ViolationSample{}}
			a.viol[rule] = acc
			a.violOrder = append(a.violOrder, rule)
		}
		acc.Count += v.Count
		for _, smp := range v.Samples {
			if len(acc.Samples) < result.MaxViolationSamples {
				acc.Samples = append(acc.Samples, smp)
			}
		}
	}
}

// series sets run's steps and messages from the keys used, in
// registration order, and sums the steps into run's totals.
func (a *snapshotAcc) series(run *result.Run, kinds []Kind) error {
	run.Steps, run.Messages = []result.Series{}, []result.Series{}
	t := &run.Totals
	for i := range a.aggs {
		if !a.aggs[i].used {
			continue
		}
		s, err := a.aggs[i].series()
		if err != nil {
			return err
		}
		if kinds[i] == KindMessage {
			run.Messages = append(run.Messages, s)
			continue
		}
		run.Steps = append(run.Steps, s)
		t.Requests += s.Requests
		t.Successes += s.Successes
		t.Failures += s.Failures
		t.Retries += s.Retries
		t.Dropped += s.Dropped
		t.Cut += s.Cut
		t.DataSent += s.DataSent
		t.DataReceived += s.DataReceived
		for reason, n := range s.FailuresByReason {
			t.FailuresByReason[reason] += n
		}
	}
	return nil
}

// violations sets run's violations, sorted by rule, and their total.
func (a *snapshotAcc) violations(run *result.Run) {
	run.Violations = make([]result.Violation, 0, len(a.violOrder))
	sort.Strings(a.violOrder)
	for _, rule := range a.violOrder {
		run.Violations = append(run.Violations, *a.viol[rule])
		run.Totals.Violations += a.viol[rule].Count
	}
}

// timeSeries returns the collected seconds in order. Callers hold c.mu.
func (c *Collector) timeSeries() ([]result.Point, error) {
	secs := make([]int64, 0, len(c.seconds))
	for s := range c.seconds {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	ts := make([]result.Point, 0, len(secs))
	for _, s := range secs {
		v := c.seconds[s]
		if v.point != nil {
			ts = append(ts, *v.point)
			continue
		}
		p, err := result.NewPoint(s, v.requests, v.errors, v.h)
		if err != nil {
			return nil, err
		}
		ts = append(ts, p)
	}
	return ts, nil
}

// FailResolution is the granularity of the failure timeline FailuresIn
// reads.
const FailResolution = 100 * time.Millisecond

// failSlot is one cell of a recorder's failure timeline.
type failSlot struct {
	tenth  int64 // offset from the collector's start / FailResolution
	key    Key
	reason string
}

// FailuresIn sums the step failures completed at an offset from the
// collector's start in [from, to) (to <= 0: no end), to FailResolution:
// a failure counts when its slot of FailResolution starts at or after
// from rounded down to it, and before to. It returns them by reason and
// the names of the steps that failed, in registration order; nil, nil
// when none did.
func (c *Collector) FailuresIn(from, to time.Duration) (byReason map[string]int64, steps []string) {
	c.mu.Lock()
	rs := append([]*Recorder(nil), c.recorders...)
	names := append([]string(nil), c.names...)
	c.mu.Unlock()
	lo := from / FailResolution
	hit := make([]bool, len(names))
	for _, r := range rs {
		r.mu.Lock()
		for slot, n := range r.fails {
			at := time.Duration(slot.tenth) * FailResolution
			if slot.tenth < int64(lo) || to > 0 && at >= to {
				continue
			}
			if byReason == nil {
				byReason = map[string]int64{}
			}
			byReason[slot.reason] += n
			if int(slot.key) < len(hit) {
				hit[slot.key] = true
			}
		}
		r.mu.Unlock()
	}
	for k, h := range hit {
		if h {
			steps = append(steps, names[k])
		}
	}
	return byReason, steps
}
