package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/result"
)

// pollYAML is n clients, ramped in over ramp, each polling the room list
// every interval for hold after the ramp.
func pollYAML(n int, ramp, hold, interval time.Duration) string {
	return fmt.Sprintf(`name: poll-%d
protocol: udp-lobby
seed: 1
load:
  model: closed
  start_clients: 0
  stages:
    - {clients: %d, for: %s}
    - {clients: %d, for: %s}
flows:
  - name: poll
    steps: [list_rooms, {think: %s}]
`, n, n, ramp, n, hold, interval)
}

// workersRun runs n polling clients through `lobbybench run --workers`
// (bin) against the serve at lobby and prints the summed harness RSS per
// client, the request rate, failures and the share of the expected polls.
func workersRun(bin, lobby string, n, workers int, hold, interval time.Duration) error {
	dir, err := os.MkdirTemp("", "benchrun-workers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ramp := 5 * time.Second
	sc, out := filepath.Join(dir, "poll.yaml"), filepath.Join(dir, "result.json")
	if err := os.WriteFile(sc, []byte(pollYAML(n, ramp, hold, interval)), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(bin, "run", "--workers", strconv.Itoa(workers), "--quiet", "--target", lobby, "--json", out, sc)
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	runErr := cmd.Run() // exit codes are read from the result below
	b, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("no merged result (%v): %v", runErr, err)
	}
	var doc struct {
		result.Run
		Engine engine.Info `json:"engine"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	var ok, failed int64
	for _, s := range doc.Steps {
		ok += s.Successes
		failed += s.Failures
	}
	// A client started at t polls at t, t+interval, … before the end:
	// clients start evenly over the ramp, so on average it lives half the
	// ramp plus the hold, and polls once more than that over the interval
	// (half a poll on average).
	expected := float64(n) * ((ramp.Seconds()/2+hold.Seconds())/interval.Seconds() + 0.5)
	h := doc.Engine.Harness
	fmt.Printf("workers run: %d clients through --workers %d, polling every %v for %v after a %v ramp, against serve in another process\n",
		n, workers, interval, hold, ramp)
	fmt.Printf("  exit %d; harness peak RSS summed over the processes %.1f MiB = %.1f KB per client (aim ≤ 8 KB)\n",
		cmd.ProcessState.ExitCode(), float64(h.PeakRSSBytes)/(1<<20), float64(h.PeakRSSBytes)/1024/float64(n))
	fmt.Printf("  polls ok %d (%.0f%% of the %.0f expected, aim ≥ 80%%), %.0f req/s, failed %d, failed sessions %d (failed starts %d), %.1f CPU-s\n",
		ok, 100*float64(ok)/expected, expected, float64(ok)/doc.DurationNS.Seconds(), failed, doc.Engine.Sessions.Failed,
		doc.Engine.Sessions.FailedStarts, h.CPUSeconds)
	for _, why := range doc.Incomplete {
		fmt.Printf("  INCOMPLETE: %s\n", why)
	}
	return nil
}
