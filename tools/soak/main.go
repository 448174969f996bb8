// Command soak checks that nothing leaks, in the reference server or in the
// harness, over a long run on loopback (`make soak`, about 10 minutes):
//
//   - `lobbybench serve` runs as its own process with its default limits
//     (only its addresses are free loopback ports, and --stats-addr is on);
//   - `lobbybench run` drives a join-storm against it at a steady rate, as
//     a second process, from 127.0.0.2-21;
//   - from other addresses this program floods the lobby: valid CREATEs
//     (127.0.0.200-201) and malformed datagrams (127.0.0.202-203: random
//     bytes, bit flips, truncations, junk tails);
//   - every --sample (10 s) it records serve's RSS, goroutines, rooms,
//     instances and held seats, and run's RSS;
//   - after the run it stops the flood and waits for rooms and instances
//     to return to zero (serve's cleanup interval, 500 ms), then stops serve.
//
// It prints the samples as a table and a verdict: PASS when serve's RSS and
// goroutines and run's RSS are flat after warm-up (the median of the last
// third of the samples at most max(2 MiB, 10 %) above the first third's;
// goroutines at most max(10, 20 %)), rooms and instances are back to zero,
// goroutines are back to their count before the load (+5), the join-storm
// passed its thresholds and serve stopped cleanly. Exit 0 on PASS, 1 on
// FAIL, 2 on bad flags or when a process cannot be started.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	bin                 string
	duration, sample    time.Duration
	drain, warmup       time.Duration
	rate                float64
	floodRate, junkRate int
	keepDir, runMetrics bool
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "bin/lobbybench", "the lobbybench `binary` to run serve and run from")
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the join-storm and the flood run")
	fs.DurationVar(&o.sample, "sample", 10*time.Second, "sampling interval")
	fs.DurationVar(&o.warmup, "warmup", 0, "samples before this are not judged for flatness (default: a fifth of --duration, at least 70s: serve's rooms reach their steady count within seconds; the memory after it)")
	fs.DurationVar(&o.drain, "drain", 2*time.Minute, "how long to wait after the load for rooms and instances to return to zero")
	fs.Float64Var(&o.rate, "rate", 2, "join-storm sessions per second (groups of 4: a quarter of that in rooms per second; serve keeps an empty room 0.5-1 s, so 0.5 rooms/s holds a few rooms, beside the flood's 2×25: under the 100-instance pool)")
	fs.IntVar(&o.floodRate, "flood-rate", 100, "valid CREATEs per second from the two flooding addresses together")
	fs.IntVar(&o.junkRate, "junk-rate", 400, "malformed datagrams per second from the two junk addresses together")
	fs.BoolVar(&o.runMetrics, "run-metrics", false, "also sample run's heap in use and goroutines from its Prometheus endpoint (each scrape merges every histogram: it adds to what is measured)")
	fs.BoolVar(&o.keepDir, "keep", false, "keep the scenario, result JSON and process logs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case o.duration < 3*o.sample:
		fmt.Fprintln(stderr, "soak: --duration must be at least 3 samples long")
		return 2
	case o.sample <= 0 || o.rate <= 0 || o.floodRate < 0 || o.junkRate < 0:
		fmt.Fprintln(stderr, "soak: --sample and --rate must be positive, --flood-rate and --junk-rate not negative")
		return 2
	}
	s, err := start(o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "soak: %v\n", err)
		return 2
	}
	defer s.cleanup()
	v := s.soak(stdout)
	if v.pass() {
		fmt.Fprintln(stdout, "soak: PASS")
		return 0
	}
	fmt.Fprintln(stdout, "soak: FAIL")
	return 1
}

// soaker holds the two processes and the flood.
type soaker struct {
	o          options
	dir        string
	serve      *exec.Cmd
	serveOut   *strings.Builder
	lobby      netip.AddrPort
	statsURL   string
	runCmd     *exec.Cmd
	runMetrics string // run's Prometheus endpoint: its heap and goroutines
	runDone    chan error
	log        io.Writer
	floodOK    atomic.Int64 // ROOM_CREATED received by the flood
	floodNo    atomic.Int64 // JOIN_FAILED received by the flood
}

