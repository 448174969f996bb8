package capacity

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/testkit/caplobby"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// cappedLobby is the lobby of known capacity the searches are tried on.
type cappedLobby = caplobby.Lobby

// pollPlan is an open-model scenario of one list_rooms a session at
// target, judged by its error rate.
func pollPlan(t *testing.T, target netip.AddrPort) *scenario.Plan {
	t.Helper()
	yaml := fmt.Sprintf(`name: capped-poll
protocol: udp-lobby
target: %s
load:
  rate: 10/s
  duration: 2s
  max_clients: 1000
defaults:
  timeout: 1s
  retries: 0
flows:
  - name: poll
    steps:
      - list_rooms
thresholds:
  - errors.rate < 2%%
`, target)
	path := filepath.Join(t.TempDir(), "capped.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// searchLobby runs a real search against addr with short steps. The
// watchdog is off: a server that drops what it cannot take would fail its
// probes too.
//
// The tests of real searches and ladders run one after another: each
// judges error rates at loads set by its server's token bucket or room
// pool, and a process stalled for a second or more (arrivals dropped
// late, then hurried) fails a step. Run side by side they finished in
// half the time, and one run in seven under a heavily loaded machine
// failed so: the time is not worth a test that fails by chance.
//
// A search the harness could not serve (stopped "harness-bound": its
// arrivals fell behind, and so nothing was learnt of the server) is
// searched again on a fresh server, up to three times: under -race beside
// two busy loops, a stall once dropped a step's starts late and the
// search stopped there. Any other stop is the search's answer.
func searchLobby(t *testing.T, capPerSec, breakAbove, start float64) *reportsCapacity {
	t.Helper()
	var c *reportsCapacity
	for try := 1; try <= 3; try++ {
		c = searchOnce(t, &cappedLobby{CapPerSec: capPerSec, BreakAbove: breakAbove}, start)
		if c.Stop != result.StopHarness {
			break
		}
		t.Logf("search %d stopped harness-bound (%s): nothing learnt of the server; searching again", try, c.StopText)
	}
	return c
}

// searchOnce is one search of searchLobby, against l.
func searchOnce(t *testing.T, l *cappedLobby, start float64) *reportsCapacity {
	t.Helper()
	plan := pollPlan(t, l.Start(t))
	j := DefaultJudgement
	// The server's capacity is the subject, not the harness's: on a
	// shared machine under -race a send lag far over the default bound
	// is the machine's, and the error-rate threshold does not read it.
	j.Warmup, j.LagBound = 0, 10*time.Second
	r := &EngineRunner{Plan: plan, Base: engine.Config{Watchdog: -1, Grace: 500 * time.Millisecond}, Hold: 2 * time.Second, Judge: j,
		Rooms: func(context.Context) (int, error) { return l.Busy(), nil }, Drain: 2 * time.Second, DrainPoll: 50 * time.Millisecond}
	s := Settings{Start: start, Max: 10000, Precision: 0.1, Budget: 2 * time.Minute, StepCost: 2 * time.Second}
	c, err := Search(context.Background(), s, r, time.Now, func(st reportsStep) {
		t.Logf("%v/s: %s %v %s (err %.1f%%, achieved %.1f/s) %s", st.Load, st.Verdict, st.Broke, st.Why, st.ErrorRate*100, st.Throughput, st.Drain)
		if st.Drain != "" {
			t.Errorf("%v/s: %s", st.Load, st.Drain)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSearchFindsServerCapacity(t *testing.T) {
	const R = 50.0
	c := searchLobby(t, R, 0, 35)
	if c.Stop != "precision" {
		t.Fatalf("stopped on %q (%s), want precision", c.Stop, c.StopText)
	}
	if c.Sustainable < 0.9*R || c.Sustainable > 1.1*R {
		t.Errorf("sustainable %v/s, want within 10%% of the server's %v/s", c.Sustainable, R)
	}
	if c.BrokeAt <= c.Sustainable || c.BrokeFirst == "" {
		t.Errorf("broke at %v on %q: want above %v with what broke named", c.BrokeAt, c.BrokeFirst, c.Sustainable)
	}
}

func TestSearchNamesRuleBrokenUnderLoad(t *testing.T) {
	const K = 60.0
	c := searchLobby(t, 0, K, 32)
	// The rule the client's decoder finds broken in badReply.
	var m udpwire.Message
	rule := string(udpwire.Decoder{Profile: udpwire.ProfileSpec, Dir: udpwire.ServerToClient}.DecodeRule(caplobby.BadReply(1), &m))
	if rule == "" {
		t.Fatal("BadReply breaks no rule")
	}
	var row *reportsRule
	for i := range c.Rules {
		if c.Rules[i].Rule == rule {
			row = &c.Rules[i]
		}
	}
	if row == nil {
		t.Fatalf("rules %+v: want %s", c.Rules, rule)
	}
	// Within one step of K: above the highest load that held, at most
	// the next one tried above K.
	if row.FirstLoad <= c.Sustainable || row.FirstLoad < 0.9*K || row.FirstLoad > 1.25*K {
		t.Errorf("%s first broken at %v (held up to %v), want just above %v", row.Rule, row.FirstLoad, c.Sustainable, K)
	}
	for _, st := range c.Steps {
		if st.Load <= 0.9*K && st.Violations[row.Rule] > 0 {
			t.Errorf("%v/s, under %v, broke %s", st.Load, K, row.Rule)
		}
	}
}
