// Command verify checks the results of a sharded run on the e2e cluster,
// independently of `report merge`:
//
//	go run ./deploy/e2e/verify -n 4 RESULTS-DIR
//
// RESULTS-DIR holds shard-<i>.json for i in 0..n-1 and merged.json. It
// checks that each shard ran its own slice i/n; that the merged counters
// are the shards' sums (sessions, requests, failures); that each step's
// merged latency is that of one histogram fed every shard's samples (the
// shards' HDR histograms added here, not by result.Merge); that every
// threshold of the scenario was judged again on the merge, a latency one on
// that histogram and errors.rate on the summed counters; and that they all
// pass. It prints what it checked and exits 1 on the first mismatch
// class, listing every mismatch, 2 on unreadable input.
//
// With -scenario (the scenario the shards ran) it also checks that the
// shards started together (`run --start-at`): every shard has the one
// start instant as the zero of its schedule; none joined late (a late
// one must be reported: its missed arrivals in the merge and its
// headline INCOMPLETE; the check then fails, the margin was too short);
// the shard whose pod was held back (-delayed, by -delay) waited that much
// less for the instant, so the pods did start apart; and the sessions the
// shards played in each second from the instant, summed, are the
// scenario's schedule, second by second (checkSchedule).
//
// With -flows it also checks that every shard ran its clients in that
// flows mode (checkFlows).
//
// With -late as well, the held-back pod was held past the start instant:
// that shard must have joined late, counted the arrivals of its slice due
// before it joined as late_start dropped starts (checked against the
// scenario's schedule), and the merge must be INCOMPLETE and name it; the
// seconds after every shard joined must still be the schedule's, second
// by second (nothing shifted), and every arrival is accounted for, played
// or dropped (checkLate).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	// The protocols scenario.Load checks a scenario's protocol against.
	_ "github.com/lobbybench/lobbybench/protocols/all"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

func main() {
	n := flag.Int("n", 0, "number of shards (required)")
	scen := flag.String("scenario", "", "the scenario the shards ran: check they started together and played its schedule")
	delayed := flag.Int("delayed", -1, "the shard whose pod was held back (-1: none)")
	delay := flag.Duration("delay", 0, "how long that pod was held back")
	late := flag.Bool("late", false, "the held-back pod came up after the start instant: check it joined late and is reported")
	flows := flag.String("flows", "", "how every shard's clients must have met the network (run --flows resolved: sockets or virtual; empty: not checked)")
	flag.Parse()
	if *n < 1 || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: verify -n SHARDS RESULTS-DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	var shards []*result.Run
	for i := range *n {
		shards = append(shards, read(filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))))
	}
	merged := read(filepath.Join(dir, "merged.json"))
	problems := check(shards, merged)
	if *flows != "" {
		problems = append(problems, checkFlows(shards, merged, *flows)...)
	}
	schedNote := ""
	if *scen != "" {
		plan, err := scenario.Load(*scen)
		if err != nil {
			fmt.Fprintln(os.Stderr, "verify:", err)
			os.Exit(2)
		}
		var p []string
		if *late {
			p, schedNote = checkLate(plan, shards, merged, *delayed)
		} else {
			p, schedNote = checkSchedule(plan, shards, merged, *delayed, *delay)
		}
		problems = append(problems, p...)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "verify: FAIL:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("verify: %d shards, %d sessions started (%s), %d requests, %d failed; %d steps' histograms and %d thresholds checked on the merge, all pass\n",
		merged.Shards, merged.Totals.SessionsStarted, sessionsList(shards), merged.Totals.Requests, merged.Totals.Failures, len(merged.Steps), len(merged.Thresholds))
	if schedNote != "" {
		fmt.Println("verify: " + schedNote)
	}
}