var (
	lobbyLine = regexp.MustCompile(`udp lobby on (\S+)`)
	statsLine = regexp.MustCompile(`stats on (http://\S+)`)
)

// start runs serve and waits for its addresses.
func start(o options, log io.Writer) (*soaker, error) {
	if _, err := os.Stat(o.bin); err != nil {
		return nil, fmt.Errorf("--bin: %v (build it with make build)", err)
	}
	dir, err := os.MkdirTemp("", "lobbybench-soak-")
	if err != nil {
		return nil, err
	}
	s := &soaker{o: o, dir: dir, log: log, serveOut: &strings.Builder{}}
	s.serve = exec.Command(o.bin, "serve", "--udp-addr", "127.0.0.1:0", "--base-port", "0",
		"--tcp-addr", "127.0.0.1:0", "--leviathan-addr", "127.0.0.1:0", "--stats-addr", "127.0.0.1:0")
	s.serve.Stdout = s.serveOut
	errPipe, err := s.serve.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.serve.Start(); err != nil {
		return nil, fmt.Errorf("serve: %v", err)
	}
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errPipe)
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			if m := lobbyLine.FindStringSubmatch(line); m != nil {
				s.lobby, _ = netip.ParseAddrPort(m[1])
			}
			if m := statsLine.FindStringSubmatch(line); m != nil {
				s.statsURL = m[1]
			}
			if s.lobby.IsValid() && s.statsURL != "" {
				once.Do(func() { close(found) })
			}
		}
	}()
	select {
	case <-found:
	case <-time.After(15 * time.Second):
		s.cleanup()
		return nil, errors.New("serve did not print its addresses within 15s")
	}
	return s, nil
}

func (s *soaker) cleanup() {
	if s.serve.ProcessState == nil && s.serve.Process != nil {
		s.serve.Process.Kill()
		s.serve.Wait()
	}
	if s.runCmd != nil && s.runCmd.ProcessState == nil && s.runCmd.Process != nil {
		s.runCmd.Process.Kill()
	}
	if s.o.keepDir {
		fmt.Fprintf(s.log, "soak: files kept in %s\n", s.dir)
		return
	}
	os.RemoveAll(s.dir)
}

// scenario is the join-storm run drives: groups of 4 at a steady rate, from
// twenty source addresses so serve's per-IP quotas (25 rooms, 100 held
// seats an address) never refuse it.
const scenario = `name: soak-join-storm
protocol: udp-lobby
target: %s
seed: 15
source_addrs: 127.0.0.2-127.0.0.21
load:
  rate: %g/s
  duration: %s
  max_clients: 200
defaults:
  timeout: 2s
  retries: 3
  retry_interval: 1s
flows:
  - name: room
    group_size: 4
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - think: {uniform: [50ms, 250ms]}
      - leave
thresholds:
  - create_room.error_rate < 1%%
  - join.error_rate < 1%%
  - instance_join.error_rate < 1%%
  - violations == 0
`

// sample is one row of the table.
type sample struct {
	at                     time.Duration
	load                   bool // taken while the load ran
	serveRSS, runRSS       int64
	serveHeap              int64 // serve's live heap (HeapAlloc)
	runHeap                int64 // go_memstats_heap_inuse_bytes of run
	runGoroutines          int
	goroutines             int
	rooms, instances, held int
	roomsPerIPRefused      uint64
}

type verdict struct {
	checks []check
}

type check struct {
	name string
	ok   bool
	note string
}

func (v *verdict) add(name string, ok bool, format string, a ...any) {
	v.checks = append(v.checks, check{name, ok, fmt.Sprintf(format, a...)})
}

func (v *verdict) pass() bool {
	for _, c := range v.checks {
		if !c.ok {
			return false
		}
	}
	return len(v.checks) > 0
}

