package capacity

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// fakeEngine answers every step with a passing run, or fails the steps
// whose load it is told to with err.
func fakeEngine(failAt float64, err error) func(context.Context, engine.Config) (*engine.Result, error) {
	return func(_ context.Context, cfg engine.Config) (*engine.Result, error) {
		if cfg.Plan.Load.Start >= failAt {
			return nil, err
		}
		run := &result.Run{DurationNS: time.Second, Thresholds: []result.ThresholdResult{passing("errors.rate", 0, 0.05)},
			TimeSeries: []result.Point{{Second: 0, Requests: int64(cfg.Plan.Load.Start)}}}
		return &engine.Result{Run: run, Engine: &engine.Info{}}, nil
	}
}

func TestEngineRunnerDrain(t *testing.T) {
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	for _, tc := range []struct {
		name  string
		rooms []int // what each listing says, in turn
		drain time.Duration
		err   error
		want  []string // each step's drain
		slept int
		note  string // "" none
	}{
		{"empty: baseline at once", []int{0, 0, 0}, time.Second, nil, []string{"", "", ""}, 0, ""},
		{"drains after a wait", []int{0, 3, 1, 0, 0}, time.Second, nil, []string{"", "", ""}, 2, ""},
		{"never drains", []int{0, 5, 5, 5, 5, 0}, time.Second, nil, []string{"", "not drained: 5 rooms listed after --drain 1s, baseline 0", ""}, 3, ""},
		// An earlier run's rooms, cleaned up before the first step: the
		// baseline waits for them (settleFor level), and the rooms this
		// run leaves are then not taken for the server's own.
		{"earlier run's rooms go", []int{3, 1, 1, 1, 1, 1, 2, 1}, 5 * time.Second, nil,
			[]string{"", ""}, 6, "drain: 1 room listed before the first step: the baseline each later step waits for"},
		// Rooms that stay (another user's) are the baseline once level
		// for settleFor, or when --drain is over first.
		{"rooms that stay", []int{2, 2, 2, 2, 2}, time.Second, nil, []string{"", ""}, 2,
			"drain: 2 rooms listed before the first step: the baseline each later step waits for"},
		// Readings below the baseline lower it: later steps wait for the
		// lower count.
		{"baseline falls later", []int{2, 2, 2, 0, 1, 1, 1, 0}, time.Second, nil, []string{"", "", "not drained: 1 room listed after --drain 1s, baseline 0"}, 4,
			"drain: 2 rooms listed before the first step: the baseline each later step waits for"},
		{"no baseline", nil, time.Second, fmt.Errorf("no LOBBY_ROOM_LIST"), []string{"no room baseline (no LOBBY_ROOM_LIST)", "no room baseline (no LOBBY_ROOM_LIST)"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i, slept := 0, 0
			var notes []string
			r := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1e9, nil),
				Drain: tc.drain, DrainPoll: 500 * time.Millisecond,
				Sleep: func(context.Context, time.Duration) { slept++ },
				Note:  func(s string) { notes = append(notes, s) },
				Rooms: func(context.Context) (int, error) {
					if tc.err != nil {
						return 0, tc.err
					}
					n := tc.rooms[min(i, len(tc.rooms)-1)]
					i++
					return n, nil
				}}
			var got []string
			for range tc.want {
				st, err := r.Step(context.Background(), 10)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, st.Drain)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || slept != tc.slept {
				t.Errorf("drain %q slept %d, want %q %d", got, slept, tc.want, tc.slept)
			}
			if want := []string{tc.note}; tc.note == "" && len(notes) > 0 || tc.note != "" && !slices.Equal(notes, want) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}

// A drain lasts --drain however long each count takes: a silent target
// makes every count wait its 2 s, and polling it --drain/poll times took
// five times --drain. The clock is the test's.
func TestEngineRunnerDrainBoundedByTime(t *testing.T) {
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	clock := time.Unix(0, 0)
	counts := 0
	r := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1e9, nil),
		Drain: 30 * time.Second, DrainPoll: 500 * time.Millisecond,
		Now:   func() time.Time { return clock },
		Sleep: func(_ context.Context, d time.Duration) { clock = clock.Add(d) },
		Rooms: func(context.Context) (int, error) {
			counts++
			if counts == 1 {
				return 0, nil // the baseline, before the first step
			}
			clock = clock.Add(2 * time.Second) // no answer: the count's whole wait
			return 0, fmt.Errorf("no LOBBY_ROOM_LIST within 2s")
		}}
	for range 2 {
		if _, err := r.Step(context.Background(), 10); err != nil {
			t.Fatal(err)
		}
	}
	// 2.5 s a poll: 12 polls reach 30 s (the 61 of a count-bound drain would take 152 s).
	if polls := counts - 1; polls != 12 {
		t.Errorf("%d counts in the drain, want 12 (30 s at 2.5 s each)", polls)
	}
	if d := clock.Sub(time.Unix(0, 0)); d > 32*time.Second {
		t.Errorf("the drain took %v of the test's clock, over --drain 30s and one count", d)
	}
}

