package udpclient

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// plan parses a scenario whose flows are given as YAML.
func plan(t testing.TB, extra, flows string) *scenario.Plan {
	t.Helper()
	y := "protocol: udp-lobby\nload: {clients: 1, duration: 10s}\n" + extra + "\nflows:\n" + flows
	p, err := scenario.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatalf("scenario:\n%s\n%v", y, err)
	}
	return p
}

type played struct {
	run   *result.Run
	errs  []error
	stray int64 // simclient.Shared.StrayDatagrams
}

func (r played) step(t testing.TB, name string) result.Series {
	t.Helper()
	for _, s := range r.run.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q in %+v", name, r.run.Steps)
	return result.Series{}
}

func (r played) message(name string) result.Series {
	for _, s := range r.run.Messages {
		if s.Name == name {
			return s
		}
	}
	return result.Series{}
}

func (r played) violations() map[string]int64 {
	m := map[string]int64{}
	for _, v := range r.run.Violations {
		m[v.Rule] = v.Count
	}
	return m
}

// runSessions runs n sessions of flow 0 concurrently against target, as the
// engine does: factories in arrival order, then Run.
// oneSession makes one session (client 0) of flow 0 of p against target,
// with its Shared and metrics Collector; both close when the test ends.
func oneSession(t testing.TB, p *scenario.Plan, target netip.AddrPort, opt simclient.Options) (simclient.Session, *metrics.Collector) {
	t.Helper()
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, target, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	s, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

func runSessions(t testing.TB, p *scenario.Plan, target netip.AddrPort, n int, opt simclient.Options) played {
	t.Helper()
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, target, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	f, ok := simclient.Lookup("udp-lobby")
	if !ok {
		t.Fatal("udp-lobby not registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		s, err := f(sh, i, &p.Flows[0], clientSrc)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			errs[i] = s.Run(ctx, time.Now())
		}()
	}
	wg.Wait()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return played{run: run, errs: errs, stray: sh.StrayDatagrams()}
}

func TestFullMatch(t *testing.T) {
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		t.Run(prof.String(), func(t *testing.T) {
			f := newFakeLobby(t, prof)
			p := plan(t, "header_profile: "+prof.String(), `
  - name: match
    group_size: 4
    steps:
      - list_rooms
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - barrier: {n: 4, timeout: 10s}
      - ready
      - ping: {count: 3, interval: 1ms}
      - wait_game_start: 10s
      - leave
`)
			r := runSessions(t, p, f.addr(), 8, simclient.Options{})
			for i, err := range r.errs {
				if err != nil {
					t.Errorf("session %d: %v", i, err)
				}
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations: %v", v)
			}
			for name, want := range map[string]int64{"list_rooms": 8, "create_room": 2, "join": 8, "hello": 8, "instance_join": 8,
				"barrier": 8, "ready": 8, "ping": 24, "wait_game_start": 8, "leave": 8} {
				if got := r.step(t, name).Successes; got != want {
					t.Errorf("%s successes = %d, want %d", name, got, want)
				}
			}
			if got := r.message("CLIENT_PING").Successes; got != 24 {
				t.Errorf("CLIENT_PING successes = %d", got)
			}
			if got := f.count(udpwire.LobbyCreateRoom); got != 2 {
				t.Errorf("server saw %d creates, want 2", got)
			}
		})
	}
}

