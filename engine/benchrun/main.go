// Command benchrun measures whether lobbybench's load generator could be the
// bottleneck it measures (`make bench-run`). In one go it runs, for each
// client count:
//
//   - a minimal Go UDP echo pair: one server goroutine on one socket, and
//     one goroutine and socket per client sending 16-byte datagrams back to
//     back, one in flight;
//   - lobbybench's ping flow (create/join a room in groups of 4, hello,
//     instance_join, then CLIENT_PING back to back) against the embedded
//     reference server, closed model with the same number of clients;
//
// and prints lobbybench's request rate as a ratio of the echo pair's (aim
// ≥ 0.6) and, at one client, the p50 latency difference (aim ≤ 50 µs;
// lobbybench's uncorrected latency, since a back-to-back series has no
// schedule to be late against). Each pair is repeated -runs times and the
// medians printed. Then a -mem-clients run (10,000 by default), in a fresh
// child process against a reference server in another child process,
// reports the harness's own peak RSS and heap (BENCHRUN_MEMTRACE=1 traces
// heap and stacks every 250 ms).
//
// Loopback only; every loop is bounded by -duration.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/engine"
	refserver "github.com/lobbybench/lobbybench/reference-server"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

func main() {
	var (
		clients     = flag.String("clients", "1,100,1000", "comma-separated client counts")
		duration    = flag.Duration("duration", 3*time.Second, "length of each measured run")
		runs        = flag.Int("runs", 3, "repetitions of each measurement (medians are printed)")
		memClients  = flag.Int("mem-clients", 10000, "clients of the memory run (0: skip)")
		memDuration = flag.Duration("mem-duration", 10*time.Second, "length of the memory run")
		memInterval = flag.Duration("mem-interval", time.Second, "ping interval of each client in the memory run")
		serve       = flag.Int("serve-child", 0, "internal: run a reference server for this many rooms and print its address")
		cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the lobbybench runs to `FILE`")
		memProfile  = flag.String("memprofile", "", "write a heap profile taken halfway through the memory run to `FILE`")
		memChild    = flag.Bool("mem-child", false, "internal: run only the memory run (in a fresh process, so earlier runs do not count in its peak RSS)")
	)
	flag.Parse()
	if *memChild {
		if err := memRun(*memClients, *memDuration, *memInterval, *memProfile); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: memory run: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
			os.Exit(2)
		}
		profileLobby = func(start bool) {
			if start {
				pprof.StartCPUProfile(f)
			} else {
				pprof.StopCPUProfile()
			}
		}
	}
	if *serve > 0 {
		serveChild(*serve)
		return
	}
	var counts []int
	for _, s := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 20000 {
			fmt.Fprintf(os.Stderr, "benchrun: -clients: %q is not 1-20000\n", s)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if *runs < 1 || *duration < 500*time.Millisecond {
		fmt.Fprintln(os.Stderr, "benchrun: -runs must be ≥ 1 and -duration ≥ 500ms")
		os.Exit(2)
	}

	fmt.Printf("lobbybench harness benchmark: %d run(s) of %v per measurement, GOMAXPROCS %d\n\n", *runs, *duration, procs())
	fmt.Printf("%8s  %12s  %12s  %7s  %10s  %10s  %9s\n", "clients", "echo req/s", "lb req/s", "ratio", "echo p50", "lb p50", "p50 diff")
	failed := false
	for _, c := range counts {
		var er, lr, ratios []float64
		var ep, lp []time.Duration
		for range *runs {
			e, eP50, err := echoRun(c, *duration)
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchrun: echo pair, %d clients: %v\n", c, err)
				os.Exit(1)
			}
			l, lP50, err := lobbyRun(c, *duration)
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchrun: lobbybench, %d clients: %v\n", c, err)
				os.Exit(1)
			}
			er, lr, ratios = append(er, e), append(lr, l), append(ratios, l/e)
			ep, lp = append(ep, eP50), append(lp, lP50)
		}
		ratio := median(ratios)
		line := fmt.Sprintf("%8d  %12.0f  %12.0f  %7.2f", c, median(er), median(lr), ratio)
		if c == 1 {
			diff := median(lp) - median(ep)
			line += fmt.Sprintf("  %10v  %10v  %9v", median(ep), median(lp), diff)
			if diff > 50*time.Microsecond {
				line += "  (aim ≤ 50µs)"
				failed = true
			}
		}
		if ratio < 0.6 {
			line += "  (aim ≥ 0.6)"
			failed = true
		}
		fmt.Println(line)
	}
	if *memClients > 0 {
		fmt.Println()
		// A fresh process: VmHWM is a process-lifetime peak, and the runs
		// above had servers and clients of their own.
		cmd := exec.Command(os.Args[0], "-mem-child", "-mem-clients", strconv.Itoa(*memClients),
			"-mem-duration", memDuration.String(), "-mem-interval", memInterval.String(), "-memprofile", *memProfile)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: memory run: %v\n", err)
			os.Exit(1)
		}
	}
	if failed {
		fmt.Println("\nsome figures miss their aim (see above)")
	}
}

