package levclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	refsrv "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// fastEngine is the connection engine of both ends in these tests: a short
// loss timer so that lossy runs finish fast, and 16 transmissions (the
// engine's cap) of a Critical message before it is given up. The server
// needs them as much as the client: a response given up is never answered
// again (the request's resends are duplicates), so at 20% loss the engine's
// own 5 would give up about 0.2^5 ≈ 3e-4 of the responses and time out a
// session in some runs of TestFlowUnderLoss's 30 sessions (about 270
// responses): 3 of 66 runs over impairment seeds, since timing changes
// which datagrams the seeded impairment drops. 16 give up 0.2^16 ≈ 7e-12
// (0 of 60 runs, none even lost). The schedule fits the steps' 5 s
// timeout: 16 × 80 ms for a request and as much again for its response.
var fastEngine = levconn.Config{LostAfter: 80 * time.Millisecond, AckDelay: 10 * time.Millisecond, CriticalTransmissions: 16}

func startServer(t testing.TB, mod func(*refsrv.Config)) *refsrv.Server {
	t.Helper()
	cfg := refsrv.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TickInterval = 5 * time.Millisecond
	cfg.Conn = fastEngine
	if mod != nil {
		mod(&cfg)
	}
	s, err := refsrv.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func plan(t testing.TB, impairment, steps string) *scenario.Plan {
	t.Helper()
	y := fmt.Sprintf(`name: t
protocol: leviathan
seed: 3
load:
  stages:
    - {rate: 10/s, for: 1s}
%s
defaults:
  timeout: 5s
flows:
  - name: f
    steps:
%s
`, impairment, steps)
	p, err := scenario.Parse("t.yaml", []byte(y))
	if err != nil {
		t.Fatalf("scenario: %v\n%s", err, y)
	}
	return p
}

const fullFlow = `      - connect: {name: bench}
      - join_server
      - join_game: {options: ""}
      - echo: {count: 2, interval: 5ms}
      - status
      - close`

// fastShared is the shared state of a run of p against s recording into
// col, with the fastEngine timings; it is closed when the test ends.
func fastShared(t testing.TB, p *scenario.Plan, s *refsrv.Server, col *metrics.Collector) *simclient.Shared {
	t.Helper()
	sh, err := simclient.NewShared(p, s.Addr(), col, simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	if !SetEngineConfig(sh, fastEngine) {
		t.Fatal("engine config not taken")
	}
	return sh
}

// runAll runs n sessions of p's first flow at once against addr.
func runAll(t testing.TB, p *scenario.Plan, s *refsrv.Server, n int) (*result.Run, []error) {
	t.Helper()
	col := metrics.NewCollector(time.Now())
	sh := fastShared(t, p, s, col)
	factory, ok := simclient.Lookup("leviathan")
	if !ok {
		t.Fatal("leviathan not registered")
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		sess, err := factory(sh, i, &p.Flows[0], clientSrc)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sess.Close()
			errs[i] = sess.Run(ctx, time.Time{})
		}()
	}
	wg.Wait()
	run, err := col.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return run, errs
}

func TestFlowUnderLoss(t *testing.T) {
	for _, loss := range []string{"0%", "5%", "20%"} {
		t.Run(loss, func(t *testing.T) {
			s := startServer(t, nil)
			imp := fmt.Sprintf("impairment: {drop: %s, duplicate: 2%%}", loss)
			p := plan(t, imp, fullFlow)
			const n = 30
			run, errs := runAll(t, p, s, n)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("session %d: %v", i, err)
				}
			}
			st := s.Stats()
			for _, r := range []string{"Connect", "Security", "Authenticate", "JoinServer", "JoinGame", "Serverstatus"} {
				if st.Requests[r] != n {
					t.Fatalf("%s acted on %d times for %d sessions (%v)", r, st.Requests[r], n, st.Requests)
				}
			}
			if st.Requests["Echo"] != 2*n {
				t.Fatalf("Echo acted on %d times", st.Requests["Echo"])
			}
			waitFor(t, "players released by CloseConnection", func() bool { return s.Stats().PlayersActive == 0 })
			steps := map[string]result.Series{}
			for _, sp := range run.Steps {
				steps[sp.Name] = sp
			}
			for _, name := range []string{"connect", "join_server", "join_game", "status", "close"} {
				if steps[name].Successes != n {
					t.Fatalf("step %s count %d, want %d", name, steps[name].Successes, n)
				}
			}
			if steps["echo"].Successes != 2*n {
				t.Fatalf("echo count %d", steps["echo"].Successes)
			}
			if len(run.Violations) != 0 {
				t.Fatalf("violations %+v", run.Violations)
			}
			msgs := map[string]result.Series{}
			for _, m := range run.Messages {
				msgs[m.Name] = m
			}
			if msgs["ack"].Successes == 0 {
				t.Fatal("no ack latency recorded")
			}
			if loss == "20%" && msgs["JoinServer"].Retries+msgs["Connect"].Retries+msgs["JoinGame"].Retries == 0 {
				t.Fatal("no resends recorded at 20% loss")
			}
			t.Logf("loss %s: server resends %d duplicates %d; client acks %d duplicates %d", loss, st.Resends, st.Duplicates, msgs["ack"].Successes, msgs["duplicate"].Successes)
		})
	}
}