func TestMisbehavingLobby(t *testing.T) {
	t.Parallel() // waits on its timeouts; asserts counts and reasons (TestMain)
	// Short enough for the cases that wait out timeouts (waitsOut),
	// long enough that a loaded machine's slow reply is not taken for
	// silence (50 ms could be). The others, whose every request is
	// answered, take a longer timeout: under the race detector beside
	// two busy loops a reply once took over 200 ms and "wrong reply
	// type" counted a retry.
	fastPolicy := "defaults: {timeout: 200ms, retries: 2, retry_interval: 10ms}"
	replyPolicy := "defaults: {timeout: 2s, retries: 2, retry_interval: 10ms}"
	tests := []struct {
		name      string
		flow      string
		extra     string // scenario keys beside the fast policy
		setup     func(f *fakeLobby)
		wantRule  string // a violation that must be counted ("" = none)
		wantFail  string // the failure reason of the failing step ("" = the session succeeds)
		failStep  string
		wantRetry int64 // retries counted on failStep
		waitsOut  bool  // the case waits out the fast policy's timeouts
	}{
		{
			name:     "wrong sequence then silence",
			flow:     "- list_rooms",
			setup:    func(f *fakeLobby) { f.lobbyHook = seqPlus(100) },
			wantRule: RuleUSeqEcho, wantFail: result.ReasonTimeout, failStep: "list_rooms", wantRetry: 2, waitsOut: true,
		},
		{
			name: "bad CRC on the reply",
			flow: "- list_rooms",
			setup: func(f *fakeLobby) {
				f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte { def[len(def)-1] ^= 0xFF; return def }
			},
			wantRule: string(udpwire.RuleCRC), wantFail: result.ReasonViolation, failStep: "list_rooms",
		},
		{
			name: "wrong reply type",
			flow: "- list_rooms",
			setup: func(f *fakeLobby) {
				f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
					return udpwire.AppendRoomCreated(nil, f.p, m.Seq, 9, 9000)
				}
			},
			wantRule: RuleUReplyType, wantFail: result.ReasonViolation, failStep: "list_rooms",
		},
		{
			name:     "join returns another port than the creation, fail_step",
			flow:     "- create_room\n      - join: created",
			extra:    "on_violation: fail_step",
			setup:    func(f *fakeLobby) { f.joinPort = 1 },
			wantRule: RuleUJoinPort, wantFail: result.ReasonViolation, failStep: "join",
		},
		{
			name:     "join returns another port than the creation, continue",
			flow:     "- create_room\n      - join: created",
			setup:    func(f *fakeLobby) { f.joinPort = 1 },
			wantRule: RuleUJoinPort,
		},
		{
			name:     "port outside instance_ports, fail_step",
			flow:     "- create_room",
			extra:    "instance_ports: 1-2\non_violation: fail_step",
			setup:    func(f *fakeLobby) {},
			wantRule: RuleUPortRange, wantFail: result.ReasonViolation, failStep: "create_room",
		},
		{
			name:     "port outside instance_ports, continue to the port given",
			flow:     "- create_room\n      - hello",
			extra:    "instance_ports: 1-2",
			setup:    func(f *fakeLobby) {},
			wantRule: RuleUPortRange,
		},
		{
			name:     "instance replies from another port, continue",
			flow:     "- create_room\n      - hello\n      - instance_join\n      - ping: {count: 3}",
			setup:    func(f *fakeLobby) { f.otherPort = true },
			wantRule: RuleUReplySource,
		},
		{
			name:     "instance replies from another port, fail_step",
			flow:     "- create_room\n      - hello\n      - instance_join",
			extra:    "on_violation: fail_step",
			setup:    func(f *fakeLobby) { f.otherPort = true },
			wantRule: RuleUReplySource, wantFail: result.ReasonViolation, failStep: "hello",
		},
		{
			name:     "silent server: timeout after retries",
			flow:     "- list_rooms",
			setup:    func(f *fakeLobby) { f.silent = true },
			wantFail: result.ReasonTimeout, failStep: "list_rooms", wantRetry: 2, waitsOut: true,
		},
		{
			name:     "join failed",
			flow:     "- join: 12345",
			setup:    func(f *fakeLobby) {},
			wantFail: result.ReasonJoinFailed, failStep: "join",
		},
		{
			name: "instance denies",
			flow: "- create_room\n      - hello\n      - instance_join",
			setup: func(f *fakeLobby) {
				f.instHook = func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte {
					if m.Type == udpwire.ClientJoinRequest {
						b, _ := udpwire.AppendEmpty(nil, f.p, udpwire.ServerJoinDeny, m.Seq)
						return b
					}
					return def
				}
			},
			wantFail: result.ReasonJoinDeny, failStep: "instance_join",
		},
		{
			name:  "pong does not echo clientTime, fail_step",
			flow:  "- create_room\n      - ping",
			extra: "on_violation: fail_step",
			setup: func(f *fakeLobby) {
				f.instHook = func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte {
					return udpwire.AppendPong(nil, f.p, m.Seq, m.Value+1)
				}
			},
			wantRule: RuleIPongEcho, wantFail: result.ReasonViolation, failStep: "ping",
		},
		{
			name: "pong does not echo clientTime, continue",
			flow: "- create_room\n      - ping",
			setup: func(f *fakeLobby) {
				f.instHook = func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte {
					return udpwire.AppendPong(nil, f.p, m.Seq, m.Value+1)
				}
			},
			wantRule: RuleIPongEcho,
		},
		{
			name: "created room missing from the next list",
			flow: "- create_room\n      - list_rooms",
			setup: func(f *fakeLobby) {
				f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
					if m.Type == udpwire.LobbyListRooms {
						b, _ := udpwire.AppendRoomList(nil, f.p, m.Seq, nil)
						return b
					}
					return def
				}
			},
			wantRule: RuleUCreatedList,
		},
		{
			name: "room state goes back between two lists",
			flow: "- list_rooms\n      - list_rooms",
			setup: func(f *fakeLobby) {
				n := 0
				f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
					st := udpwire.Playing
					if n++; n > 1 {
						st = udpwire.Waiting
					}
					b, _ := udpwire.AppendRoomList(nil, f.p, m.Seq, []udpwire.Room{{ID: 4, Players: 1, MaxPlayers: 4, Port: 9000, State: st}})
					return b
				}
			},
			wantRule: RuleURoomState,
		},
		{
			name: "room port changes between two lists",
			flow: "- list_rooms\n      - list_rooms",
			setup: func(f *fakeLobby) {
				port := uint16(9000)
				f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
					port++
					b, _ := udpwire.AppendRoomList(nil, f.p, m.Seq, []udpwire.Room{{ID: 4, Players: 1, MaxPlayers: 4, Port: port}})
					return b
				}
			},
			wantRule: RuleURoomPortChanged,
		},
		{
			name:     "every reply sent twice",
			flow:     "- list_rooms\n      - list_rooms\n      - list_rooms",
			setup:    func(f *fakeLobby) { f.dup = true },
			wantRule: RuleUReplyDup,
		},
		{
			// The second reply may answer the retry: stale, not a violation.
			name:     "a retried request answered twice",
			flow:     "- list_rooms\n      - list_rooms",
			waitsOut: true,
			setup: func(f *fakeLobby) {
				n := 0
				f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
					if n++; n == 1 {
						time.Sleep(300 * time.Millisecond) // past the 200 ms timeout: the request is sent again
					}
					return def
				}
			},
		},
		{
			// The harness's own duplication is not the server's.
			name:  "every reply sent twice, under a duplicating impairment",
			flow:  "- list_rooms\n      - list_rooms\n      - list_rooms",
			extra: "impairment: {out: {duplicate: 1%}}",
			setup: func(f *fakeLobby) { f.dup = true },
		},
	}
	// Every rule is judged alike on a socket and on a virtual flow.
	for _, mode := range testFlowsModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					f := newFakeLobby(t, udpwire.ProfileSpec, tc.setup)
					policy := replyPolicy
					if tc.waitsOut {
						policy = fastPolicy
					}
					p := plan(t, policy+"\n"+tc.extra+"\nflows_mode: "+string(mode), "  - steps:\n      "+tc.flow+"\n")
					r := runSessions(t, p, f.addr(), 1, simclient.Options{Tick: time.Millisecond})
					v := r.violations()
					if tc.wantRule != "" && v[tc.wantRule] == 0 {
						t.Errorf("violation %s not counted; got %v", tc.wantRule, v)
					}
					if tc.wantRule == "" && len(v) != 0 {
						t.Errorf("unexpected violations %v", v)
					}
					err := r.errs[0]
					if tc.wantFail == "" {
						if err != nil {
							t.Fatalf("session failed: %v", err)
						}
						return
					}
					if got := simclient.ReasonOf(err); got != tc.wantFail {
						t.Fatalf("failure reason %q (%v), want %q", got, err, tc.wantFail)
					}
					var se *simclient.StepError
					if !errors.As(err, &se) || se.Label != tc.failStep {
						t.Fatalf("failed step %+v, want %s", se, tc.failStep)
					}
					st := r.step(t, tc.failStep)
					if st.FailuresByReason[tc.wantFail] != 1 {
						t.Errorf("step failures %v", st.FailuresByReason)
					}
					if st.Retries != tc.wantRetry {
						t.Errorf("step retries = %d, want %d", st.Retries, tc.wantRetry)
					}
				})
			}
		})
	}
}