// profileLobby starts and stops the CPU profile around lobbybench runs.
var profileLobby = func(bool) {}

func procs() int { return runtimeGOMAXPROCS() }

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// setBuffers gives a socket 4 MiB buffers, as simclient and the reference
// server do by default, so the echo pair is not handicapped by drops.
func setBuffers(c *net.UDPConn) {
	c.SetReadBuffer(4 << 20)
	c.SetWriteBuffer(4 << 20)
}

// echoRun runs the minimal echo pair with n clients for d and returns its
// request rate and (for every n) the p50 round trip.
func echoRun(n int, d time.Duration) (float64, time.Duration, error) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, err
	}
	setBuffers(srv)
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := srv.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			srv.WriteToUDPAddrPort(buf[:k], from)
		}
	}()
	defer srv.Close()
	to := srv.LocalAddr().(*net.UDPAddr).AddrPort()
	sources := engine.DefaultSources(n)
	conns := make([]*net.UDPConn, n)
	for i := range conns {
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(sources[i%len(sources)], 0)), net.UDPAddrFromAddrPort(to))
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return 0, 0, err
		}
		setBuffers(c)
		conns[i] = c
	}
	var total atomic.Int64
	hists := make([]*hdrhistogram.Histogram, n)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			h := hdrhistogram.New(1, int64(time.Second), 3)
			hists[i] = h
			c.SetReadDeadline(deadline.Add(time.Second))
			out, in := make([]byte, 16), make([]byte, 64)
			var count int64
			for seq := uint64(0); time.Now().Before(deadline); seq++ {
				binary.BigEndian.PutUint64(out, seq)
				t0 := time.Now()
				if _, err := c.Write(out); err != nil {
					break
				}
				// A lost datagram would stall a 1-in-flight client: give
				// up on it after 100 ms and send the next.
				k, err := c.Read(in)
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						break
					}
					continue
				}
				if k == 16 && binary.BigEndian.Uint64(in) == seq {
					h.RecordValue(int64(time.Since(t0)))
					count++
				}
			}
			total.Add(count)
		}()
	}
	wg.Wait()
	el := time.Since(start)
	all := hdrhistogram.New(1, int64(time.Second), 3)
	for _, h := range hists {
		all.Merge(h)
	}
	return float64(total.Load()) / el.Seconds(), time.Duration(all.ValueAtQuantile(50)), nil
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

// lobbyRun runs lobbybench's ping flow with n clients for d against the
// embedded reference server and returns the ping rate over the whole
// seconds of the run's middle and the ping step's uncorrected p50.
func lobbyRun(n int, d time.Duration) (float64, time.Duration, error) {
	group := min(n, 4)
	plan, err := scenario.Parse("benchrun", []byte(pingYAML(n, group, d, 0)))
	if err != nil {
		return 0, 0, err
	}
	emb := refserver.Loopback()
	emb.TCP = nil
	emb.UDP.MaxInstances = n/group + 16
	emb.UDP.MaxPlayers = 4
	profileLobby(true)
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan, Embedded: &emb, Grace: 200 * time.Millisecond})
	profileLobby(false)
	if err != nil {
		return 0, 0, err
	}
	return pingRate(res), pingP50(res), nil
}