func TestJoinDeniedWhenFull(t *testing.T) {
	s := startServer(t, func(c *refsrv.Config) { c.MaxPlayers = 1 })
	p := plan(t, "", `      - connect
      - join_server
      - think: 300ms`)
	_, errs := runAll(t, p, s, 2)
	denied := 0
	for _, err := range errs {
		if err != nil {
			if simclient.ReasonOf(err) != result.ReasonJoinDeny {
				t.Fatalf("failure %v, want %s", err, result.ReasonJoinDeny)
			}
			denied++
		}
	}
	if denied != 1 {
		t.Fatalf("%d sessions denied, want 1 (errors %v)", denied, errs)
	}
}

func TestMalformedStep(t *testing.T) {
	s := startServer(t, nil)
	p := plan(t, "", `      - connect
      - malformed: {count: 6, silence: 50ms}
      - echo`)
	run, errs := runAll(t, p, s, 1)
	if errs[0] != nil {
		t.Fatalf("%v\nserver %+v", errs[0], s.Stats())
	}
	if len(run.Violations) != 0 {
		t.Fatalf("violations %+v", run.Violations)
	}
	if len(run.Malformed) == 0 {
		t.Fatalf("no malformed findings: %+v", run.Malformed)
	}
	for _, f := range run.Malformed {
		if f.UnexpectedReplies != 0 || f.LivenessKept != f.LivenessChecks {
			t.Fatalf("finding %+v", f)
		}
	}
}