// seqPlus answers with the sequence id shifted by d.
func seqPlus(d uint16) func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
	return func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
		if m.Type != udpwire.LobbyListRooms {
			return def
		}
		b, _ := udpwire.AppendRoomList(nil, f.p, m.Seq+d, nil)
		return b
	}
}

func TestRetriesKeepSequence(t *testing.T) {
	drops := 2
	var mu sync.Mutex
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) {
		f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
			mu.Lock()
			defer mu.Unlock()
			if drops > 0 {
				drops--
				return nil
			}
			return def
		}
	})
	// 300 ms: the third send's reply must not be taken for a loss on a
	// loaded machine (a fourth send would fail the test; 30 ms could).
	p := plan(t, "defaults: {timeout: 300ms, retries: 3, retry_interval: 5ms}", "  - steps: [list_rooms]\n")
	r := runSessions(t, p, f.addr(), 1, simclient.Options{Tick: time.Millisecond})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	seqs := f.seqsOf(udpwire.LobbyListRooms)
	if len(seqs) != 3 || seqs[0] != seqs[1] || seqs[1] != seqs[2] {
		t.Fatalf("server saw sequence ids %v, want the same id 3 times", seqs)
	}
	st := r.step(t, "list_rooms")
	if st.Successes != 1 || st.Retries != 2 || st.Requests != 1 {
		t.Fatalf("list_rooms: %d ok, %d retries, %d requests; want 1, 2, 1", st.Successes, st.Retries, st.Requests)
	}
	// The corrected latency includes the two timeouts and pauses.
	if min := 2 * (300 + 5) * time.Millisecond; time.Duration(st.Latency.MaxUS)*time.Microsecond < min {
		t.Errorf("latency %dµs, want ≥ %s", st.Latency.MaxUS, min)
	}
	_ = fmt.Sprint
	_ = strings.Contains
}

