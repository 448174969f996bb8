package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// watchedTarget starts the reference server's part for proto on
// 127.0.0.1 and a faultproxy in front of it that, after `after` client
// packets, does mode.
func watchedTarget(t *testing.T, proto string, mode faultproxy.Mode, after int) *faultproxy.Proxy {
	t.Helper()
	parts := []string{proto}
	if proto == tcpwire.ProtocolName {
		parts = append(parts, udpwire.ProtocolName) // its games' instances
	}
	cfg, err := refserver.Loopback().Only(parts...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	to := srv.Addr(proto)
	var p *faultproxy.Proxy
	if proto == tcpwire.ProtocolName {
		p, err = faultproxy.TCP(to, mode, after)
	} else {
		p, err = faultproxy.UDP(to, mode, after)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// watchedSteps are flows each protocol plays through the proxy (its
// lobby port only).
var watchedSteps = map[string]string{
	"udp-lobby": "[list_rooms]",
	"tcp-lobby": "[connect, list_rooms]",
	"leviathan": "[connect, echo]",
}

func watchedPlan(t *testing.T, proto string, target netip.AddrPort, d time.Duration) *scenario.Plan {
	t.Helper()
	y := fmt.Sprintf("protocol: %s\ntarget: %s\ndefaults: {timeout: 300ms, retries: 0}\nload: {model: closed, clients: 3, duration: %v}\nflows:\n  - name: poll\n    steps: %s\n",
		proto, target, d, watchedSteps[proto])
	plan, err := scenario.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestWatchdogSeesTheTargetGo: for each protocol, a target that dies
// mid-run (its sockets closed for good after 40 client packets) is an
// outage of kind refused, one that hangs (sockets kept, nothing
// answered) one of kind silent; neither is back by the end, the headline
// leads with TARGET DOWN, and the failures after it are counted apart
// from those before.
func TestWatchdogSeesTheTargetGo(t *testing.T) {
	waitsInParallel(t)
	for _, proto := range []string{"udp-lobby", "tcp-lobby", "leviathan"} {
		for _, tc := range []struct {
			mode faultproxy.Mode
			kind string
		}{{faultproxy.Die, result.DownRefused}, {faultproxy.Hang, result.DownSilent}} {
			t.Run(proto+" "+tc.kind, func(t *testing.T) {
				waitsInParallel(t)
				p := watchedTarget(t, proto, tc.mode, 40)
				plan := watchedPlan(t, proto, p.Addr(), 2*time.Second)
				var progress bytes.Buffer // written under the progress display's lock until Run returns
				res, err := Run(context.Background(), Config{Plan: plan, Grace: 500 * time.Millisecond,
					Watchdog: 50 * time.Millisecond, WatchdogTimeout: 200 * time.Millisecond,
					Progress: &progress, Mode: ProgressLines, LineInterval: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				if !p.Faulted() {
					t.Fatal("the proxy never faulted: the run sent fewer than 40 packets")
				}
				if !strings.Contains(progress.String(), "lobbybench: TARGET DOWN at +") {
					t.Errorf("progress %q does not say the target went down", progress.String())
				}
				run := res.Run
				if len(run.Outages) != 1 {
					t.Fatalf("outages %+v, want one", run.Outages)
				}
				o := run.Outages[0]
				if o.Kind != tc.kind || o.Back || o.StartNS <= 0 || o.LastUpNS > o.StartNS || o.Detail == "" {
					t.Errorf("outage %+v: want kind %s, not back, up before it went down, with a detail", o, tc.kind)
				}
				hl := run.Headline()
				if hl.Status != result.StatusTargetDown || !strings.HasPrefix(hl.Text, "TARGET DOWN · at +") || !strings.Contains(hl.Text, "not back by the end") {
					t.Errorf("headline %+v", hl)
				}
				if run.TargetDown == "" || !strings.HasPrefix(hl.Text, run.TargetDown) {
					t.Errorf("Run.TargetDown %q is not the headline's lead %q", run.TargetDown, hl.Text)
				}
				down := run.Totals.FailuresWhileDown
				var nDown int64
				for r, n := range down {
					if n <= 0 || n > run.Totals.FailuresByReason[r] {
						t.Errorf("%d %s while down of %d in all", n, r, run.Totals.FailuresByReason[r])
					}
					nDown += n
				}
				if nDown == 0 || len(o.During) == 0 || o.Failures == nil {
					t.Errorf("no failure counted while down (%v; outage %+v) of %v", down, o, run.Totals.FailuresByReason)
				}
				// How many of the 40 packets were answered before the first
				// failed probe depends on how the machine scheduled the load
				// and the probes (a busy one can spend the whole budget
				// between two probes): only the bound is asserted here.
				if run.Totals.Successes < o.AnsweredBefore {
					t.Errorf("answered before %d of %d successes", o.AnsweredBefore, run.Totals.Successes)
				}
				// Whether a probe was answered before the fault depends on
				// how fast the load spent the proxy's budget: not asserted.
				if w := res.Engine.Watchdog; w == nil || w.Probes == 0 || w.Answered == w.Probes {
					t.Errorf("watchdog %+v: want probes unanswered", w)
				}
			})
		}
	}
}

// TestWatchdogNoFalseAlarm: a healthy target under the load, watched at
// the defaults, has no outage, and the headline says nothing of one.
func TestWatchdogNoFalseAlarm(t *testing.T) {
	waitsInParallel(t)
	for _, proto := range []string{"udp-lobby", "tcp-lobby", "leviathan"} {
		t.Run(proto, func(t *testing.T) {
			waitsInParallel(t)
			p := watchedTarget(t, proto, faultproxy.Healthy, 0)
			plan := watchedPlan(t, proto, p.Addr(), time.Second)
			res, err := Run(context.Background(), Config{Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Outages) != 0 || res.Totals.FailuresWhileDown != nil || res.TargetDown != "" {
				t.Errorf("outages %+v, failures while down %v, on a healthy target", res.Outages, res.Totals.FailuresWhileDown)
			}
			if w := res.Engine.Watchdog; w == nil || w.Probes == 0 || w.Answered != w.Probes {
				t.Errorf("watchdog %+v: want every probe answered", w)
			}
			if res.Headline().Status == result.StatusTargetDown {
				t.Errorf("headline %+v", res.Headline())
			}
			if res.SilentAtEnd != nil {
				t.Errorf("silent at the end %+v, on a healthy target", res.SilentAtEnd)
			}
		})
	}
}

// TestWatchdogSilentAtEnd: a target that hangs with less of the run left
// than the watchdog needs to call it down (two probes of 4 s, the second
// starting 2 s after the first) is not TARGET DOWN, and the run says it
// went silent and since when.
func TestWatchdogSilentAtEnd(t *testing.T) {
	waitsInParallel(t)
	p := watchedTarget(t, "udp-lobby", faultproxy.Hang, 10)
	plan := watchedPlan(t, "udp-lobby", p.Addr(), 3*time.Second)
	res, err := Run(context.Background(), Config{Plan: plan, Grace: 500 * time.Millisecond,
		Watchdog: 50 * time.Millisecond, WatchdogTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Faulted() {
		t.Fatal("the proxy never faulted: the run sent fewer than 10 packets")
	}
	if len(res.Outages) != 0 || res.Headline().Status == result.StatusTargetDown {
		t.Fatalf("outages %+v, headline %+v: the watchdog could not have called it down", res.Outages, res.Headline())
	}
	s := res.SilentAtEnd
	if s == nil {
		t.Fatalf("no silence at the end; watchdog %+v", res.Engine.Watchdog)
	}
	if s.EndNS-s.SinceNS < result.SilentAfter || s.EndNS > res.DurationNS || s.LastUpNS > s.SinceNS {
		t.Errorf("silence %+v in a run of %v", s, res.DurationNS)
	}
	if ws := res.Warnings(); len(ws) == 0 || !strings.Contains(ws[0], "answered none of the watchdog's probes") {
		t.Errorf("warnings %q do not say first that the target went silent", ws)
	}
}

// TestWatchdogOff: Config.Watchdog below 0 runs none.
func TestWatchdogOff(t *testing.T) {
	p := watchedTarget(t, "udp-lobby", faultproxy.Die, 10)
	plan := watchedPlan(t, "udp-lobby", p.Addr(), 300*time.Millisecond)
	res, err := Run(context.Background(), Config{Plan: plan, Watchdog: -1, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine.Watchdog != nil || len(res.Outages) != 0 {
		t.Errorf("watchdog %+v, outages %+v with the watchdog off", res.Engine.Watchdog, res.Outages)
	}
}

// TestWatchdogHook: Observer.WatchdogReady gets the watchdog before the load
// starts, and an outage it reports (an owned process's exit) is the
// run's, first in the headline.
func TestWatchdogHook(t *testing.T) {
	p := watchedTarget(t, "udp-lobby", faultproxy.Healthy, 0)
	plan := watchedPlan(t, "udp-lobby", p.Addr(), 300*time.Millisecond)
	var log []string
	res, err := Run(context.Background(), Config{Plan: plan, Observers: []Observer{&momentLog{log: &log, onWatchdog: func(w *liveness.Watchdog) {
		w.MarkDown(time.Millisecond, result.DownExited, "", "killed by SIGABRT", []string{"abort"})
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outages) != 1 || res.Outages[0].Kind != result.DownExited || !strings.Contains(res.Headline().Text, "killed by SIGABRT") {
		t.Errorf("outages %+v, headline %q", res.Outages, res.Headline().Text)
	}
}

// TestWatchProbeLocalFailure: a probe that could not open its socket
// because this process ran out of descriptors or ports is inconclusive
// (the watchdog counts neither up nor down); a refusal or a silence is
// the target's.
func TestWatchProbeLocalFailure(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", errno)}
	}
	for _, tc := range []struct {
		name         string
		err          error
		inconclusive bool
		kind         string
	}{
		{"answered", nil, false, ""},
		{"out of descriptors", dial(syscall.EMFILE), true, ""},
		{"system out of descriptors", dial(syscall.ENFILE), true, ""},
		{"no free port", dial(syscall.EADDRNOTAVAIL), true, ""},
		{"refused", dial(syscall.ECONNREFUSED), false, result.DownRefused},
		{"silent", errors.New("no reply to LIST_ROOMS_REQ within 1s"), false, result.DownSilent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &simclient.Client{Reach: func(context.Context, netip.AddrPort, scenario.Options, time.Duration) (scenario.Options, error) {
				return nil, tc.err
			}}
			err := watchProbe(p, netip.MustParseAddrPort("127.0.0.1:1"), nil, time.Second)(context.Background())
			if got := errors.Is(err, liveness.ErrInconclusive); got != tc.inconclusive {
				t.Errorf("inconclusive = %v (%v), want %v", got, err, tc.inconclusive)
			}
			if !tc.inconclusive && liveness.Classify(err) != tc.kind {
				t.Errorf("Classify(%v) = %q, want %q", err, liveness.Classify(err), tc.kind)
			}
		})
	}
}

// TestOutageLostState: the failures of requests sent once a restarted
// target was back (after the longest a request sent before could take)
// are the outage's FailuresAfter, up to the next outage; those that
// ended sooner may have been sent while it was down and are not; a hang
// the target came back from restarted nothing.
func TestOutageLostState(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	silent := errors.New("no reply to LIST_ROOMS_REQ within 1s")
	start := time.Now()
	col := metrics.NewCollector(start)
	r := col.NewRecorder()
	k := col.Step("join")
	fail := func(at time.Duration, reason string, n int) {
		for i := 0; i < n; i++ {
			r.Fail(k, reason, start.Add(at))
		}
	}
	fail(1500*time.Millisecond, "conn_refused", 2) // while down
	fail(2500*time.Millisecond, "timeout", 5)      // within the settle time: maybe sent while down
	fail(4*time.Second, "timeout", 7)              // sent to the restarted server
	fail(11*time.Second, "timeout", 1)             // during the hang
	fail(13*time.Second, "timeout", 4)             // after the hang

	w := &liveness.Watchdog{SilentAfter: 1}
	for _, p := range []struct {
		at  time.Duration
		err error
	}{{0, nil}, {time.Second, refused}, {2 * time.Second, nil}, {9 * time.Second, nil}, {10 * time.Second, silent}, {12 * time.Second, nil}} {
		w.Observe(p.at, p.err)
	}
	x := &watch{w: w, col: col, answered: map[time.Duration]int64{}, settle: time.Second}
	out := x.outages()
	if len(out) != 2 {
		t.Fatalf("outages %+v, want 2", out)
	}
	if got := out[0].FailuresAfter; len(got) != 1 || got["timeout"] != 7 {
		t.Errorf("after the restart: %v, want 7 timeout", got)
	}
	if got := out[1].FailuresAfter; got != nil {
		t.Errorf("after the hang: %v, want none (no restart)", got)
	}
}

// TestAnsweredSince: the load's requests answered after a probe began
// say the target answered, whatever became of the probe (a rate limit
// can drop it); none answered after it leave the silence standing.
func TestAnsweredSince(t *testing.T) {
	start := time.Now()
	col := metrics.NewCollector(start)
	r := col.NewRecorder()
	k := col.Step("list_rooms")
	answer := func(at time.Duration) { r.Record(k, start.Add(at), start.Add(at), start.Add(at+time.Millisecond)) }
	x := &watch{col: col, answered: map[time.Duration]int64{}}
	probe := func(at time.Duration) {
		x.history[x.next%len(x.history)] = probeStart{at, col.Live().Successes}
		x.next++
	}
	answer(time.Second)
	probe(2 * time.Second)
	if x.answeredSince(2 * time.Second) {
		t.Error("answered since the probe at 2 s with no request answered after it")
	}
	answer(3 * time.Second)
	if !x.answeredSince(2 * time.Second) {
		t.Error("not answered since the probe at 2 s, a request answered at 3 s")
	}
}