// A target unreachable before a later step died of the load before it:
// TARGET DOWN; unreachable before the first, it is the caller's error.
func TestEngineRunnerUnreachable(t *testing.T) {
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	unreach := &engine.UnreachableError{Target: plan.Target, Err: fmt.Errorf("connection refused")}
	r := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement, Run: fakeEngine(40, unreach)}
	c, err := Search(context.Background(), Settings{Start: 10, Max: 1000, Precision: 0.1, Budget: time.Hour}, r, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Stop != result.StopTargetDown || c.Sustainable != 20 || c.Headline().Status != result.StatusTargetDown || !strings.HasPrefix(c.Headline().Text, "TARGET DOWN · at 40/s") {
		t.Errorf("stop %q sustainable %v headline %+v: want target down at 40 after 20 held", c.Stop, c.Sustainable, c.Headline())
	}
	first := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1, unreach)}
	if _, err := first.Step(context.Background(), 10); err != unreach {
		t.Errorf("first step's error %v, want the engine's", err)
	}
}

// udpRooms and tcpRooms are the drain check's counts of a lobby: the
// protocols' Occupancy.
func udpRooms(ctx context.Context, addr netip.AddrPort, profile string, timeout time.Duration) (int, error) {
	return udpclient.Client.Occupancy.Count(ctx, addr, udpclient.Options{HeaderProfile: profile}, timeout)
}

func tcpRooms(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (int, error) {
	return tcpclient.Client.Occupancy.Count(ctx, addr, nil, timeout)
}

// udpRooms lists the reference server's rooms on a socket of its own.
func TestUDPRooms(t *testing.T) {
	cfg, err := refserver.Loopback().Only("udp-lobby")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	n, err := udpRooms(context.Background(), srv.Addr("udp-lobby"), "spec", 2*time.Second)
	if err != nil || n != 0 {
		t.Errorf("UDPRooms = %d, %v: want 0 rooms of a fresh server", n, err)
	}
	silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if _, err := udpRooms(context.Background(), silent.LocalAddr().(*net.UDPAddr).AddrPort(), "spec", 60*time.Millisecond); err == nil {
		t.Error("UDPRooms of a silent server: no error")
	}
}

// tcpRooms lists the reference server's tcp-lobby rooms on a connection
// of its own.
func TestTCPRooms(t *testing.T) {
	cfg, err := refserver.Loopback().Only("udp-lobby", "tcp-lobby")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	n, err := tcpRooms(context.Background(), srv.Addr("tcp-lobby"), 2*time.Second)
	if err != nil || n != 0 {
		t.Errorf("TCPRooms = %d, %v: want 0 rooms of a fresh server", n, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := tcpRooms(context.Background(), l.Addr().(*net.TCPAddr).AddrPort(), 60*time.Millisecond); err == nil {
		t.Error("TCPRooms of a server that never answers: no error")
	}
}

// A step's warm-up is a run of its own before the judged run, against
// the same server (a step's own embedded server when the scenario names
// no target): only the judged run's result is judged, unless the target
// went down during the warm-up.
func TestEngineRunnerWarmupApart(t *testing.T) {
	withTarget := pollPlan(t, (&cappedLobby{}).Start(t))
	embedded := *withTarget
	embedded.Target = ""
	for _, tc := range []struct {
		name     string
		plan     *scenario.Plan
		downInWU bool
		verdict  string
	}{
		{"target", withTarget, false, result.CapPass},
		{"embedded", &embedded, false, result.CapPass},
		{"down in the warm-up", withTarget, true, result.CapTargetDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs []time.Duration
			var servers []netip.AddrPort
			r := &EngineRunner{Plan: tc.plan, Hold: 2 * time.Second, Warmup: time.Second, Judge: DefaultJudgement,
				Run: func(_ context.Context, cfg engine.Config) (*engine.Result, error) {
					runs = append(runs, cfg.Plan.Load.Duration)
					servers = append(servers, cfg.EmbeddedAt)
					for _, o := range cfg.Observers {
						o.LoadStart(time.Now()) // as the engine does
					}
					warm := cfg.Plan.Load.Duration == time.Second
					run := &result.Run{DurationNS: cfg.Plan.Load.Duration, Thresholds: []result.ThresholdResult{passing("errors.rate", 0, 0.05)},
						TimeSeries: []result.Point{{Second: 0, Requests: 10}, {Second: 1, Requests: 10}}}
					if warm {
						// A warm-up that fails its thresholds is not judged.
						run.Thresholds[0] = passing("errors.rate", 0.5, 0.05)
						if tc.downInWU {
							run.Outages = []result.Outage{{Kind: result.DownSilent, StartNS: 500 * time.Millisecond}}
							run.NoteTargetDown()
						}
					}
					return &engine.Result{Run: run, Engine: &engine.Info{}}, nil
				}}
			st, err := r.Step(context.Background(), 10)
			if err != nil {
				t.Fatal(err)
			}
			wantRuns := []time.Duration{time.Second, 2 * time.Second}
			if tc.downInWU {
				wantRuns = wantRuns[:1]
			}
			if st.Verdict != tc.verdict || !slices.Equal(runs, wantRuns) {
				t.Fatalf("verdict %s (%s), runs %v: want %s, runs %v", st.Verdict, st.Why, runs, tc.verdict, wantRuns)
			}
			if tc.verdict == result.CapPass && st.Throughput != 10 {
				t.Errorf("throughput %v, want the judged run's 20 answered over its 2s", st.Throughput)
			}
			if tc.plan.Target == "" && (!servers[0].IsValid() || servers[0] != servers[1]) {
				t.Errorf("embedded servers %v: want the step's own, the same for both runs", servers)
			}
			if tc.plan.Target == "" && st.ServerPeakRSSBytes == 0 {
				t.Error("no figures of the step's embedded server")
			}
		})
	}
}
