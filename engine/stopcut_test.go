package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestStopCutsInFlight: a request the lobby dropped, still awaited when
// the run ends, is counted cut, whether its client holds its goroutine
// in the wait or gave it up (Shared.SuspendWaits, forced here below
// simclient.SuspendWaitsFrom clients), as a built-in step or as a script;
// so is a scripted send whose expect the end of the run came before. The
// embedded lobby answers one request a second from the one source
// address: of the 30 clients' first requests, 29 or more are dropped (all
// 30 sends are cut in the last row, whose expect never runs). A wait
// given up, or a send before a think, was counted nowhere: 2,000 clients
// whose requests the lobby dropped read "ok 380, failed 0, cut 0" and
// passed.
func TestStopCutsInFlight(t *testing.T) {
	for _, tc := range []struct {
		name, steps string
		waits       bool
		cut         int64
	}{
		{"built-in", "[list_rooms]", false, 29},
		{"built-in, waits given up", "[list_rooms]", true, 29},
		{"scripted", "[{send: LOBBY_LIST_ROOMS}, {expect: LOBBY_ROOM_LIST}]", false, 29},
		{"scripted, waits given up", "[{send: LOBBY_LIST_ROOMS}, {expect: LOBBY_ROOM_LIST}]", true, 29},
		{"scripted, stopped before the expect", "[{send: LOBBY_LIST_ROOMS}, {think: 10s}, {expect: LOBBY_ROOM_LIST}]", true, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // waits out its run
			plan, err := scenario.Parse("test.yaml", []byte(`
protocol: udp-lobby
seed: 1
source_addrs: 127.0.0.2
embedded_server: {rate_limit: 1/s, rate_burst: 1}
defaults: {timeout: 10s}
load: {model: closed, clients: 30, duration: 3s}
flows:
  - name: poll
    steps: `+tc.steps+`
`))
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Plan: plan}
			cfg.Client.SuspendWaits = tc.waits
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(res.Messages, func(m result.Series) bool { return m.Name == "LOBBY_LIST_ROOMS" })
			if i < 0 {
				t.Fatalf("no LOBBY_LIST_ROOMS in %+v", res.Messages)
			}
			m := res.Messages[i] // a think counts as a step's request: the message's are the lobby's
			if m.Requests < 30 || m.Failures != 0 || m.Cut < tc.cut || m.Requests != m.Successes+m.Cut {
				t.Errorf("LOBBY_LIST_ROOMS: requests %d (ok %d, failed %d %v, cut %d): want each of the 30 clients' requests counted, %d or more cut",
					m.Requests, m.Successes, m.Failures, m.FailuresByReason, m.Cut, tc.cut)
			}
			gate := slices.IndexFunc(res.Thresholds, func(th result.ThresholdResult) bool { return th.Metric == "cut_silent.rate" })
			if gate < 0 || res.Thresholds[gate].Pass {
				t.Errorf("thresholds %+v: requests the lobby dropped, want the cut_silent gate to fail the run", res.Thresholds)
			}
		})
	}
}
