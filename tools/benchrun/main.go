// Command benchrun measures whether lobbybench's load generator could be the
// bottleneck it measures (`make bench-run`). Against one `lobbybench serve`
// in another process (-lobbybench, built by make), for each client count
// and one after another, it runs a closed loop of LOBBY_LIST_ROOMS with:
//
//   - lobbybench, a 1-step flow (the client keeps its socket across
//     iterations), a 50-step flow, and the 1-step flow written as a
//     script (send LOBBY_LIST_ROOMS, expect LOBBY_ROOM_LIST);
//   - a bare Go lobby client (bare.go): one goroutine and socket per
//     client, nothing checked but the reply's type and sequence id;
//   - a Python asyncio client (lobby_client.py), when python3 is found;
//
// and prints each one's request rate and CPU time per request (its own
// process's), lobbybench's as ratios of the bare Go client's (aim ≥ 0.9×
// the rate, ≤ 1.2× the CPU per request). Each is repeated -runs times and
// the medians printed. Then a -mem-clients run (10,000 by default), in a
// fresh child process against a reference server in another child
// process, reports the harness's own peak RSS per client
// (BENCHRUN_MEMTRACE=1 traces heap and stacks every 200 ms on stderr,
// BENCHRUN_MEMTRACE=all every runtime memory class too).
//
// Loopback only; every loop is bounded by -duration.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

func main() {
	var (
		clients     = flag.String("clients", "100,1000", "comma-separated client counts")
		lbBin       = flag.String("lobbybench", "bin/lobbybench", "the lobbybench binary whose serve is the target")
		python      = flag.String("python", "python3", "the Python for the asyncio client (empty: skip it)")
		duration    = flag.Duration("duration", 3*time.Second, "length of each measured run")
		runs        = flag.Int("runs", 3, "repetitions of each measurement (medians are printed)")
		memClients  = flag.Int("mem-clients", 10000, "clients of the memory run (0: skip)")
		memDuration = flag.Duration("mem-duration", 10*time.Second, "length of the memory run")
		memInterval = flag.Duration("mem-interval", time.Second, "ping interval of each client in the memory run")
		serve       = flag.Int("serve-child", 0, "internal: run a reference server for this many rooms and print its address")
		cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the first lobbybench run of -cpuprofile-flow to `FILE`")
		profFlow    = flag.String("cpuprofile-flow", "built-in", "the 1-step flow -cpuprofile profiles: built-in, scripted or virtual")
		memProfile  = flag.String("memprofile", "", "write a heap profile of the memory run to `FILE`, and its goroutines to FILE.goroutines")
		memAt       = flag.Duration("memprofile-at", 0, "when the memory run's profiles are taken (0: halfway)")
		memCPU      = flag.String("mem-cpuprofile", "", "write a CPU profile of the memory run to `FILE`")
		wClients    = flag.Int("workers-clients", 60000, "clients of the --workers run (0: skip)")
		wWorkers    = flag.Int("workers", 4, "worker processes of the --workers run")
		wHold       = flag.Duration("workers-duration", 20*time.Second, "how long the --workers run holds its clients")
		wInterval   = flag.Duration("workers-interval", 5*time.Second, "poll interval of each client in the --workers run")
		memChild    = flag.Bool("mem-child", false, "internal: run only the memory run (in a fresh process, so earlier runs do not count in its peak RSS)")
		memFlows    = flag.String("mem-flows", "sockets", "the memory run's flows mode: sockets, virtual or auto (run --flows)")
		memGroup    = flag.Int("mem-group", 4, "clients per room in the memory run (the server's rooms hold as many); with -mem-flows virtual and more than 20,000 clients, 16 keeps the server's instance sockets under its open-files limit")
	)
	flag.Parse()
	if *memGroup < 1 || *memGroup > 255 {
		fmt.Fprintln(os.Stderr, "benchrun: -mem-group must be 1 to 255")
		os.Exit(2)
	}
	if *memChild {
		if err := memRun(*memClients, *memGroup, *memFlows, *memDuration, *memInterval, *memProfile, *memAt, *memCPU); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: memory run: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if *cpuProfile != "" {
		profileFirstLobby(*cpuProfile, *profFlow)
	}
	if *serve > 0 {
		serveChild(*serve, *memGroup)
		return
	}
	counts := clientCounts(*clients)
	if *runs < 1 || *duration < 500*time.Millisecond {
		fmt.Fprintln(os.Stderr, "benchrun: -runs must be ≥ 1 and -duration ≥ 500ms")
		os.Exit(2)
	}

	lobby, stopServe, err := startServe(*lbBin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
		exit(1)
	}
	defer stopServe()
	exitOnInterrupt()
	script := pythonScript(*python)
	fmt.Printf("lobbybench against a server in another process (%s serve on %s): %d run(s) of %v per figure, medians, GOMAXPROCS %d\n",
		*lbBin, lobby, *runs, *duration, procs())
	fmt.Println("closed loop of list_rooms; req/s and CPU µs per request of each client's own process; ratios against the bare Go client")
	fmt.Printf("\n%8s  %-22s  %10s  %9s  %8s  %8s\n", "clients", "client", "req/s", "CPU µs/req", "rate ×", "CPU ×")
	failed := false
	for _, c := range counts {
		if !compareClients(c, *runs, *duration, lobby, *python, script) {
			failed = true
		}
	}
	if *memClients > 0 {
		fmt.Println()
		// A fresh process: VmHWM is a process-lifetime peak, and the runs
		// above had servers and clients of their own.
		cmd := exec.Command(os.Args[0], "-mem-child", "-mem-clients", strconv.Itoa(*memClients),
			"-mem-group", strconv.Itoa(*memGroup), "-mem-flows", *memFlows, "-mem-duration", memDuration.String(), "-mem-interval", memInterval.String(), "-memprofile", *memProfile, "-memprofile-at", memAt.String(), "-mem-cpuprofile", *memCPU)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		setDeathSignal(cmd)
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: memory run: %v\n", err)
			exit(1)
		}
	}
	if *wClients > 0 {
		fmt.Println()
		if err := workersRun(*lbBin, lobby.String(), *wClients, *wWorkers, *wHold, *wInterval); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: --workers run: %v\n", err)
			exit(1)
		}
	}
	if failed {
		fmt.Println("\nsome figures miss their aim (see above)")
	}
}

