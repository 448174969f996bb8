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
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/lobbybench/lobbybench/result"
)

func main() {
	n := flag.Int("n", 0, "number of shards (required)")
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
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "verify: FAIL:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("verify: %d shards, %d sessions started (%s), %d requests, %d failed; %d steps' histograms and %d thresholds checked on the merge, all pass\n",
		merged.Shards, merged.Totals.SessionsStarted, sessionsList(shards), merged.Totals.Requests, merged.Totals.Failures, len(merged.Steps), len(merged.Thresholds))
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

func check(shards []*result.Run, m *result.Run) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	n := len(shards)
	var sum result.Totals
	for i, s := range shards {
		want := fmt.Sprintf("%d/%d", i, n)
		if len(s.ShardRuns) != 1 {
			fail("shard-%d.json records %d runs, want one (shard %s)", i, len(s.ShardRuns), want)
		} else if s.ShardRuns[0].Shard != want {
			fail("shard-%d.json is shard %s, want %s", i, s.ShardRuns[0].Shard, want)
		}
		if s.Totals.SessionsStarted == 0 {
			fail("shard %d started no session", i)
		}
		sum.SessionsStarted += s.Totals.SessionsStarted
		sum.Requests += s.Totals.Requests
		sum.Failures += s.Totals.Failures
	}
	if m.Shards != n {
		fail("merged.json merges %d shards, want %d", m.Shards, n)
	}
	if m.Totals.SessionsStarted != sum.SessionsStarted || m.Totals.Requests != sum.Requests || m.Totals.Failures != sum.Failures {
		fail("merged sessions/requests/failures %d/%d/%d, the shards' sums %d/%d/%d",
			m.Totals.SessionsStarted, m.Totals.Requests, m.Totals.Failures, sum.SessionsStarted, sum.Requests, sum.Failures)
	}

	// One histogram per step, fed every shard's samples.
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
					fail("shard %d step %s: %v", i, ss.Name, err)
					continue
				}
				h.Merge(sh)
			}
		}
		l, err := result.NewLatency(h)
		if err != nil {
			fail("step %s: %v", st.Name, err)
			continue
		}
		whole[st.Name] = l
		got := st.Latency
		if got.Count != l.Count || got.P50US != l.P50US || got.P90US != l.P90US || got.P99US != l.P99US || got.P999US != l.P999US || got.MaxUS != l.MaxUS {
			fail("step %s: merged latency count %d p50 %d p99 %d max %d µs, one histogram of every sample: %d, %d, %d, %d",
				st.Name, got.Count, got.P50US, got.P99US, got.MaxUS, l.Count, l.P50US, l.P99US, l.MaxUS)
		}
	}

	// Thresholds: judged again on the merge, not copied from a shard.
	if len(shards[0].Thresholds) == 0 {
		fail("the shards carry no thresholds: nothing to judge on the merge")
	}
	if len(m.Thresholds) != len(shards[0].Thresholds) {
		fail("merged.json has %d thresholds, the scenario %d", len(m.Thresholds), len(shards[0].Thresholds))
	}
	for _, th := range m.Thresholds {
		if !th.Pass {
			fail("threshold %q fails on the merge (observed %v)", th.Name, th.Observed)
		}
		if ok := compare(th.Observed, th.Op, th.Limit); ok != th.Pass && !th.NoData {
			fail("threshold %q: observed %v %s %v is %v, recorded %v", th.Name, th.Observed, th.Op, th.Limit, ok, th.Pass)
		}
		var want float64
		switch mm := latencyMetric.FindStringSubmatch(th.Metric); {
		case mm != nil:
			l, ok := whole[mm[1]]
			if !ok {
				fail("threshold %q names step %q, not in the merge", th.Name, mm[1])
				continue
			}
			us := map[string]int64{"50": l.P50US, "90": l.P90US, "99": l.P99US, "99.9": l.P999US}[mm[2]]
			want = float64(us) / 1e6
		case th.Metric == "errors.rate":
			want = float64(sum.Failures) / float64(max(sum.Requests, 1))
		case th.Metric == "violations":
			for _, s := range shards {
				want += float64(s.Totals.Violations)
			}
		default:
			continue // other metrics: the verdict check above only
		}
		if math.Abs(th.Observed-want) > 1e-9*math.Max(1, math.Abs(want)) {
			fail("threshold %q: merged observed %v, recomputed from the shards' samples %v", th.Name, th.Observed, want)
		}
	}
	return bad
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