// checkSchedule checks that the shards started together and, summed,
// played the scenario's schedule (see the package comment). The expected
// arrivals per second are the scenario's own (scenario.Schedule of its
// seed, as every shard walks it), counted by due time; the shards count
// each session in the second they played it, a little after its due time
// (the generator's send lag, a few ms at most when it keeps up), so an
// arrival due in the last ms of a second may count in the next: each
// second may differ by up to max(3, 10%) of its expected count, and the
// running totals by as much, while the whole run must match exactly
// (played + dropped = the schedule's arrivals). Pods started 4 s apart
// without a shared instant shift a quarter of the load by 4 s: seconds
// past the schedule's end would hold a shard's arrivals, far outside it.
func checkSchedule(plan *scenario.Plan, shards []*result.Run, m *result.Run, delayed int, delay time.Duration) (bad []string, note string) {
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	var waits []string
	var maxOther time.Duration
	at, got, played, dropped := walkShards(shards, fail, func(i int, s *result.Run, sr result.ShardRun) {
		if !s.StartedAt.Equal(sr.StartAt) {
			fail("shard %d: started_at %v is not its start instant %v", i, s.StartedAt, sr.StartAt)
		}
		if sr.LateStartNS > 0 {
			fail("shard %d came up %v after the start instant and joined late (%d arrivals missed): the margin before START_AT was too short", i, sr.LateStartNS, sr.Sessions.DroppedLateStart)
			if m.Sessions == nil || m.Sessions.DroppedLateStart < sr.Sessions.DroppedLateStart || len(m.MissingLoad()) == 0 {
				fail("the merge does not report shard %d's late start", i)
			}
		}
		waits = append(waits, fmt.Sprintf("%d: %.1fs", i, sr.StartWaitNS.Seconds()))
		if i != delayed {
			maxOther = max(maxOther, sr.StartWaitNS)
		}
	})
	if delayed >= 0 && delayed < len(shards) && len(shards[delayed].ShardRuns) == 1 {
		if w := shards[delayed].ShardRuns[0].StartWaitNS; w > maxOther-delay/2 {
			fail("shard %d, whose pod was held back %v, waited %v for the start instant, the others up to %v: the pods did not start apart", delayed, delay, w, maxOther)
		}
	}
	dues := scheduleOf(plan)
	total := int64(len(dues))
	if played+dropped != total {
		fail("the shards started %d and dropped %d arrivals, the schedule has %d", played, dropped, total)
	}
	lag := harnessLag(shards)
	worst, _ := comparePerSecond(got, dues, lag, 0, fail)
	note = fmt.Sprintf("one start instant %s for every shard (waits %s); %d arrivals played second by second as the schedule's %d (worst second off by %d; harness lag up to %v)",
		at.UTC().Format(time.RFC3339Nano), strings.Join(waits, ", "), played, total, worst, lag)
	return bad, note
}

// checkLate checks a run whose held-back shard came up after the start
// instant (-late). Shard i owns arrivals u with u%n == i (engine.Shard);
// a shard joining late by L drops those due before L as late_start, and
// may still play those due in the last second before it joined (the open
// model's lateness bound), so its count must lie between the schedule's
// count of its arrivals due before L-1s and before L. The merge must be
// INCOMPLETE and its missing load must name the late start. From the
// second after the last shard joined, the shards' played sessions per
// second must be the schedule's, with checkSchedule's tolerance.
func checkLate(plan *scenario.Plan, shards []*result.Run, m *result.Run, delayed int) (bad []string, note string) {
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	n := len(shards)
	type arrival struct {
		u   int
		due time.Duration
	}
	var all []arrival
	for u, due := range scheduleOf(plan) {
		all = append(all, arrival{u, due})
	}
	var lateSum int64
	var joinedBy time.Duration
	var lates []string
	_, got, played, dropped := walkShards(shards, fail, func(i int, _ *result.Run, sr result.ShardRun) {
		late := time.Duration(sr.LateStartNS)
		if i == delayed && late <= 0 {
			fail("shard %d, whose pod was held back past the start instant, did not join late (waited %v)", i, sr.StartWaitNS)
		}
		if late > 0 {
			var lo, hi int64
			for _, a := range all {
				if a.u%n != i {
					continue
				}
				if a.due < late-time.Second {
					lo++
				}
				if a.due < late {
					hi++
				}
			}
			d := sr.Sessions.DroppedLateStart
			if d < lo || d > hi {
				fail("shard %d joined %v late and counted %d arrivals as late_start; its slice of the schedule has %d-%d due before it joined", i, late, d, lo, hi)
			}
			lateSum += d
			joinedBy = max(joinedBy, late)
			lates = append(lates, fmt.Sprintf("shard %d joined %.1fs late, %d arrivals late_start (schedule: %d-%d)", i, late.Seconds(), d, lo, hi))
		}
	})
	if played+dropped != int64(len(all)) {
		fail("the shards started %d and dropped %d arrivals, the schedule has %d", played, dropped, len(all))
	}
	hl := m.Headline()
	missing := strings.Join(m.MissingLoad(), "; ")
	switch {
	case hl.Status != result.StatusIncomplete && hl.Status != result.StatusTargetDown:
		fail("the merge of a run with a late shard reads %q, want INCOMPLETE", hl.Text)
	case m.Sessions == nil || m.Sessions.DroppedLateStart != lateSum:
		fail("the merge counts %v late_start arrivals, the shards %d", m.Sessions, lateSum)
	case !strings.Contains(missing, "late start"):
		fail("the merge's missing load %q does not name the late start", missing)
	}
	from := int(joinedBy/time.Second) + 1
	dues := make([]time.Duration, len(all))
	for i, a := range all {
		dues[i] = a.due
	}
	_, checked := comparePerSecond(got, dues, harnessLag(shards), from, fail)
	if checked == 0 {
		fail("no second of the schedule was left after the last shard joined (%v): nothing shows the schedule unshifted", joinedBy)
	}
	note = fmt.Sprintf("late start: %s; merge %s; seconds %d-%d after every shard joined played as the schedule's",
		strings.Join(lates, ", "), hl.Text, from, from+checked-1)
	return bad, note
}