// TestClosedPortRefuses: a connect to a port nothing listens on fails as
// conn_refused, the ICMP port unreachable heard, on a socket (connected to
// the server) and on a virtual flow (connected to it too, vflow.Conn's
// Connect), not as a timeout.
func TestClosedPortRefuses(t *testing.T) {
	for _, mode := range []scenario.FlowsMode{scenario.FlowsSockets, scenario.FlowsVirtual} {
		t.Run(string(mode), func(t *testing.T) {
			if err := vflow.Available(); mode == scenario.FlowsVirtual && err != nil {
				t.Skipf("virtual flows unavailable here: %v", err)
			}
			p := plan(t, "", `      - connect: {timeout: 5s}`)
			p.FlowsMode = mode
			_, err := playOne(t, p, deadport.UDP(t))
			if r := simclient.ReasonOf(err); r != result.ReasonConnRefused {
				t.Fatalf("err %v (reason %q), want conn_refused", err, r)
			}
		})
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting: %s", what)
}

// TestRateProbe: the probe finds the reference server's rate limit (50
// datagrams a second from an address) with its built-in Echo and with a
// request written as a script, which its reply's ResponseTo pairs with
// (Response ServerStatus) or, naming none, the order (Response None). A
// where that never holds reads 0/s, every reply a refusal, the first named
// with its bytes; without a limit, every request is answered (a JoinGame's
// StartWorldReceive, ResponseTo 0 and not the expect's, refuses none), and
// the requests leave the probe's queue as they are.
func TestRateProbe(t *testing.T) {
	for _, tc := range []struct {
		name, request string // the request's keys in the rate_probe
		limit         bool   // the server limits the rate (else none does)
		refusal       string // the first refusal's start; none when ""
	}{
		{"built-in", "", true, ""},
		{"scripted Echo", ", send: Request Echo, expect: Response None", true, ""},
		{"scripted Serverstatus", `, send: Request Serverstatus, expect: {message: Response ServerStatus, where: "MaxPlayers > 0 && ResponseTo > 0"}`, true, ""},
		// ResponseTo 5: the first request, after the handshake's 3 and JoinServer.
		{"a where that never holds", `, send: Request Serverstatus, expect: {message: Response ServerStatus, where: "Players > 1000"}`, false, "Response ServerStatus (12 00 00 00 05 00 0b 00 00 00 05 "},
		{"scripted Echo, no limit", ", send: Request Echo, expect: Response None", false, ""},
		{"scripted JoinGame, no limit", ", send: Request JoinGame, expect: Response ServerAllow", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, func(c *refsrv.Config) {
				if tc.limit {
					c.RateLimit, c.RateBurst = 50, 10
				}
			})
			held := -1
			probeHeld = func(n int) { held = n }
			t.Cleanup(func() { probeHeld = nil })
			p := plan(t, "", `      - connect
      - join_server
      - rate_probe: {from: 20/s, to: 300/s, over: 2s, timeout: 300ms`+tc.request+`}`)
			run, errs := runAll(t, p, s, 1)
			if errs[0] != nil {
				t.Fatal(errs[0])
			}
			if len(run.RateLimits) != 1 {
				t.Fatalf("findings %+v", run.RateLimits)
			}
			f := run.RateLimits[0]
			switch {
			case f.Sent != 320:
				t.Fatalf("finding %+v, want 320 sent", f)
			case tc.limit && (f.ObservedLimitPerSec <= 0 || f.ObservedLimitPerSec > 120 || f.Limited == 0):
				t.Fatalf("finding %+v, want a limit near 50/s", f)
			case tc.refusal != "" && (f.ObservedLimitPerSec != 0 || f.Accepted != 0 || !strings.Contains(f.Note, "320 refused, 0 lost; the first refusal: "+tc.refusal)):
				t.Fatalf("finding %+v, want 0/s, every request refused, the first refusal %q", f, tc.refusal)
			case !tc.limit && tc.refusal == "" && (f.Accepted != 320 || strings.Contains(f.Note, "refusal")):
				t.Fatalf("finding %+v, want every request answered", f)
			}
			if !tc.limit && held >= 320 {
				t.Errorf("the probe's queue had room for %d requests at its end, of 320 sent: want only those in flight at once", held)
			}
			if tc.refusal == "" && strings.Contains(f.Note, "the first refusal") {
				t.Errorf("note %q names a refusal", f.Note)
			}
			if len(run.Violations) != 0 {
				t.Errorf("violations %+v", run.Violations)
			}
		})
	}
}

// clientSrc is the source address of this package's test clients. The
// Leviathan server retransmits to clients that have gone, and go test runs
// packages in parallel: on an address of their own those late datagrams
// cannot reach another package's test client that the kernel gave the same
// port on 127.0.0.1 (one such stray failed a udpclient test under
// .ci/stress-ci). udpclient uses 127.0.77.1.
var clientSrc = netip.MustParseAddr("127.0.78.1")

// TestLatencyEndKernel: on Linux a Leviathan client's replies are timed
// by the kernel's receive stamp, and the run says so.
func TestLatencyEndKernel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	s := startServer(t, nil)
	p := plan(t, "", fullFlow)
	sh := fastShared(t, p, s, metrics.NewCollector(time.Now()))
	factory, _ := simclient.Lookup("leviathan")
	sess, err := factory(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sess.Run(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := sh.LatencyEnd(); got != result.LatencyEndKernel {
		t.Errorf("LatencyEnd = %q, want %q", got, result.LatencyEndKernel)
	}
}

// TestRunEndsWithItsContext: a session waiting on a silent server is a
// member of its run's cancel set for the context it runs under (one
// context.AfterFunc for all the run's clients, none a read), its Run ends
// with that context, and it leaves the set.
func TestRunEndsWithItsContext(t *testing.T) {
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	p := plan(t, "", "      - connect: {name: bench}\n")
	sh, err := simclient.NewShared(p, silent.LocalAddr().(*net.UDPAddr).AddrPort(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	sess, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := sh.Cancels(ctx)
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx, time.Now()) }()
	// The session joins the set before its first step, whose Connect the
	// silent server receives (and never answers: the step waits 5 s).
	silent.SetReadDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measure
	if _, _, err := silent.ReadFromUDPAddrPort(make([]byte, 2048)); err != nil {
		t.Fatalf("no Connect reached the server: %v", err)
	}
	if n := set.Len(); n != 1 {
		t.Fatalf("%d members in the run's cancel set while the session waits, want 1", n)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
	if n := set.Len(); n != 0 {
		t.Errorf("%d members left in the set after Run", n)
	}
}