// TestCloseDuringRun closes a session blocked on a silent server: Run
// returns promptly and nothing is counted as the server's failure.
func TestCloseDuringRun(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) { f.silent = true })
	p := plan(t, "", "  - steps: [list_rooms]\n")
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, f.addr(), c, simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	fac, _ := simclient.Lookup("udp-lobby")
	s, err := fac(sh, 0, &p.Flows[0], netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Run(context.Background(), time.Time{}) }()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if simclient.ReasonOf(err) != simclient.ReasonCancelled {
			t.Fatalf("Run returned %v, want a cancelled step", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	run, _ := c.Snapshot()
	if run.Totals.Failures != 0 {
		t.Fatalf("failures %+v", run.Totals)
	}
}

// TestPingSeriesIntended: back-to-back pings (interval 0) are each due when
// the previous one was answered, so a server answering every ping after d
// shows a corrected latency of about d for all of them; with an interval
// shorter than d the pings run late on their open schedule and that
// lateness is measured, growing through the series.
func TestPingSeriesIntended(t *testing.T) {
	const delay = 30 * time.Millisecond
	const count = 6
	slowPong := func(f *fakeLobby) {
		f.instHook = func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte {
			if m.Type == udpwire.ClientPing {
				time.Sleep(delay)
			}
			return def
		}
	}
	// Only lower bounds are checked: each pong takes at least delay, so
	// they hold however slow the machine. An upper bound (the closed loop
	// staying near delay) is a wall-clock figure that a loaded machine
	// breaks; the schedule itself is checked exactly by
	// simclient.TestSeriesIntended.
	for _, tc := range []struct {
		interval string
		// lower bound on the ping step's corrected max latency
		min time.Duration
	}{
		// Closed loop: each ping at least delay.
		{interval: "0s", min: delay},
		// Open schedule 10 ms apart: ping k is sent at ≥ k×delay, due at
		// k×10ms, so the last is at least (count-1)×(delay-10ms) late
		// plus delay.
		{interval: "10ms", min: (count-1)*(delay-10*time.Millisecond) + delay},
	} {
		t.Run(tc.interval, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec, slowPong)
			p := plan(t, "", fmt.Sprintf(`
  - name: pinger
    steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - ping: {count: %d, interval: %s, timeout: 5s}
`, count, tc.interval))
			r := runSessions(t, p, f.addr(), 1, simclient.Options{})
			if r.errs[0] != nil {
				t.Fatal(r.errs[0])
			}
			s := r.step(t, "ping")
			if s.Successes != count {
				t.Fatalf("ping successes = %d, want %d", s.Successes, count)
			}
			got := time.Duration(s.Latency.MaxUS) * time.Microsecond
			if got < tc.min {
				t.Errorf("ping corrected max = %v, want ≥ %v", got, tc.min)
			}
			if un := time.Duration(s.Uncorrected.MaxUS) * time.Microsecond; un < delay {
				t.Errorf("ping uncorrected max = %v, want ≥ %v", un, delay)
			}
		})
	}
}