// profileFirstLobby makes profileLobby write a CPU profile of the first
// lobbybench run of the 1-step flow of kind flow to path: profiles of several runs
// written to one file cannot be read.
func profileFirstLobby(path, flow string) {
	if !slices.Contains([]string{"built-in", "scripted", "virtual"}, flow) {
		fmt.Fprintf(os.Stderr, "benchrun: -cpuprofile-flow %q: want built-in, scripted or virtual\n", flow)
		os.Exit(2)
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
		os.Exit(2)
	}
	done := false
	profileLobby = func(lf lbFlow, start bool) {
		switch {
		case done, lf.steps != 1, lf.kind() != flow:
		case start:
			pprof.StartCPUProfile(f)
		default:
			pprof.StopCPUProfile()
			done = true
		}
	}
}

// clientCounts reads -clients: comma-separated counts of 1-10000.
func clientCounts(v string) []int {
	var counts []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 10000 {
			fmt.Fprintf(os.Stderr, "benchrun: -clients: %q is not 1-10000\n", s)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	return counts
}

// pythonScript is the asyncio client's script when python is found and
// so is the script, else "".
func pythonScript(python string) string {
	if python == "" {
		return ""
	}
	if _, err := exec.LookPath(python); err != nil {
		return ""
	}
	script := "tools/benchrun/lobby_client.py"
	if _, err := os.Stat(script); err != nil {
		return ""
	}
	return script
}

// contender is a client benchrun measures: its row's name, and one run.
type contender struct {
	name string
	run  func() (measure, error)
}

// indexOf is the index of the contender called name in cs.
func indexOf(cs []contender, name string) int {
	return slices.IndexFunc(cs, func(ct contender) bool { return ct.name == name })
}

// compareClients measures every contender with c clients, runs times
// each, one after another, and prints their medians against the bare Go
// client's; false when a lobbybench figure misses its aim.
func compareClients(c, runs int, duration time.Duration, lobby netip.AddrPort, python, script string) bool {
	cs := []contender{
		{"bare Go client", func() (measure, error) { return bareMeasure(c, duration, lobby, true) }},
		{"bare Go, unconnected", func() (measure, error) { return bareMeasure(c, duration, lobby, false) }},
		{builtInRow, func() (measure, error) { return lobbybenchRun(c, lbFlow{steps: 1}, duration, lobby) }},
		{scriptedRow, func() (measure, error) { return lobbybenchRun(c, lbFlow{steps: 1, scripted: true}, duration, lobby) }},
		{"lobbybench, 50-step flow", func() (measure, error) { return lobbybenchRun(c, lbFlow{steps: 50}, duration, lobby) }},
	}
	if err := vflow.Available(); err == nil {
		cs = append(cs, contender{virtualRow, func() (measure, error) {
			return lobbybenchRun(c, lbFlow{steps: 1, flows: string(scenario.FlowsVirtual)}, duration, lobby)
		}})
	} else {
		fmt.Fprintf(os.Stderr, "benchrun: no virtual-flows row: %v\n", err)
	}
	if script != "" {
		cs = append(cs, contender{"Python asyncio", func() (measure, error) { return pythonRun(python, script, c, duration, lobby) }})
	}
	rates, cpus := make([][]float64, len(cs)), make([][]float64, len(cs))
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	for r := range runs {
		// The built-in and scripted 1-step flows, judged against each
		// other, run next to each other, first one then the other first
		// (ABBA): measured in turn behind the 50-step flow, the scripted
		// one read 1.40× the built-in one's CPU, and right after it
		// 1.17×, the server's state and the machine's drift charged to
		// whichever ran later.
		if r%2 == 1 {
			b, s := slices.Index(order, indexOf(cs, builtInRow)), slices.Index(order, indexOf(cs, scriptedRow))
			order[b], order[s] = order[s], order[b]
		}
		for _, i := range order { // one after another, each run in turn
			ct := cs[i]
			m, err := ct.run()
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchrun: %s, %d clients: %v\n", ct.name, c, err)
				exit(1)
			}
			rates[i], cpus[i] = append(rates[i], m.rate), append(cpus[i], m.cpuPerReq)
		}
	}
	ok := true
	baseRate, baseCPU := median(rates[0]), median(cpus[0])
	for i, ct := range cs {
		r, cpu := median(rates[i]), median(cpus[i])
		line := fmt.Sprintf("%8d  %-22s  %10.0f  %9.1f  %8.2f  %8.2f", c, ct.name, r, cpu*1e6, r/baseRate, cpu/baseCPU)
		switch {
		case ct.name == virtualRow && cpu/baseCPU > 0.5:
			// Virtual flows' aim: twice the bare client's requests per
			// CPU-second.
			line += "  (aim: CPU × ≤ 0.50)"
			ok = false
		case ct.name != virtualRow && strings.HasPrefix(ct.name, "lobbybench") && (r/baseRate < 0.9 || cpu/baseCPU > 1.2):
			line += "  (aim ≥ 0.90 and ≤ 1.20)"
			ok = false
		}
		fmt.Println(line)
	}
	at := func(name string) []float64 { return cpus[indexOf(cs, name)] }
	return scriptedAgainstBuiltIn(c, at(builtInRow), at(scriptedRow)) && ok
}

