package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/vflow"
	reflev "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	reftcp "github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// keptSession is a fake session that remembers whether it was closed.
type keptSession struct {
	fakeSession
	mu     *sync.Mutex
	closed *int
}

func (k *keptSession) Close() error {
	k.mu.Lock()
	*k.closed++
	k.mu.Unlock()
	return nil
}

// TestClosedKeepsSessions: a closed-model client hands each completed
// session to the next start (Start.Prev) instead of closing it, but not a
// failed one, not to a flow with NewSocket, and closes the last at the
// end; the open model never does.
func TestClosedKeepsSessions(t *testing.T) {
	tests := []struct {
		name      string
		plan      func() *scenario.Plan
		fail      bool
		wantPrev  bool
		newSocket bool
	}{
		{"closed: kept", func() *scenario.Plan { return closedPlan(2, nil, time.Second, 2) }, false, true, false},
		{"closed, failed sessions: not kept", func() *scenario.Plan { return closedPlan(2, nil, time.Second, 2) }, true, false, false},
		{"closed, new_socket: not kept", func() *scenario.Plan { return closedPlan(2, nil, time.Second, 2) }, false, false, true},
		{"open: never", func() *scenario.Plan { return openPlan(20, nil, time.Second, 100) }, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest(t, func(t *testing.T) {
				var mu sync.Mutex
				closed, made, withPrev := 0, 0, 0
				plan := tc.plan()
				plan.Flows[0].NewSocket = tc.newSocket
				newS := func(s Start) (Session, error) {
					mu.Lock()
					defer mu.Unlock()
					made++
					if s.Prev != nil {
						withPrev++
						return s.Prev, nil // the factory reuses it
					}
					var err error
					if tc.fail {
						err = errors.New("boom")
					}
					// 100ms sessions: each is done well after the 1ms a
					// failure needs to count as immediate.
					return &keptSession{fakeSession: fakeSession{length: 100 * time.Millisecond, err: err}, mu: &mu, closed: &closed}, nil
				}
				if _, _, err := Execute(context.Background(), Options{Plan: plan, New: newS}, nil); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				opened := made - withPrev
				if (withPrev > 0) != tc.wantPrev || closed != opened {
					t.Errorf("%d sessions started, %d on the previous one, %d opened, %d closed: want reuse %v and every opened one closed once",
						made, withPrev, opened, closed, tc.wantPrev)
				}
				if tc.wantPrev && opened != 2 {
					t.Errorf("%d sessions opened, want one per client (2)", opened)
				}
			})
		})
	}
}

// TestClosedKeepsConnections: against the embedded reference server, a
// closed-model tcp-lobby or Leviathan poller opens one connection per
// client for the run (2 s: long enough for two sessions per client on a
// busy machine; the server counts at most one more, the
// reachability check's, and the watchdog's probes), however many sessions
// it plays; with new_socket every session opens its own.
func TestClosedKeepsConnections(t *testing.T) {
	waitsInParallel(t)
	const clients = 3
	tests := []struct {
		proto, steps string
		newSocket    bool
	}{
		{"tcp-lobby", "[connect, list]", false},
		{"tcp-lobby", "[connect, list]", true},
		{"leviathan", "[connect, echo]", false},
		{"leviathan", "[connect, echo]", true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s new_socket %v", tc.proto, tc.newSocket), func(t *testing.T) {
			waitsInParallel(t)
			y := fmt.Sprintf("protocol: %s\nload: {model: closed, clients: %d, duration: 2s}\nflows:\n  - name: poll\n    new_socket: %v\n    steps: %s\n",
				tc.proto, clients, tc.newSocket, tc.steps)
			plan, err := scenario.Parse("test.yaml", []byte(y))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Config{Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Engine.Sessions
			if s.Failed != 0 || s.Completed < 2*clients {
				t.Fatalf("sessions %+v: want none failed and at least two per client", s)
			}
			var conns int64
			switch st := res.Engine.Server.Stats; {
			case reftcp.StatsOf(st) != nil:
				conns = int64(reftcp.StatsOf(st).ConnsAccepted)
			case reflev.StatsOf(st) != nil:
				conns = int64(reflev.StatsOf(st).ConnsOpened)
			}
			if tc.newSocket {
				// Every completed session logged in on a connection of its
				// own (one cut at the end may not have reached the server).
				if conns < s.Completed {
					t.Errorf("%d connections for %d completed sessions with new_socket: want one per session", conns, s.Completed)
				}
			} else if conns > clients+1+res.Engine.Watchdog.Probes+1 {
				// +1: a probe the end of the run cut is not counted
				// among the watchdog's probes, but it may have connected.
				t.Errorf("%d connections for %d sessions of %d clients: want one per client (and the reachability check's, and %d watchdog probes, and one the end cut)", conns, s.Started, clients, res.Engine.Watchdog.Probes)
			}
		})
	}
}

