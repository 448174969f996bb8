// Command benchtruth checks lobbybench's latency figures against the truth
// (`make bench-truth`, part of `make bench`). For each configuration it
// starts, in a child process of its own (peer.go), a UDP lobby stub that
// answers LOBBY_LIST_ROOMS (an empty room list) after a fixed injected
// delay, optionally holding every reply during a periodic stall, and
// measures it in the same run with:
//
//   - lobbybench, in this process: an open-model scenario, one list_rooms
//     per session, at the configured rate (corrected and uncorrected
//     p50/p99, send lag);
//   - a plain blocking reference client (reference.go), in the child: one
//     socket, a sender thread that sleeps in clock_nanosleep(2) until
//     each request's due time and calls sendto(2), a receiver thread
//     blocked in recvfrom(2); both on locked OS threads, no Go netpoller.
//     It runs the same open schedule at the same rate and reports latency
//     from the due time (corrected) and from its send, and its own send
//     lag: what this machine's scheduler costs a blocking sender. Its
//     corrected latency is taken twice: to recvmsg's return, and to the
//     kernel's receive stamp (SO_TIMESTAMPNS, "ref kernel p50").
//
// The stub and the reference client are another process, as a target and
// an independent client are: in lobbybench's process they would share its
// Ps and its GC (the reference's sender, asleep in a syscall, holds a P
// until the runtime takes it back) and be charged to its send lag.
//
// -order says when the reference client runs: "together" (beside
// lobbybench, the same seconds), "apart" (alone, right after lobbybench's
// run, against the same stub): the first shows both clients the same
// machine, the second keeps either from slowing the other. Each
// configuration, mode and order is measured -runs times; every run is a
// row, and a second table gives the medians, judged against the targets.
//
// lobbybench is measured in each mode of -modes: "default", "precise"
// (`run --precise`: poll the socket after each send before parking) and
// "virtual" (`run --flows virtual`: a virtual flow per arrival instead of
// a socket; Linux with the privileges only), each
// beside its own reference client, one after the other on the same
// configuration. "cpu" and "cpu/req" are lobbybench's process's CPU time
// (over the run, and per lobbybench request); the "vs default" columns
// are another mode's row's p50, send-lag p99 and cpu/req as ratios against
// the default row just before it. "steal" is the time the hypervisor
// took from this machine's CPUs during the run (/proc/stat): whatever
// runs in such a gap, both clients are late.
//
// Targets: at 0 and 20 ms delay, at 200 and 2,000 sessions/s, in both
// orders, lobbybench's corrected p50 within max(5 %, 50 µs) of the
// reference's (the median over the runs), the reference's taken to where
// lobbybench's latencies ended (the kernel's receive stamp on Linux);
// send lag p99 under 100 µs at 2,000/s; a stall shows in the corrected p99
// and in the time series (the worst second's p99 against the median
// second's). The "ok" column says whether the p50 target held.
//
// Loopback only; every loop is bounded by -duration.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

type config struct {
	rate         int
	delay, stall time.Duration
	every        time.Duration
}