// walkShards checks that every shard's run starts its schedule at the one
// start instant, calls each with every shard that has one, and sums what
// they played second by second and the arrivals they played and dropped.
func walkShards(shards []*result.Run, fail func(string, ...any), each func(i int, s *result.Run, sr result.ShardRun)) (at time.Time, got []int64, played, dropped int64) {
	for i, s := range shards {
		if len(s.ShardRuns) != 1 {
			continue
		}
		sr := s.ShardRuns[0]
		switch {
		case sr.StartAt.IsZero():
			fail("shard %d has no start instant: START_AT did not reach it", i)
			continue
		case at.IsZero():
			at = sr.StartAt
		case !sr.StartAt.Equal(at):
			fail("shard %d started its schedule at %v, shard 0 at %v", i, sr.StartAt, at)
		}
		each(i, s, sr)
		for k, v := range sr.PlayedPerSecond {
			for len(got) <= k {
				got = append(got, 0)
			}
			got[k] += v
		}
		played += sr.Sessions.Started
		dropped += sr.Sessions.DroppedNoSlot + sr.Sessions.DroppedLate + sr.Sessions.DroppedLateStart
	}
	return at, got, played, dropped
}

// scheduleOf is the due times of the scenario's arrivals, in order: its
// schedule from its seed, as every shard walks it.
func scheduleOf(plan *scenario.Plan) []time.Duration {
	var dues []time.Duration
	sched := plan.Load.Schedule(plan.Seed)
	for {
		due, more := sched.Next()
		if !more {
			return dues
		}
		dues = append(dues, due)
	}
}

// harnessLag is the latest any shard sent a request after it was due
// (every step's send-lag maximum), capped at the open model's lateness
// bound of 1 s (a later arrival is dropped, not played): how far past its
// due second a session may have been played.
func harnessLag(shards []*result.Run) time.Duration {
	var lag time.Duration
	for _, s := range shards {
		for _, st := range s.Steps {
			lag = max(lag, time.Duration(st.SendLag.MaxUS)*time.Microsecond)
		}
	}
	return min(lag, time.Second)
}

