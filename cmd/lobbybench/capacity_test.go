package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/result"
)

// pollScenario is an open-model list_rooms scenario against the embedded
// server, judged by threshold.
func pollScenario(t *testing.T, threshold string) string {
	return writeScenario(t, `name: cap-poll
protocol: udp-lobby
load:
  rate: 10/s
  duration: 2s
defaults:
  timeout: 1s
  retries: 0
flows:
  - name: poll
    steps:
      - list_rooms
thresholds:
  - `+threshold+`
`)
}

func TestCapacityUsage(t *testing.T) {
	sc := pollScenario(t, "list_rooms.errors == 0")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no scenario", nil, "want exactly one SCENARIO.yaml"},
		{"step", []string{"--step", "0s", sc}, "--step"},
		{"precision", []string{"--precision", "1", sc}, "--precision"},
		{"max below start", []string{"--start", "50", "--max", "10", sc}, "--max"},
		{"budget", []string{"--budget", "0s", sc}, "--budget"},
		{"allow-redirect", []string{"--allow-redirect", "any,10.0.0.1", sc}, `--allow-redirect: "any,10.0.0.1": "any" stands alone`},
		{"warmup", []string{"--warmup", "-1s", sc}, "--warmup"},
		{"missing file", []string{filepath.Join(t.TempDir(), "none.yaml")}, "none.yaml"},
		{"json directory", []string{"--json", filepath.Join(t.TempDir(), "no", "c.json"), sc}, "--json"},
		{"loads garbage", []string{"--loads", "10,lots", sc}, `--loads: "lots" (load 2) is not a number`},
		{"loads empty", []string{"--loads", "", sc}, "--loads is empty"},
		{"loads out of order", []string{"--loads", "100,50,200", sc}, "--loads: 50 after 100: loads must increase"},
		{"loads not whole", []string{"--loads", "10,15.5", sc}, "--loads: 15.5 (load 2) is not a whole load"},
		{"loads with start", []string{"--loads", "10,20", "--start", "5", sc}, "--start cannot be used with --loads"},
		{"loads with precision", []string{"--loads", "10,20", "--precision", "0.05", sc}, "--precision cannot be used with --loads"},
		{"shard with workers", []string{"--shard", "0/2", "--workers", "2", "--target", "127.0.0.1:9", sc}, "--shard cannot be used with --workers"},
		{"shard garbage", []string{"--shard", "2/2", sc}, `for --shard: "2/2": i must be 0-1`},
		{"shard without a target", []string{"--shard", "0/2", sc}, "--shard 0/2 needs --target"},
		{"shard with target-cmd", []string{"--shard", "1/2", "--target", "127.0.0.1:9", "--target-cmd", "lobbybench serve", sc}, "--target-cmd cannot be used with --shard"},
		{"shard with precision", []string{"--shard", "1/2", "--target", "127.0.0.1:9", "--precision", "0.05", sc}, "--precision cannot be used with --shard"},
		{"workers garbage", []string{"--workers", "many", sc}, `--workers "many": want a number of processes 1-256 or auto`},
		{"workers zero", []string{"--workers", "0", sc}, "--workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, errs := runCLI(t, append([]string{"capacity"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 || stdout != "" {
				t.Errorf("exit %d, stderr %q: want %d and one line naming %s", code, errs, exitUsage, tc.want)
			}
		})
	}
	// Internal to capacity --workers: a run of its own refuses it.
	code, _, errs := runCLI(t, "run", "--capacity-step", "10:1s", sc)
	if code != exitUsage || !strings.Contains(errs, "--capacity-step is internal to 'capacity --workers'") {
		t.Errorf("run --capacity-step: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, "run", "--worker", "--capacity-step", "10", sc)
	if code != exitUsage || !strings.Contains(errs, `--capacity-step "10": want LOAD:DURATION`) {
		t.Errorf("run --capacity-step 10: exit %d, %q", code, errs)
	}
}

func TestCapacityEmbedded(t *testing.T) {
	// Not parallel: its verdict judges latency and errors at a load,
	// which other tests' load beside it would change.
	dir := t.TempDir()
	for _, tc := range []struct {
		name, threshold string
		args            []string
		code            int
		stop            string
		sustainable     float64
	}{
		{"held up to max", "list_rooms.errors == 0", []string{"--start", "10", "--max", "40"}, exitOK, result.StopMax, 40},
		{"no load held", "list_rooms.count > 1000000", []string{"--start", "4", "--max", "40"}, exitFailed, result.StopNoLoadHeld, 0},
		// A count floor: 4/s sends about 4 requests a step, 40/s about
		// 40. "No load held" would be false, and no limit is found.
		{"a load broke below one that held", "list_rooms.count > 20", []string{"--loads", "4,40"}, exitInconclusive, result.StopNotMonotone, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".json")
			// The verdicts under test are the server's (max reached, no
			// load held): a loaded machine's send lag is not judged
			// (--lag-bound; beside two busy loops a step was once
			// harness-bound, exit 8).
			args := append([]string{"capacity", "--step", "1s", "--warmup", "0s", "--grace", "500ms", "--lag-bound", "10s", "--json", out, "--html", filepath.Join(dir, tc.name+".html")}, tc.args...)
			code, stdout, errs := runCLI(t, append(args, pollScenario(t, tc.threshold))...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, errs)
			}
			if !strings.Contains(errs, "step 1  ") {
				t.Errorf("no progress line per step on stderr: %q", errs)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var c result.Capacity
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			if c.Kind != result.KindCapacity || c.Stop != tc.stop || c.Sustainable != tc.sustainable || !strings.HasPrefix(strings.Join(strings.Fields(stdout), " "), c.Verdict) { // wrapped
				t.Errorf("kind %q stop %q sustainable %v, verdict %q; want %s, %v, and stdout led by the verdict:\n%s", c.Kind, c.Stop, c.Sustainable, c.Verdict, tc.stop, tc.sustainable, stdout)
			}
			for _, s := range c.Steps {
				if s.ServerPeakRSSBytes == 0 {
					t.Errorf("step %v: no server figures from the embedded server", s.Load)
				}
			}
		})
	}
}