func main() {
	var (
		rates    = flag.String("rates", "200,2000,20000", "comma-separated session rates (per second)")
		delays   = flag.String("delays", "0s,20ms", "comma-separated injected server delays")
		duration = flag.Duration("duration", 5*time.Second, "length of each measured run")
		stall    = flag.Duration("stall", time.Second, "stall length of the stall runs (0: skip them)")
		every    = flag.Duration("stall-every", 3*time.Second, "period of the stall")
		modes    = flag.String("modes", "default,precise", "comma-separated lobbybench modes: default, precise (run --precise), virtual (run --flows virtual)")
		orders   = flag.String("order", "together,apart", "comma-separated: together (the reference beside lobbybench), apart (the reference alone, after it)")
		runs     = flag.Int("runs", 3, "runs of each configuration, mode and order (the summary takes medians)")
		profile  = flag.String("cpuprofile", "", "write a CPU profile of this process (lobbybench's runs; the stub and the reference are a child's) to `FILE`")
		traceTo  = flag.String("trace", "", "write an execution trace of this process (lobbybench's runs) to `FILE` (go tool trace)")
	)
	flag.Parse()
	if cfg := os.Getenv(peerEnv); cfg != "" {
		if err := runPeer(cfg); err != nil {
			fatal(err)
		}
		return
	}
	if startTo(*profile, pprof.StartCPUProfile) {
		defer pprof.StopCPUProfile()
	}
	if startTo(*traceTo, trace.Start) {
		defer trace.Stop()
	}
	cfgs := configs(*rates, *delays, *stall, *every)
	modeList := parseModes(*modes)
	if *runs < 1 {
		fatal(fmt.Errorf("-runs %d: want at least 1", *runs))
	}
	var all [][]row
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "rate/s\tdelay\tstall\tmode\torder\tlb p50\tlb p99\tlb uncorr p50\tlb uncorr p99\tsend lag p50\tsend lag p99\tref p50\tref kernel p50\tref p99\tref uncorr p50\tref lag p50\tref lag p99\tworst s p99\tmedian s p99\tcpu\tcpu/req\tsteal\tp50 ok\tp50 vs default\tlag p99 vs default\tcpu/req vs default\t")
	for _, c := range cfgs {
		for _, together := range parseOrders(*orders) {
			if !together && c.stall > 0 {
				continue // a stall is seen by whoever runs during it: only side by side compares
			}
			for _, p := range modeList {
				var rs []row
				for i := range *runs {
					fmt.Fprintf(os.Stderr, "benchtruth: %d/s, delay %v, stall %v, %s, %s, run %d/%d …\n", c.rate, c.delay, c.stall, p, orderName(together), i+1, *runs)
					r, err := measure(c, *duration, p, together)
					if err != nil {
						fatal(err)
					}
					rs = append(rs, r)
				}
				all = append(all, rs)
			}
		}
	}
	for _, rs := range all {
		var base *row
		for _, other := range all {
			if other[0].mode == modeDefault && other[0].c == rs[0].c && other[0].together == rs[0].together {
				base = &other[0]
			}
		}
		for _, r := range rs {
			fmt.Fprintln(w, r.format(base))
		}
	}
	w.Flush()
	fmt.Println()
	printMedians(all)
}

// parseOrders reads -order: true for together, false for apart.
func parseOrders(v string) []bool {
	var out []bool
	for _, o := range strings.Split(v, ",") {
		switch strings.TrimSpace(o) {
		case "together":
			out = append(out, true)
		case "apart":
			out = append(out, false)
		default:
			fatal(fmt.Errorf("-order: %q is neither together nor apart", o))
		}
	}
	return out
}

func orderName(together bool) string {
	if together {
		return "together"
	}
	return "apart"
}