// sample takes the figures of serve, and of run while the load runs.
func (s *soaker) sample(at time.Duration, load bool) sample {
	sm := sample{at: at, load: load}
	sm.serveRSS = rss(s.serve.Process.Pid)
	if load {
		sm.runRSS = rss(s.runCmd.Process.Pid)
		if s.runMetrics != "" {
			sm.runHeap, sm.runGoroutines = s.runRuntime()
		}
	}
	if st, err := s.stats(); err == nil {
		sm.goroutines, sm.serveHeap = st.Goroutines, st.HeapAlloc
		sm.rooms, sm.instances, sm.held = st.UDP.Rooms, st.UDP.Instances, st.UDP.HeldSeats
		sm.roomsPerIPRefused = st.UDP.Failures["rooms-per-ip"]
	}
	return sm
}

// print writes sm as a line of soak's table.
func (sm sample) print(out io.Writer) {
	phase := "load"
	runRSS, runHeap, runGor := mib(sm.runRSS), mib(sm.runHeap), strconv.Itoa(sm.runGoroutines)
	if !sm.load {
		phase, runRSS = "drain", "-"
	}
	if sm.runHeap == 0 {
		runHeap, runGor = "-", "-"
	}
	fmt.Fprintf(out, "%8s %5s %12s %12s %10d %6d %9d %5d %12s %12s %8s %13d\n", sm.at, phase, mib(sm.serveRSS), mib(sm.serveHeap), sm.goroutines,
		sm.rooms, sm.instances, sm.held, runRSS, runHeap, runGor, sm.roomsPerIPRefused)
}

func (s *soaker) soak(out io.Writer) *verdict {
	v := &verdict{}
	base, err := s.stats()
	if err != nil {
		v.add("serve stats", false, "%v", err)
		return v
	}
	scen := filepath.Join(s.dir, "join-storm.yaml")
	if err := os.WriteFile(scen, fmt.Appendf(nil, scenario, s.lobby, s.o.rate, s.o.duration), 0o644); err != nil {
		v.add("scenario", false, "%v", err)
		return v
	}
	runArgs := []string{"run", "--quiet", "--json", filepath.Join(s.dir, "result.json")}
	if s.o.runMetrics {
		metricsAddr, err := freeAddr()
		if err != nil {
			v.add("run", false, "no free port for its metrics: %v", err)
			return v
		}
		s.runMetrics = "http://" + metricsAddr + "/metrics"
		runArgs = append(runArgs, "--metrics-addr", metricsAddr)
	}
	s.runCmd = exec.Command(s.o.bin, append(runArgs, scen)...)
	runLog, _ := os.Create(filepath.Join(s.dir, "run.log"))
	defer runLog.Close()
	s.runCmd.Stdout, s.runCmd.Stderr = runLog, runLog
	if err := s.runCmd.Start(); err != nil {
		v.add("run", false, "cannot start: %v", err)
		return v
	}
	s.runDone = make(chan error, 1)
	go func() { s.runDone <- s.runCmd.Wait() }()
	ctx, stopFlood := context.WithCancel(context.Background())
	defer stopFlood()
	var fw sync.WaitGroup
	s.flood(ctx, &fw)

	fmt.Fprintf(out, "soak: serve pid %d on %s, run pid %d: %g sessions/s for %s; flood %d CREATE/s + %d junk/s\n",
		s.serve.Process.Pid, s.lobby, s.runCmd.Process.Pid, s.o.rate, s.o.duration, s.o.floodRate, s.o.junkRate)
	fmt.Fprintf(out, "%8s %5s %12s %12s %10s %6s %9s %5s %12s %12s %8s %13s\n", "t", "phase", "serve RSS", "serve heap", "goroutines",
		"rooms", "instances", "held", "run RSS", "run heap", "run gor.", "flood refused")
	t0 := time.Now()
	var samples []sample
	var runErr error
	runEnded := false
	tick := time.NewTicker(s.o.sample)
	defer tick.Stop()
	var drainUntil time.Time
	for {
		select {
		case runErr = <-s.runDone:
			runEnded = true
			stopFlood()
			fw.Wait()
			drainUntil = time.Now().Add(s.o.drain)
			continue
		case <-tick.C:
		}
		sm := s.sample(time.Since(t0).Round(time.Second), !runEnded)
		samples = append(samples, sm)
		sm.print(out)
		if runEnded && (sm.rooms == 0 && sm.instances == 0 || time.Now().After(drainUntil)) {
			break
		}
		if time.Since(t0) > s.o.duration+s.o.drain+2*time.Minute {
			v.add("run ends", false, "run still going %s after its duration; killed", time.Since(t0)-s.o.duration)
			s.runCmd.Process.Kill()
			stopFlood()
			return v
		}
	}
	warm := s.o.warmup
	if warm == 0 {
		warm = max(s.o.duration/5, 70*time.Second)
	}
	judge(v, samples, warm, base.Goroutines)
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(runErr, &ee) {
		code = ee.ExitCode()
	} else if runErr != nil {
		code = -1
	}
	v.add("join-storm", code == 0, "run exit %d (0: thresholds met; 4: a threshold breached; see --keep's run.log)", code)
	v.add("flood refused", s.o.floodRate == 0 || s.floodNo.Load() > 0,
		"the CREATE flood got %d rooms and %d JOIN_FAILED (the per-IP room quota must refuse it)", s.floodOK.Load(), s.floodNo.Load())

	s.stopServe(v)
	v.print(out)
	return v
}