func TestCapacityUnreachable(t *testing.T) {
	t.Parallel()
	code, _, errs := runCLI(t, "capacity", "--target", "127.0.0.1:1", "--step", "1s", pollScenario(t, "list_rooms.errors == 0"))
	if code != exitUnreachable {
		t.Errorf("exit %d (%s), want %d", code, errs, exitUnreachable)
	}
}

// TestCapacityOwnsTarget: `capacity --target-cmd` starts `lobbybench
// serve` once, searches against it, and every step says what it cost the
// server.
func TestCapacityOwnsTarget(t *testing.T) {
	// Not parallel: its verdict judges latency and errors at a load,
	// which other tests' load beside it would change.
	addr := freeUDPPort(t)
	js := filepath.Join(t.TempDir(), "c.json")
	sc := writeScenario(t, "name: owned-poll\nprotocol: udp-lobby\ntarget: "+addr+"\ndefaults: {timeout: 1s, retries: 0}\nload: {rate: 10/s, duration: 2s}\nflows:\n  - name: poll\n    steps: [list_rooms]\nthresholds:\n  - list_rooms.errors == 0\n")
	code, stdout, errs := runCLI(t, "capacity", "--quiet", "--target-cmd", serveCmd(t, addr), "--step", "1s", "--warmup", "0s", "--grace", "500ms", "--start", "10", "--max", "20", "--drain", "1s", "--json", js, sc)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var c result.Capacity
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || c.Sustainable != 20 || !strings.Contains(c.Target, "--target-cmd") {
		t.Fatalf("steps %d, sustainable %v, target %q: want 2 steps held up to 20 against the started server", len(c.Steps), c.Sustainable, c.Target)
	}
	for _, s := range c.Steps {
		if s.ServerPeakRSSBytes == 0 || s.Drain != "" {
			t.Errorf("step %v: peak RSS %d, drain %q: want the server's figures and a drained server", s.Load, s.ServerPeakRSSBytes, s.Drain)
		}
	}
}

// TestCapacityInterrupted: Ctrl-C (the context cancelled) ends the search
// with the steps so far written, exit 5. The cancel comes once the first
// step's line is out (the search then goes on to the second), not after
// a wall-clock wait a busy machine could outlast.
func TestCapacityInterrupted(t *testing.T) {
	t.Parallel()
	js := filepath.Join(t.TempDir(), "c.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out strings.Builder
	errw := cancelOn("step 1 ", cancel)
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: errw, getenv: func(string) string { return "" }}
	code := runMain(ctx, e, []string{"capacity", "--step", "1s", "--warmup", "0s", "--grace", "200ms", "--start", "10", "--json", js, pollScenario(t, "list_rooms.errors == 0")})
	stdout, errs := out.String(), errw.String()
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInterrupted, stdout, errs)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var c result.Capacity
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Stop != result.StopInterrupted || c.Status != result.StatusInterrupted || len(c.Steps) == 0 {
		t.Errorf("stop %q status %q, %d steps: want interrupted with the steps before it", c.Stop, c.Status, len(c.Steps))
	}
}

// watched is a stderr that, after each write, hands seen everything
// written so far, until seen returns true.
type watched struct {
	mu   sync.Mutex
	buf  strings.Builder
	seen func(text string) bool
	done bool
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done {
		w.done = w.seen(w.buf.String())
	}
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// cancelOn is a stderr that calls cancel once match has been written.
func cancelOn(match string, cancel func()) *watched {
	return &watched{seen: func(text string) bool {
		if strings.Contains(text, match) {
			cancel()
			return true
		}
		return false
	}}
}

// TestCapacityFlows: capacity --flows plays every step's clients as run's
// does: virtual refused where it cannot run (exit 2, naming the flag),
// auto settled once before the first step and said in one line.
func TestCapacityFlows(t *testing.T) {
	t.Parallel()
	t.Run("refused on tcp-lobby", func(t *testing.T) {
		sc := writeScenario(t, "name: t\nprotocol: tcp-lobby\nload: {rate: 5/s, duration: 1s}\nflows:\n  - name: c\n    steps: [connect]\n")
		code, _, errs := runCLI(t, "capacity", "--flows", "virtual", "--loads", "5", sc)
		if code != exitUsage || !strings.Contains(errs, "lobbybench capacity: --flows virtual: virtual flows are UDP only") {
			t.Errorf("exit %d, stderr %q: want %d naming --flows virtual", code, errs, exitUsage)
		}
	})
	t.Run("auto", func(t *testing.T) {
		if err := vflow.Available(); err != nil {
			t.Skipf("virtual flows cannot run on this machine: %v", err)
		}
		out := filepath.Join(t.TempDir(), "c.json")
		code, stdout, errs := runCLI(t, "capacity", "--flows", "auto", "--loads", "5,10", "--step", "1s", "--warmup", "0s", "--grace", "500ms",
			"--lag-bound", "10s", "--json", out, pollScenario(t, "list_rooms.errors == 0"))
		if code != exitOK {
			t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, errs)
		}
		if n := strings.Count(errs, "lobbybench capacity: flows auto: virtual"); n != 1 {
			t.Errorf("stderr says flows auto: virtual %d times, want once:\n%s", n, errs)
		}
	})
}