// printMedians prints, per configuration, mode and order, the medians over
// the runs and whether the p50 target holds on them.
func printMedians(all [][]row) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "medians\trate/s\tdelay\tstall\tmode\torder\truns\tlb ends at\tlb p50\tref p50\tref kernel p50\tp50 gap\ttolerance\tsend lag p99\tref lag p99\tcpu/req\tp50 ok\t")
	for _, rs := range all {
		med := func(f func(row) int64) int64 {
			v := make([]int64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		lb, ref := med(func(r row) int64 { return r.s.Latency.P50US }), med(func(r row) int64 { return refP50(r.ref, r.lbKernel) })
		ok := "-"
		if rs[0].c.stall == 0 {
			ok = p50OK(lb, ref)
		}
		ends := "user space"
		if rs[0].lbKernel {
			ends = "kernel stamp"
		}
		c := rs[0].c
		stall := "-"
		if c.stall > 0 {
			stall = fmt.Sprintf("%v/%v", c.stall, c.every)
		}
		fmt.Fprintf(w, "\t%d\t%v\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\t\n", c.rate, c.delay, stall, rs[0].mode, orderName(rs[0].together), len(rs), ends,
			us(lb), us(med(func(r row) int64 { return r.ref.p50 })), us(med(func(r row) int64 { return r.ref.kernelP50 })), us(lb-ref), us(p50Tolerance(ref)), us(med(func(r row) int64 { return r.s.SendLag.P99US })), us(med(func(r row) int64 { return r.ref.lagP99 })),
			time.Duration(med(func(r row) int64 { return int64(r.cpuPerReq) })).Round(100*time.Nanosecond), ok)
	}
	w.Flush()
}

// refP50 is the reference's p50 that lobbybench's is judged against: the
// one ending where lobbybench's latencies ended (the kernel's receive
// stamp, when both have it; else the moment the client saw the reply).
func refP50(r refResult, lbKernel bool) int64 {
	if lbKernel && r.kernelP50 > 0 {
		return r.kernelP50
	}
	return r.p50
}

// p50Tolerance is how far lobbybench's p50 may be from the reference's
// (ref, in µs): max(5 %, 50 µs).
func p50Tolerance(ref int64) int64 { return max(ref*5/100, 50) }

// p50OK says whether lobbybench's p50 lb is within p50Tolerance of ref.
func p50OK(lb, ref int64) string {
	if d := lb - ref; d > p50Tolerance(ref) || d < -p50Tolerance(ref) {
		return "no"
	}
	return "yes"
}

// configs is every configuration of -rates and -delays, then the stall
// runs at rates up to 2,000/s (none when stall is 0).
func configs(rates, delays string, stall, every time.Duration) []config {
	var cfgs []config
	for _, d := range strings.Split(delays, ",") {
		dd, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			fatal(fmt.Errorf("-delays: %w", err))
		}
		for _, r := range parseRates(rates) {
			cfgs = append(cfgs, config{rate: r, delay: dd})
		}
	}
	if stall > 0 {
		for _, r := range parseRates(rates) {
			if r <= 2000 {
				cfgs = append(cfgs, config{rate: r, stall: stall, every: every})
			}
		}
	}
	return cfgs
}

// The modes lobbybench is measured in (-modes).
const (
	modeDefault = "default"
	modePrecise = "precise"
	modeVirtual = "virtual"
)

// parseModes reads -modes.
func parseModes(v string) []string {
	var modes []string
	for _, m := range strings.Split(v, ",") {
		switch m = strings.TrimSpace(m); m {
		case modeDefault, modePrecise, modeVirtual:
			modes = append(modes, m)
		default:
			fatal(fmt.Errorf("-modes: %q is none of default, precise, virtual", m))
		}
	}
	return modes
}

func parseRates(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var r int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &r); err != nil || r <= 0 {
			fatal(fmt.Errorf("-rates: %q is not a positive rate", f))
		}
		out = append(out, r)
	}
	return out
}

// startTo starts a profile or trace (start) into a new file at path;
// false, starting nothing, when path is empty.
func startTo(path string, start func(io.Writer) error) bool {
	if path == "" {
		return false
	}
	f, err := os.Create(path)
	if err != nil {
		fatal(err)
	}
	if err := start(f); err != nil {
		fatal(err)
	}
	return true
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchtruth:", err)
	os.Exit(1)
}

func us(v int64) string { return (time.Duration(v) * time.Microsecond).String() }

// row is one configuration measured in one mode.
type row struct {
	c          config
	mode       string // modeDefault, modePrecise or modeVirtual
	together   bool   // the reference ran beside lobbybench (else after it)
	lbKernel   bool   // lobbybench's latencies ended at the kernel's receive stamp
	s          *result.Series
	ref        refResult
	worst, med int64
	cpu        float64 // process CPUs over the run
	cpuPerReq  time.Duration
	steal      string // the machine's steal time over the run (stolen), "-": unknown
	ok         string
}