// comparePerSecond compares got, the sessions the shards played in each
// second from the start instant, with the schedule's due times, from
// second from on. A session counts in the second it was played, a little
// after it was due, so one due within lag of a second's end may count in
// the next: second k may hold up to that many fewer of its own and more
// of the previous second's, and the running totals may trail by as
// many; beyond that, each second may differ by max(3, 10 %). It returns
// the worst difference and how many seconds it compared.
func comparePerSecond(got []int64, dues []time.Duration, lag time.Duration, from int, fail func(string, ...any)) (worst int64, checked int) {
	var want, spill []int64 // spill[k]: due in second k within lag of its end
	for _, due := range dues {
		k := int(due / time.Second)
		for len(want) <= k {
			want, spill = append(want, 0), append(spill, 0)
		}
		want[k]++
		if time.Duration(k+1)*time.Second-due <= lag {
			spill[k]++
		}
	}
	at := func(v []int64, k int) int64 {
		if k >= 0 && k < len(v) {
			return v[k]
		}
		return 0
	}
	// The running totals count from second from, which may also hold
	// sessions due at the end of the second before it.
	var cumGot, cumWant int64
	carry := at(spill, from-1)
	for k := from; k < max(len(got), len(want)); k++ {
		g, w := at(got, k), at(want, k)
		cumGot += g
		cumWant += w
		tol := max(3, w/10)
		lo, hi := w-at(spill, k)-tol, w+at(spill, k-1)+tol
		if g < lo || g > hi || cumGot < cumWant-at(spill, k)-tol || cumGot > cumWant+carry+tol {
			fail("second %d from the start instant: the shards played %d sessions (%d so far), the schedule has %d (%d so far); allowed %d-%d (tolerance %d, %d due within the harness lag %v of the second's end)",
				k, g, cumGot, w, cumWant, lo, hi, tol, at(spill, k), lag)
		}
		worst = max(worst, abs(g-w))
		checked++
	}
	return worst, checked
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func read(path string) *result.Run {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify:", err)
		os.Exit(2)
	}
	defer f.Close()
	r, err := result.ReadRun(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "verify: %s: %v\n", path, err)
		os.Exit(2)
	}
	return r
}

func sessionsList(shards []*result.Run) string {
	s := ""
	for i, r := range shards {
		if i > 0 {
			s += " + "
		}
		s += strconv.FormatInt(r.Totals.SessionsStarted, 10)
	}
	return s
}

var latencyMetric = regexp.MustCompile(`^(.+)\.p(50|90|99|99\.9)$`)

// problems collects what check finds wrong, one line each.
type problems []string