// builtInRow and scriptedRow are the 1-step flow's rows, built-in and
// scripted: the second is judged against the first too
// (scriptedAgainstBuiltIn).
const (
	builtInRow  = "lobbybench, 1-step flow"
	scriptedRow = "lobbybench, scripted 1-step"
)

// scriptedAgainstBuiltIn prints the scripted 1-step flow's CPU per
// request as a ratio of the built-in 1-step flow's, the flow it mirrors
// (aim: at most 1.2×), and reports whether the aim holds.
func scriptedAgainstBuiltIn(c int, builtIn, scripted []float64) bool {
	r := median(scripted) / median(builtIn)
	line := fmt.Sprintf("%8d  scripted 1-step against the built-in 1-step flow: CPU × %.2f", c, r)
	ok := r <= 1.2
	if !ok {
		line += "  (aim ≤ 1.20)"
	}
	fmt.Println(line)
	return ok
}

// virtualRow names the contender on virtual flows.
const virtualRow = "lobbybench, virtual 1-step"

// profileLobby starts and stops the CPU profile around lobbybench runs.
var profileLobby = func(lbFlow, bool) {}

func procs() int { return runtimeGOMAXPROCS() }

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pingYAML is lobbybench's ping flow: groups of up to 4 share a room, then
// every member pings the instance back to back (or every interval).
func pingYAML(clients, group int, d, interval time.Duration) string {
	create := "      - create_room\n"
	if group > 1 {
		create = "      - create_room: {only: leader}\n      - join: {room: created, only: members}\n"
	}
	return fmt.Sprintf(`protocol: udp-lobby
seed: 1
load: {clients: %d, duration: %s}
flows:
  - name: ping
    group_size: %d
    steps:
%s      - hello
      - instance_join
      - ping: {count: 1000000, interval: %s}
`, clients, d, group, create, interval)
}