// format prints r, with ratios against base (the default mode's row of
// the same configuration, nil: none).
func (r row) format(base *row) string {
	ratio := func(a, b float64) string {
		if base == nil || r.mode == modeDefault || b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	stall := "-"
	if r.c.stall > 0 {
		stall = fmt.Sprintf("%v/%v", r.c.stall, r.c.every)
	}
	var p50, lag, cpu string
	if base != nil {
		p50 = ratio(float64(r.s.Latency.P50US), float64(base.s.Latency.P50US))
		lag = ratio(float64(r.s.SendLag.P99US), float64(base.s.SendLag.P99US))
		cpu = ratio(float64(r.cpuPerReq), float64(base.cpuPerReq))
	} else {
		p50, lag, cpu = "-", "-", "-"
	}
	s := r.s
	return fmt.Sprintf("%d\t%v\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%v\t%s\t%s\t%s\t%s\t%s\t",
		r.c.rate, r.c.delay, stall, r.mode, orderName(r.together), us(s.Latency.P50US), us(s.Latency.P99US), us(s.Uncorrected.P50US), us(s.Uncorrected.P99US),
		us(s.SendLag.P50US), us(s.SendLag.P99US), us(r.ref.p50), us(r.ref.kernelP50), us(r.ref.p99), us(r.ref.uncorrP50), us(r.ref.lagP50), us(r.ref.lagP99), us(r.worst), us(r.med), r.cpu*100,
		r.cpuPerReq.Round(100*time.Nanosecond), r.steal, r.ok, p50, lag, cpu)
}

// measure runs lobbybench (in mode) and the reference
// client against a fresh stub with c's delay and stall: side by side when
// together, else the reference alone right after lobbybench. The
// stub and the reference client run in a child process (peer): a target
// and an independent client are other processes, and in lobbybench's
// they would hold its Ps (the reference's sender sleeps in a syscall
// holding one until the runtime takes it back) and share its GC.
func measure(c config, d time.Duration, mode string, together bool) (row, error) {
	pr, err := startPeer(c, d)
	if err != nil {
		return row{}, err
	}
	defer pr.close()
	flows := "sockets"
	if mode == modeVirtual {
		flows = "virtual"
	}
	plan, err := scenario.Parse("benchtruth", []byte(fmt.Sprintf(`protocol: udp-lobby
flows_mode: `+flows+`
target: %s
seed: 1
load:
  model: open
  start_rate: %d/s
  stages: [{rate: %d/s, for: %s}]
  max_clients: %d
defaults: {timeout: 5s, retries: 0}
flows:
  - name: list
    steps: [list_rooms]
`, pr.addr, c.rate, c.rate, d, c.rate*10+1000)))
	if err != nil {
		return row{}, err
	}
	if together {
		if err := pr.start(); err != nil {
			return row{}, err
		}
	}
	st0, stOK := stolen()
	cpu0 := cpuSeconds()
	t0 := time.Now()
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan, Grace: 6 * time.Second, Client: simclient.Options{Precise: mode == modePrecise}})
	cpuS := cpuSeconds() - cpu0
	st1, stOK1 := stolen()
	steal := "-"
	if stOK && stOK1 {
		steal = (st1 - st0).String()
	}
	cpu := cpuS / time.Since(t0).Seconds()
	if err != nil {
		return row{}, err
	}
	if !together {
		if err := pr.start(); err != nil {
			return row{}, err
		}
	}
	r := pr.result()
	if r.err != nil {
		return row{}, fmt.Errorf("reference client: %w", r.err)
	}
	var s *result.Series
	for i := range res.Run.Steps {
		if res.Run.Steps[i].Name == "list_rooms" {
			s = &res.Run.Steps[i]
		}
	}
	if s == nil || s.Latency.Count == 0 {
		return row{}, fmt.Errorf("rate %d: lobbybench recorded no list_rooms latency", c.rate)
	}
	var secs []int64
	for _, p := range res.Run.TimeSeries {
		secs = append(secs, p.P99US)
	}
	slices.Sort(secs)
	worst, med := int64(0), int64(0)
	if len(secs) > 0 {
		worst, med = secs[len(secs)-1], secs[len(secs)/2]
	}
	lbKernel := res.Engine.Harness.LatencyEnd == result.LatencyEndKernel
	ok := p50OK(s.Latency.P50US, refP50(r, lbKernel))
	if c.stall > 0 {
		ok = "-"
	}
	return row{c: c, mode: mode, together: together, lbKernel: lbKernel, s: s, ref: r, worst: worst, med: med, cpu: cpu,
		cpuPerReq: time.Duration(cpuS / float64(s.Latency.Count) * float64(time.Second)), steal: steal, ok: ok}, nil
}