func (p *problems) fail(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

func check(shards []*result.Run, m *result.Run) []string {
	var bad problems
	sum := checkTotals(&bad, shards, m)
	whole := checkLatencies(&bad, shards, m)
	checkThresholds(&bad, shards, m, whole, sum)
	return bad
}

// checkFlows checks that every shard ran its clients in flows mode want
// (result.Harness.Flows), as its own result and the merge's record of it
// say: a shard that fell back to sockets (run --flows auto) or was never
// told would otherwise pass unseen.
func checkFlows(shards []*result.Run, m *result.Run, want string) []string {
	var bad problems
	for i, s := range shards {
		for _, sr := range s.ShardRuns {
			if sr.Harness.Flows != want {
				bad.fail("shard-%d.json ran %q flows, want %q", i, sr.Harness.Flows, want)
			}
		}
	}
	for _, sr := range m.ShardRuns {
		if sr.Harness.Flows != want {
			bad.fail("merged.json: shard %s ran %q flows, want %q", sr.Shard, sr.Harness.Flows, want)
		}
	}
	return bad
}

// checkTotals checks each shard is its i/n and the merge's totals are the
// shards' sums, which it returns.
func checkTotals(bad *problems, shards []*result.Run, m *result.Run) result.Totals {
	n := len(shards)
	var sum result.Totals
	for i, s := range shards {
		want := fmt.Sprintf("%d/%d", i, n)
		if len(s.ShardRuns) != 1 {
			bad.fail("shard-%d.json records %d runs, want one (shard %s)", i, len(s.ShardRuns), want)
		} else if s.ShardRuns[0].Shard != want {
			bad.fail("shard-%d.json is shard %s, want %s", i, s.ShardRuns[0].Shard, want)
		}
		if s.Totals.SessionsStarted == 0 {
			bad.fail("shard %d started no session", i)
		}
		sum.SessionsStarted += s.Totals.SessionsStarted
		sum.Requests += s.Totals.Requests
		sum.Failures += s.Totals.Failures
	}
	if m.Shards != n {
		bad.fail("merged.json merges %d shards, want %d", m.Shards, n)
	}
	if m.Totals.SessionsStarted != sum.SessionsStarted || m.Totals.Requests != sum.Requests || m.Totals.Failures != sum.Failures {
		bad.fail("merged sessions/requests/failures %d/%d/%d, the shards' sums %d/%d/%d",
			m.Totals.SessionsStarted, m.Totals.Requests, m.Totals.Failures, sum.SessionsStarted, sum.Requests, sum.Failures)
	}
	return sum
}

// checkLatencies checks each merged step's latency against one histogram
// fed every shard's samples, and returns those, by step.
func checkLatencies(bad *problems, shards []*result.Run, m *result.Run) map[string]result.Latency {
	whole := map[string]result.Latency{}
	for _, st := range m.Steps {
		h := result.NewLatencyHistogram()
		for i, s := range shards {
			for _, ss := range s.Steps {
				if ss.Name != st.Name || ss.Latency.Count == 0 {
					continue
				}
				sh, err := ss.Latency.Histogram()
				if err != nil {
					bad.fail("shard %d step %s: %v", i, ss.Name, err)
					continue
				}
				h.Merge(sh)
			}
		}
		l, err := result.NewLatency(h)
		if err != nil {
			bad.fail("step %s: %v", st.Name, err)
			continue
		}
		whole[st.Name] = l
		got := st.Latency
		if got.Count != l.Count || got.P50US != l.P50US || got.P90US != l.P90US || got.P99US != l.P99US || got.P999US != l.P999US || got.MaxUS != l.MaxUS {
			bad.fail("step %s: merged latency count %d p50 %d p99 %d max %d µs, one histogram of every sample: %d, %d, %d, %d",
				st.Name, got.Count, got.P50US, got.P99US, got.MaxUS, l.Count, l.P50US, l.P99US, l.MaxUS)
		}
	}
	return whole
}

// checkThresholds checks the merge's thresholds were judged again on the
// merge, not copied from a shard: each passes, its verdict agrees with
// its figure, and the figure is recomputed from the shards' samples
// (whole, sum) where the metric allows.
func checkThresholds(bad *problems, shards []*result.Run, m *result.Run, whole map[string]result.Latency, sum result.Totals) {
	if len(shards[0].Thresholds) == 0 {
		bad.fail("the shards carry no thresholds: nothing to judge on the merge")
	}
	if len(m.Thresholds) != len(shards[0].Thresholds) {
		bad.fail("merged.json has %d thresholds, the scenario %d", len(m.Thresholds), len(shards[0].Thresholds))
	}
	for _, th := range m.Thresholds {
		if !th.Pass {
			bad.fail("threshold %q fails on the merge (observed %v)", th.Name, th.Observed)
		}
		if ok := compare(th.Observed, th.Op, th.Limit); ok != th.Pass && !th.NoData {
			bad.fail("threshold %q: observed %v %s %v is %v, recorded %v", th.Name, th.Observed, th.Op, th.Limit, ok, th.Pass)
		}
		want, ok := recomputed(bad, th, shards, whole, sum)
		if !ok {
			continue // other metrics: the verdict check above only
		}
		if math.Abs(th.Observed-want) > 1e-9*math.Max(1, math.Abs(want)) {
			bad.fail("threshold %q: merged observed %v, recomputed from the shards' samples %v", th.Name, th.Observed, want)
		}
	}
}

// recomputed is th's figure recomputed from the shards' samples; false
// for a metric it cannot recompute (or a step not in the merge, reported).
func recomputed(bad *problems, th result.ThresholdResult, shards []*result.Run, whole map[string]result.Latency, sum result.Totals) (float64, bool) {
	switch mm := latencyMetric.FindStringSubmatch(th.Metric); {
	case mm != nil:
		l, ok := whole[mm[1]]
		if !ok {
			bad.fail("threshold %q names step %q, not in the merge", th.Name, mm[1])
			return 0, false
		}
		us := map[string]int64{"50": l.P50US, "90": l.P90US, "99": l.P99US, "99.9": l.P999US}[mm[2]]
		return float64(us) / 1e6, true
	case th.Metric == "errors.rate":
		return float64(sum.Failures) / float64(max(sum.Requests, 1)), true
	case th.Metric == "violations":
		var want float64
		for _, s := range shards {
			want += float64(s.Totals.Violations)
		}
		return want, true
	}
	return 0, false
}

func compare(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "==":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}