// stopServe interrupts the server and checks that it stops, within 15 s.
func (s *soaker) stopServe(v *verdict) {
	s.serve.Process.Signal(syscall.SIGINT)
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.serve.Wait() }()
	select {
	case err := <-serveErr:
		v.add("serve stops", err == nil, "exit %v after SIGINT", errString(err))
	case <-time.After(15 * time.Second):
		v.add("serve stops", false, "still running 15s after SIGINT")
	}
}

// print writes one line per check, ok or FAIL.
func (v *verdict) print(out io.Writer) {
	for _, c := range v.checks {
		mark := "ok  "
		if !c.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(out, "%s %-20s %s\n", mark, c.name, c.note)
	}
}

// judge adds the leak checks over the samples: flat after warm, back to
// zero and to the baseline after the drain.
func judge(v *verdict, samples []sample, warm time.Duration, baseGoroutines int) {
	var serveRSS, runRSS, gor []float64
	for _, sm := range samples {
		// The last load sample is excluded: run writes its results then.
		if sm.load && sm.at >= warm && sm.at < last(samples).at {
			serveRSS = append(serveRSS, float64(sm.serveRSS))
			if sm.runRSS > 0 {
				runRSS = append(runRSS, float64(sm.runRSS))
			}
			gor = append(gor, float64(sm.goroutines))
		}
	}
	flat(v, "serve RSS flat", serveRSS, 2<<20, 0.10, mib)
	flat(v, "serve goroutines", gor, 10, 0.20, func(f int64) string { return strconv.FormatInt(f, 10) })
	flat(v, "run RSS flat", runRSS, 2<<20, 0.10, mib)
	if len(samples) == 0 {
		v.add("back to zero", false, "no sample")
		return
	}
	end := last(samples)
	v.add("back to zero", end.rooms == 0 && end.instances == 0 && end.held == 0,
		"%d rooms, %d instances, %d held seats at the end", end.rooms, end.instances, end.held)
	v.add("goroutines back", end.goroutines <= baseGoroutines+5,
		"%d at the end, %d before the load", end.goroutines, baseGoroutines)
}

func last(s []sample) sample { return s[len(s)-1] }