func pingSeries(res *engine.Result) *result.Series {
	for i := range res.Steps {
		if res.Steps[i].Name == "ping" {
			return &res.Steps[i]
		}
	}
	return nil
}

// sampleStacks keeps in peak the peak of goroutine stacks, every 100 ms
// until stop is closed, and with trace prints heap, stacks and GC cycles
// on stderr every 200 ms (BENCHRUN_MEMTRACE=all: every runtime memory
// class too).
func sampleStacks(peak *atomic.Uint64, trace bool, stop <-chan struct{}) {
	t0 := time.Now()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	for i := 0; ; i++ {
		metrics.Read(s)
		if v := s[2].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
		if trace && i%2 == 1 { // every 200 ms
			fmt.Fprintf(os.Stderr, "%6.2fs heap %4d MiB stacks %4d MiB gc %d\n", time.Since(t0).Seconds(), s[0].Value.Uint64()>>20, s[2].Value.Uint64()>>20, s[1].Value.Uint64())
			if os.Getenv("BENCHRUN_MEMTRACE") == "all" {
				var all []metrics.Sample
				for _, d := range metrics.All() {
					if strings.HasPrefix(d.Name, "/memory/classes/") {
						all = append(all, metrics.Sample{Name: d.Name})
					}
				}
				metrics.Read(all)
				for _, a := range all {
					fmt.Fprintf(os.Stderr, "    %-50s %7.2f MiB\n", a.Name, float64(a.Value.Uint64())/(1<<20))
				}
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// profileHeapAt writes a heap profile to file, and its goroutines to
// file.goroutines, once at has passed, and stores in *live the bytes of
// heap objects right after the collection it forces there (exact, where
// the profile's figures are sampled); the timer's Stop cancels it.
func profileHeapAt(file string, at time.Duration, live *atomic.Uint64) *time.Timer {
	return time.AfterFunc(at, func() {
		runtime.GC() // the profile shows the heap as of the last GC: this moment's
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		live.Store(s[0].Value.Uint64())
		if f, err := os.Create(file); err == nil {
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		if f, err := os.Create(file + ".goroutines"); err == nil {
			pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
	})
}

// memRun runs n clients, group to a room, pinging every interval against a
// reference server in a child process, so the figures are the harness's
// alone; flows is the run's flows mode.
func memRun(n, group int, flows string, d, interval time.Duration, heapFile string, at time.Duration, cpuFile string) error {
	cmd := exec.Command(os.Args[0], "-serve-child", strconv.Itoa(n/group+16), "-mem-group", strconv.Itoa(group))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stopServer, err := ownChild(cmd)
	if err != nil {
		return err
	}
	defer stopServer()
	line := make([]byte, 64)
	k, err := out.Read(line)
	if err != nil {
		return fmt.Errorf("server child: %v", err)
	}
	addr := strings.TrimSpace(string(line[:k]))
	plan, err := scenario.Parse("benchrun-mem", []byte("flows_mode: "+flows+"\n"+pingYAML(n, group, d, interval)))
	if err != nil {
		return err
	}
	plan.Target = addr
	// One sampler: the peak of goroutine stacks, against
	// simclient.StackBudget per client (a client path that outgrows it
	// doubles every client's stack), and with BENCHRUN_MEMTRACE a trace of
	// heap, stacks and GC cycles on stderr.
	var peakStacks atomic.Uint64
	trace := os.Getenv("BENCHRUN_MEMTRACE") != ""
	stop := make(chan struct{})
	defer close(stop)
	go sampleStacks(&peakStacks, trace, stop)
	var live atomic.Uint64
	if heapFile != "" {
		if at <= 0 {
			at = d / 2
		}
		defer profileHeapAt(heapFile, at, &live).Stop()
	}
	if cpuFile != "" {
		w, err := os.Create(cpuFile)
		if err != nil {
			return err
		}
		defer w.Close()
		if err := pprof.StartCPUProfile(w); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan, Grace: time.Second})
	if err != nil {
		return err
	}
	h := res.Engine.Harness
	s := pingSeries(res)
	var pings, fails int64
	if s != nil {
		pings, fails = s.Successes, s.Failures
	}
	fmt.Printf("memory run: %d clients (peak %d live, %d to a room, flows %s), ping every %v for %v against a server in another process\n",
		n, res.Engine.Sessions.MaxActive, group, res.Engine.Harness.Flows, interval, d)
	fmt.Printf("  harness peak RSS %.1f MiB, peak live heap %.1f MiB, Go runtime total %.1f MiB, %d goroutines peak, %.1f CPU-s\n",
		float64(h.PeakRSSBytes)/(1<<20), float64(h.PeakHeapBytes)/(1<<20), float64(h.PeakGoRuntimeBytes)/(1<<20), h.PeakGoroutines, h.CPUSeconds)
	fmt.Printf("  pings ok %d, failed %d, violations %d, sessions failed %d\n", pings, fails, res.Totals.Violations, res.Engine.Sessions.Failed)
	printFailedSteps(res.Steps)
	if l := live.Load(); l > 0 {
		// What the clients keep, apart from the garbage the collector has
		// yet to take (the RSS's peak holds both).
		fmt.Printf("  live heap after a collection at %v (-memprofile-at): %.1f MiB, %.0f bytes per client\n", at, float64(l)/(1<<20), float64(l)/float64(n))
	}
	if n >= simclient.SuspendWaitsFrom {
		// Clients waiting hold no goroutine (simclient.SuspendWaitsFrom):
		// stacks per client would be the stack cache's, not a path's.
		fmt.Printf("  goroutine stacks peak %.1f MiB: waiting clients hold no goroutine (%d clients, from %d on); -mem-clients %d checks the stack budget\n",
			float64(peakStacks.Load())/(1<<20), n, simclient.SuspendWaitsFrom, simclient.SuspendWaitsFrom-500)
	} else {
		// At the start every client holds its goroutine, in its setup.
		perG := float64(peakStacks.Load()) / float64(n)
		fmt.Printf("  goroutine stacks peak %.1f MiB, %.1f KiB per client (budget %d KiB: simclient.StackBudget)\n",
			float64(peakStacks.Load())/(1<<20), perG/1024, simclient.StackBudget>>10)
		if perG > 1.25*simclient.StackBudget {
			fmt.Println("  (over budget: a client path outgrew its stack; see simclient.StackBudget)")
		}
	}
	if h.Flows == string(scenario.FlowsVirtual) {
		// The virtual flows' aim: 250,000 clients in one process, under
		// 1 KB (1,000 bytes) of RSS each, at least 95 % of pings answered.
		fmt.Printf("  harness RSS per client %.0f bytes (aim: under 1,000), pings answered %.1f %% (aim: 95 %%)\n",
			float64(h.PeakRSSBytes)/float64(n), 100*float64(pings)/float64(max(pings+fails, 1)))
		return nil
	}
	fmt.Printf("  harness RSS per client %.1f KiB (aim: 8)\n", float64(h.PeakRSSBytes)/float64(n)/1024)
	if h.PeakRSSBytes > 300<<20 {
		fmt.Println("  (aim: under 300 MB)")
	}
	return nil
}

// serveChild runs the reference server for the memory run and prints its
// UDP address; it exits when its parent closes stdin or signals it.
func serveChild(rooms, players int) {
	cfg := refserver.Loopback()
	delete(cfg.Parts, tcpwire.ProtocolName)
	u := udpserver.ConfigOf(cfg)
	u.MaxInstances, u.MaxPlayers = rooms, players
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: server child: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(srv.Addr(udpwire.ProtocolName))
	sig := make(chan os.Signal, 1)
	notify(sig)
	select {
	case <-sig:
	case <-time.After(10 * time.Minute):
	}
	srv.Close()
}

// printFailedSteps says which steps failed, and why, when any did: a
// memory run's failed sessions are otherwise a bare count.
func printFailedSteps(steps []result.Series) {
	for _, st := range steps {
		if st.Failures == 0 {
			continue
		}
		reasons := make([]string, 0, len(st.FailuresByReason))
		for r, n := range st.FailuresByReason {
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
		slices.Sort(reasons)
		fmt.Printf("    %s: %d failed (%s)\n", st.Name, st.Failures, strings.Join(reasons, ", "))
	}
}