// TestStopSignal: the run's stop signal ends a session in a think time
// (a wait) at once, as cut, not failed; the request before it completed.
func TestStopSignal(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", `
  - name: idler
    steps:
      - list_rooms
      - think: 1h
      - list_rooms
`)
	s, c := oneSession(t, p, f.addr(), simclient.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop, fire := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, fire)
	err := s.Run(simclient.WithStop(ctx, stop), time.Now())
	if !errors.Is(err, simclient.ErrStopped) {
		t.Fatalf("Run = %v, want ErrStopped", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the stop waited for the run's context")
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := played{run: run}
	if got := r.step(t, "list_rooms"); got.Successes != 1 || got.Failures != 0 {
		t.Errorf("list_rooms %d ok %d failed, want 1 and 0", got.Successes, got.Failures)
	}
	if n := f.count(udpwire.LobbyListRooms); n != 1 {
		t.Errorf("server saw %d lists, want 1", n)
	}
}

// TestStopSignalPingSeries: a back-to-back ping series has no pause for the
// stop signal to end, so it is checked between pings.
func TestStopSignalPingSeries(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", `
  - name: pinger
    steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - ping: {count: 1000000, interval: 0s}
`)
	s, c := oneSession(t, p, f.addr(), simclient.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop, fire := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, fire)
	if err := s.Run(simclient.WithStop(ctx, stop), time.Now()); !errors.Is(err, simclient.ErrStopped) {
		t.Fatalf("Run = %v, want ErrStopped", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the series ran until the run's context ended")
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got := (played{run: run}).step(t, "ping"); got.Successes == 0 || got.Failures != 0 {
		t.Errorf("ping %d ok %d failed, want some and 0", got.Successes, got.Failures)
	}
}

// TestInstanceRepliesFromAnotherPort plays a whole match against instances
// that answer (and broadcast) from a second socket: every session
// completes, U-REPLY-SOURCE is counted with a sample naming the port, and
// every request still went to the port the lobby gave (the fake reads
// only there, so a request sent elsewhere would never be answered).
//
// In precise mode (run --precise) the same: the replies the poll path reads
// are judged by the same code.
func TestInstanceRepliesFromAnotherPort(t *testing.T) {
	for _, precise := range []bool{false, true} {
		t.Run(fmt.Sprintf("precise=%v", precise), func(t *testing.T) { testRepliesFromAnotherPort(t, simclient.Options{Precise: precise}) })
	}
}

func testRepliesFromAnotherPort(t *testing.T, opt simclient.Options) {
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) { f.otherPort = true })
	p := plan(t, "defaults: {timeout: 2s, retries: 0}", `
  - name: match
    group_size: 4
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - barrier: {n: 4, timeout: 10s}
      - ready
      - ping: {count: 3}
      - wait_game_start: 10s
`)
	r := runSessions(t, p, f.addr(), 4, opt)
	for i, err := range r.errs {
		if err != nil {
			t.Errorf("session %d: %v", i, err)
		}
	}
	for _, v := range r.run.Violations {
		if v.Rule != RuleUReplySource {
			t.Errorf("unexpected violation %s: %+v", v.Rule, v.Samples)
			continue
		}
		if len(v.Samples) == 0 || !strings.Contains(v.Samples[0].Detail, "came from port") || v.Samples[0].Packet == "" {
			t.Errorf("U-REPLY-SOURCE sample %+v: want the port that answered and the packet's hex", v.Samples)
		}
	}
	// 4 HELLO + 4 JOIN_ACCEPT + 12 PONG replies, and the ALL_READY,
	// 3 COUNTDOWN_TICK and GAME_START events of 4 players.
	if got := r.violations()[RuleUReplySource]; got != 4+4+12+4*5 {
		t.Errorf("U-REPLY-SOURCE counted %d times, want %d (one per datagram)", got, 4+4+12+4*5)
	}
	if got := f.count(udpwire.ClientPing); got != 12 {
		t.Errorf("the instance's own port received %d pings, want 12", got)
	}
}

// TestCutRequestCounted: a request the end of the run cuts short (the
// server never answered; a re-send was under way) counts as one request,
// cut, with its re-sends as retries: the step table adds up (REQS = OK +
// FAIL + CUT) instead of showing REQS 0 beside its retries.
func TestCutRequestCounted(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) { f.silent = true })
	p := plan(t, "defaults: {timeout: 50ms, retries: 100, retry_interval: 1ms}", "  - steps: [list_rooms]\n")
	run := cutSession(t, f, p, func() {
		for i := 0; i < 2000 && f.count(udpwire.LobbyListRooms) < 3; i++ {
			time.Sleep(5 * time.Millisecond)
		}
	})
	for _, series := range []result.Series{played{run: run}.step(t, "list_rooms"), played{run: run}.message("LOBBY_LIST_ROOMS")} {
		if series.Requests != 1 || series.Cut != 1 || series.Successes+series.Failures != 0 || series.Retries < 2 {
			t.Errorf("%s: requests %d, cut %d, ok %d, failed %d, retries %d; want 1 request, cut, with its retries",
				series.Name, series.Requests, series.Cut, series.Successes, series.Failures, series.Retries)
		}
		wantSilent := int64(1) // its attempts timed out unanswered
		if series.Name == "list_rooms" {
			wantSilent = 0 // a step's run does not know its request's wait
		}
		if series.CutSilent != wantSilent {
			t.Errorf("%s: %d cut silent, want %d", series.Name, series.CutSilent, wantSilent)
		}
		if series.Name == "list_rooms" {
			sends := series.Requests + series.Retries
			for i := 0; i < 200 && int64(f.count(udpwire.LobbyListRooms)) < sends; i++ {
				time.Sleep(5 * time.Millisecond) // the fake may not have read the last one yet
			}
			if got := int64(f.count(udpwire.LobbyListRooms)); got != sends {
				t.Errorf("requests + retries = %d, the server received %d sends", sends, got)
			}
		}
	}
	if run.Totals.ErrorRate() != 0 {
		t.Errorf("a cut request counted as an error: rate %v", run.Totals.ErrorRate())
	}
}

// cutSession plays p's first flow as one session against f until wait
// returns, then ends the run (its context cancelled, as the end of a run
// does) and returns what was recorded.
func cutSession(t *testing.T, f *fakeLobby, p *scenario.Plan, wait func()) *result.Run {
	t.Helper()
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, f.addr(), c, simclient.Options{Tick: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	s, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, time.Now()) }()
	wait()
	cancel()
	<-done
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// clientSrc is the source address of this package's test clients: a
// loopback address no other package's tests use, so a datagram that a test
// server in another process (go test runs packages in parallel) sends to a
// port it knew on 127.0.0.1 cannot reach a client here that the kernel gave
// the same port. Such a stray, a Leviathan datagram from the levclient
// tests, once failed TestImpairedFlow as U-REPLY-SOURCE + U-LENGTH under
// .ci/stress-ci.
var clientSrc = netip.MustParseAddr("127.0.77.1")

// TestStrayDatagrams: a sprayer, another socket on the lobby's host, sends
// the client a datagram before each lobby reply. What neither comes from a
// port the target used nor decodes as a reply to one of the client's
// requests is stray: counted for the harness, not against the target. A
// decodable reply to the pending request from that other port is the
// target's (a server answering through a second socket): U-REPLY-SOURCE.
func TestStrayDatagrams(t *testing.T) {
	tests := []struct {
		name      string
		spray     func(m *udpwire.Message, def []byte) []byte
		wantStray bool
		wantRule  string
		only      bool // the lobby's own port stays silent: the sprayed datagram is the only reply
	}{
		{"random bytes", func(*udpwire.Message, []byte) []byte { return []byte("not a lobby datagram at all") }, true, "", false},
		{"a well-formed reply to a sequence id never used", func(m *udpwire.Message, _ []byte) []byte {
			b, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, m.Seq+1000, nil)
			return b
		}, true, "", false},
		{"a request, not a reply", func(m *udpwire.Message, _ []byte) []byte {
			return udpwire.AppendListRooms(nil, udpwire.ProfileSpec, m.Seq)
		}, true, "", false},
		{"the reply itself, from another port", func(_ *udpwire.Message, def []byte) []byte { return def }, false, RuleUReplySource, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) {
				f.spray = tc.spray
				if tc.only {
					f.lobbyHook = func(*fakeLobby, *udpwire.Message, []byte) []byte { return nil }
				}
			})
			p := plan(t, "defaults: {timeout: 2s, retries: 2, retry_interval: 10ms}", "  - steps:\n      - list_rooms\n      - list_rooms\n      - list_rooms\n")
			r := runSessions(t, p, f.addr(), 1, simclient.Options{Tick: time.Millisecond})
			if r.errs[0] != nil {
				t.Fatalf("session failed: %v", r.errs[0])
			}
			v := r.violations()
			if tc.wantRule == "" && len(v) != 0 {
				t.Errorf("violations %v: a stray datagram was charged to the target", v)
			}
			if tc.wantRule != "" && (v[tc.wantRule] == 0 || len(v) != 1) {
				t.Errorf("violations %v, want %s alone", v, tc.wantRule)
			}
			if got := r.stray > 0; got != tc.wantStray {
				t.Errorf("stray datagrams %d, want some: %v", r.stray, tc.wantStray)
			}
		})
	}
}

// A step of one request ends when its reply arrives (Base.FinishAt): the
// step's latencies are its request's, sample for sample. Ending it at a
// later reading of the clock (after the request's own recording) made
// some of them a microsecond longer.
func TestStepEndsAtItsReply(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", "  - name: poll\n    steps: [list_rooms]\n")
	r := runSessions(t, p, f.addr(), 200, simclient.Options{})
	for i, err := range r.errs {
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	step, msg := r.step(t, "list_rooms"), r.message(udpwire.LobbyListRooms.String())
	if step.Successes != 200 || msg.Successes != 200 {
		t.Fatalf("%d steps and %d requests succeeded, want 200 of each", step.Successes, msg.Successes)
	}
	for _, c := range []struct {
		name      string
		step, msg result.Latency
	}{{"latency", step.Latency, msg.Latency}, {"uncorrected", step.Uncorrected, msg.Uncorrected}} {
		if c.step.Hist != c.msg.Hist {
			t.Errorf("%s: the step's histogram differs from its request's: step %+v, request %+v", c.name, c.step, c.msg)
		}
	}
}
