package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunWarnsFirstRefusal: a run whose requests are refused says so once,
// with what the server answered and the hint (against the embedded server:
// every join names a room that does not exist).
func TestRunWarnsFirstRefusal(t *testing.T) {
	plan := mustPlan(t, `
protocol: udp-lobby
seed: 1
load: {rate: 20/s, duration: 500ms, max_clients: 20}
flows:
  - name: j
    steps:
      - join: 12345
`)
	var warn bytes.Buffer
	res, err := Run(context.Background(), Config{Plan: plan, Warnings: &warn})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Totals.FailuresByReason["join_failed"]; n != 10 {
		t.Fatalf("%d join_failed, want 10; warnings %q", n, warn.String())
	}
	var refused []string
	for line := range strings.Lines(warn.String()) {
		if strings.Contains(line, "refused") {
			refused = append(refused, line)
		}
	}
	if len(refused) != 1 || !strings.Contains(refused[0], "step 1 (join): join_failed: the server answered LOBBY_JOIN_FAILED to LOBBY_JOIN_ROOM: the room is missing") {
		t.Errorf("warnings %q: want one line naming the first refusal", warn.String())
	}
}