// flat checks that the median of the last third of xs is at most
// max(abs, rel×first) above the median of the first third.
func flat(v *verdict, name string, xs []float64, abs, rel float64, show func(int64) string) {
	if len(xs) < 3 {
		v.add(name, false, "only %d samples after warm-up (need 3: lengthen --duration)", len(xs))
		return
	}
	k := len(xs) / 3
	first, last := median(xs[:k]), median(xs[len(xs)-k:])
	allowed := max(abs, rel*first)
	v.add(name, last-first <= allowed, "first third %s, last third %s (allowed growth %s)",
		show(int64(first)), show(int64(last)), show(int64(allowed)))
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ { // insertion sort: a handful of samples
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func errString(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// rss returns the resident set size of pid in bytes (0 if unknown).
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// freeAddr returns a free 127.0.0.1 TCP address.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// runRuntime reads run's heap in use and goroutine count from its
// Prometheus endpoint (zero when unavailable).
func (s *soaker) runRuntime() (heap int64, goroutines int) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(s.runMetrics)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			heap = int64(f)
		case "go_goroutines":
			goroutines = int(f)
		}
	}
	return heap, goroutines
}

// live is the part of serve's /stats the soak reads.
type live struct {
	UDP struct {
		Rooms     int               `json:"rooms"`
		Instances int               `json:"instances"`
		HeldSeats int               `json:"held_seats"`
		Failures  map[string]uint64 `json:"failures"`
	} `json:"udp_lobby"`
	Goroutines int   `json:"goroutines"`
	HeapAlloc  int64 `json:"heap_alloc_bytes"`
}

func (s *soaker) stats() (*live, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(s.statsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var l live
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return nil, err
	}
	return &l, nil
}

// flood sends valid CREATEs from 127.0.0.200-201 and malformed datagrams
// from 127.0.0.202-203, paced every 10 ms, until ctx is done.
func (s *soaker) flood(ctx context.Context, wg *sync.WaitGroup) {
	for i := range 4 {
		ip := netip.AddrFrom4([4]byte{127, 0, 0, byte(200 + i)})
		conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
		if err != nil {
			fmt.Fprintf(s.log, "soak: flood socket on %v: %v\n", ip, err)
			continue
		}
		junk := i >= 2
		perTick := float64(s.o.floodRate) / 200 // two addresses, 100 ticks a second
		if junk {
			perTick = float64(s.o.junkRate) / 200
		}
		wg.Add(2)
		go func() { // replies: count what the flood obtained
			defer wg.Done()
			buf := make([]byte, 2048)
			for {
				n, err := conn.Read(buf)
				if err != nil {
					return
				}
				var m udpwire.Message
				if (udpwire.Decoder{Dir: udpwire.ServerToClient}).Decode(buf[:n], &m) != nil {
					continue
				}
				switch m.Type {
				case udpwire.LobbyRoomCreated:
					s.floodOK.Add(1)
				case udpwire.LobbyJoinFailed:
					s.floodNo.Add(1)
				}
			}
		}()
		go func() {
			defer wg.Done()
			defer conn.Close()
			r := rand.New(rand.NewPCG(uint64(i), 15))
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			seq := uint16(0)
			budget := 0.0
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				budget += perTick
				for ; budget >= 1; budget-- {
					seq++
					var b []byte
					if junk {
						b = malformed(r, seq)
					} else {
						b = udpwire.AppendCreateRoom(nil, udpwire.ProfileSpec, seq)
					}
					conn.WriteToUDPAddrPort(b, s.lobby)
				}
			}
		}()
	}
}

// malformed returns one bad datagram: random bytes, a valid request with a
// bit flipped, truncated, or with a junk tail.
func malformed(r *rand.Rand, seq uint16) []byte {
	valid := udpwire.AppendJoinRoom(nil, udpwire.ProfileSpec, seq, r.Uint32N(200))
	switch r.IntN(4) {
	case 0:
		b := make([]byte, 1+r.IntN(64))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	case 1:
		valid[r.IntN(len(valid))] ^= 1 << r.IntN(8)
		return valid
	case 2:
		return valid[:r.IntN(len(valid))]
	default:
		return append(valid, byte(r.Uint32()), byte(r.Uint32()))
	}
}