// TestRunSuspendedWaits: against the embedded reference server, udp-lobby
// clients that give up their goroutine in their waits for replies and for
// their group's room (Shared.SuspendWaits, forced here below
// simclient.SuspendWaitsFrom clients) play their flows as parked clients
// do: no failure, no violation, no retry, every ping answered; and they
// did suspend in waits, on their sockets or, where this machine allows
// virtual flows, on their flows.
//
// A tcp-lobby client suspends only in its wait for the group's room, and
// its join goes on as well: no join is refused, not even one in flight
// when the run's end cut its leader.
func TestRunSuspendedWaits(t *testing.T) {
	flows := map[string]string{
		"udp-lobby": `
      - create_room: {only: leader}
      - join: {room: created, only: members}
      - hello
      - instance_join
      - ping: {count: 5, interval: 20ms}
      - list_rooms
`,
		"tcp-lobby": `
      - connect: {name: bench}
      - create: {only: leader}
      - join: {room: created, only: members}
      - barrier: 4
      - list
`,
	}
	type row struct {
		proto, flows string
		waits        bool
	}
	rows := []row{{"udp-lobby", "sockets", false}, {"udp-lobby", "sockets", true}, {"tcp-lobby", "", false}, {"tcp-lobby", "", true}}
	if err := vflow.Available(); err == nil {
		rows = append(rows, row{"udp-lobby", "virtual", false}, row{"udp-lobby", "virtual", true})
	} else {
		t.Logf("virtual flows unavailable here: %v", err)
	}
	for _, tc := range rows {
		waits := tc.waits
		t.Run(fmt.Sprintf("%s %s SuspendWaits %v", tc.proto, tc.flows, waits), func(t *testing.T) {
			mode := ""
			if tc.flows != "" {
				mode = "flows_mode: " + tc.flows + "\n"
			}
			plan, err := scenario.Parse("test.yaml", []byte(`
protocol: `+tc.proto+`
`+mode+`seed: 1
load: {model: closed, clients: 24, duration: 1s}
flows:
  - name: pinger
    group_size: 4
    new_socket: true
    steps:`+flows[tc.proto]))
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Plan: plan}
			cfg.Client.SuspendWaits = waits
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Engine.Sessions
			// No join is refused: at the end of the run a leader cut in
			// its barrier keeps its connection, and so its room, until
			// the members' joins in flight are answered (closeLater).
			if s.Failed != 0 || s.Completed < 24 || res.Totals.Failures != 0 || res.Totals.Violations != 0 || res.Totals.Retries != 0 {
				for _, st := range res.Steps {
					t.Logf("%s: %+v", st.Name, st.FailuresByReason)
				}
				t.Fatalf("sessions %+v, failures %d, violations %d, retries %d: want every client through its flow cleanly",
					s, res.Totals.Failures, res.Totals.Violations, res.Totals.Retries)
			}
			if (s.WaitsSuspended > 0) != waits {
				t.Errorf("%d waits suspended, want some: %v", s.WaitsSuspended, waits)
			}
		})
	}
}