func pingSeries(res *engine.Result) *reports.Series {
	for i := range res.Steps {
		if res.Steps[i].Name == "ping" {
			return &res.Steps[i]
		}
	}
	return nil
}

func pingP50(res *engine.Result) time.Duration {
	if s := pingSeries(res); s != nil {
		return time.Duration(s.Uncorrected.P50US) * time.Microsecond
	}
	return 0
}

// pingRate is the ping step's steady rate: the median number of recorded
// requests per whole second of the run's middle (after the set-up second,
// before the partial last one) times the share of recorded requests that
// are ping-step successes (the time series counts every step's requests,
// not only the ping's). Runs too short for that use all pings over the run.
func pingRate(res *engine.Result) float64 {
	s := pingSeries(res)
	if s == nil {
		return 0
	}
	ts := res.TimeSeries
	if len(ts) >= 3 {
		var all int64
		var r []float64
		for _, p := range ts {
			all += p.Requests
		}
		for _, p := range ts[1 : len(ts)-1] {
			r = append(r, float64(p.Requests))
		}
		if all > 0 {
			return median(r) * float64(s.Successes) / float64(all)
		}
	}
	if res.DurationNS > 0 {
		return float64(s.Successes) / res.DurationNS.Seconds()
	}
	return 0
}

// memRun runs n clients pinging every interval against a reference server
// in a child process, so the figures are the harness's alone.
func memRun(n int, d, interval time.Duration, heapFile string) error {
	cmd := exec.Command(os.Args[0], "-serve-child", strconv.Itoa(n/4+16))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	line := make([]byte, 64)
	k, err := out.Read(line)
	if err != nil {
		return fmt.Errorf("server child: %v", err)
	}
	addr := strings.TrimSpace(string(line[:k]))
	plan, err := scenario.Parse("benchrun-mem", []byte(pingYAML(n, 4, d, interval)))
	if err != nil {
		return err
	}
	plan.Target = addr
	if os.Getenv("BENCHRUN_MEMTRACE") != "" {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t0 := time.Now()
			s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/memory/classes/heap/stacks:bytes"}}
			for {
				select {
				case <-stop:
					return
				case <-time.After(250 * time.Millisecond):
				}
				metrics.Read(s)
				fmt.Fprintf(os.Stderr, "%6.2fs heap %4d MiB stacks %4d MiB gc %d\n", time.Since(t0).Seconds(), s[0].Value.Uint64()>>20, s[2].Value.Uint64()>>20, s[1].Value.Uint64())
			}
		}()
	}
	if heapFile != "" {
		t := time.AfterFunc(d/2, func() {
			if f, err := os.Create(heapFile); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		})
		defer t.Stop()
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
	fmt.Printf("memory run: %d clients (peak %d live), ping every %v for %v against a server in another process\n",
		n, res.Engine.Sessions.MaxActive, interval, d)
	fmt.Printf("  harness peak RSS %.1f MiB, peak live heap %.1f MiB, Go runtime total %.1f MiB, %d goroutines peak, %.1f CPU-s\n",
		float64(h.PeakRSSBytes)/(1<<20), float64(h.PeakHeapBytes)/(1<<20), float64(h.PeakGoRuntimeBytes)/(1<<20), h.PeakGoroutines, h.CPUSeconds)
	fmt.Printf("  pings ok %d, failed %d, violations %d, sessions failed %d\n", pings, fails, res.Totals.Violations, res.Engine.Sessions.Failed)
	if h.PeakRSSBytes > 300<<20 {
		fmt.Println("  (aim: under 300 MB)")
	}
	return nil
}

// serveChild runs the reference server for the memory run and prints its
// UDP address; it exits when its parent closes stdin or signals it.
func serveChild(rooms int) {
	cfg := refserver.Loopback()
	cfg.TCP = nil
	cfg.UDP.MaxInstances = rooms
	cfg.UDP.MaxPlayers = 4
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: server child: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(srv.UDPAddr())
	sig := make(chan os.Signal, 1)
	notify(sig)
	select {
	case <-sig:
	case <-time.After(10 * time.Minute):
	}
	srv.Close()
}
