package deploy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// shardScenario is small and open-model: 40 sessions/s for 2 s, so the
// schedule has exactly 80 arrivals whatever the machine's speed.
const shardScenario = `name: shard-merge-test
protocol: udp-lobby
seed: 7
load:
  start_rate: 40/s
  stages:
    - {rate: 40/s, for: 2s}
  max_clients: 200
defaults:
  timeout: 2s
  retries: 1
  retry_interval: 500ms
flows:
  - name: poll
    steps:
      - list_rooms
      - think: {fixed: 20ms}
      - list_rooms
thresholds:
  - list_rooms.count > 0
  - errors.rate < 50%
`

var udpAddrRE = regexp.MustCompile(`udp lobby on (\S+)`)

// startServer runs `lobbybench serve` on a free loopback port and returns
// its UDP lobby address; the process is killed (by its PID) at cleanup.
func startServer(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--udp-addr", "127.0.0.1:0", "--no-tcp", "--no-leviathan", "--base-port", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := udpAddrRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no udp lobby address within 30s")
		return ""
	}
}

type procResult struct {
	code           int
	stdout, stderr string
}

func runBin(ctx context.Context, bin string, args ...string) procResult {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return procResult{code, out.String(), errb.String()}
}

func readRun(t *testing.T, path string) *result.Run {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.ReadRun(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// TestShardsMergeLikeOneRun runs one scenario as 3 concurrent
// `lobbybench run --shard i/3` processes against one server, merges their
// results with `lobbybench report merge`, and checks the merge against
// the shards (exact sums, exact histogram merge) and against an unsharded
// run of the same scenario (the shards together start exactly its
// sessions).
func TestShardsMergeLikeOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs several lobbybench processes for a few seconds")
	}
	bin := lobbybench(t)
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(scen, []byte(shardScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	target := startServer(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const n = 3
	res := make([]procResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = runBin(ctx, bin, "run", "--quiet", "--shard", fmt.Sprintf("%d/%d", i, n), "--target", target,
				"--json", filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)), scen)
		}()
	}
	wg.Wait()
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("shard %d exited %d:\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	single := runBin(ctx, bin, "run", "--quiet", "--target", target, "--json", filepath.Join(dir, "single.json"), scen)
	if single.code != 0 {
		t.Fatalf("unsharded run exited %d:\n%s", single.code, single.stderr)
	}

	merged := filepath.Join(dir, "merged.json")
	args := []string{"report", "merge", "-o", merged}
	for i := range n {
		args = append(args, filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)))
	}
	mr := runBin(ctx, bin, args...)
	if mr.code != 0 {
		t.Fatalf("report merge exited %d:\n%s", mr.code, mr.stderr)
	}
	if !strings.Contains(mr.stderr, words.Count(n, "shard")) || !strings.Contains(mr.stderr, "thresholds 2/2 passed") {
		t.Errorf("merge summary: %q", mr.stderr)
	}

	m := readRun(t, merged)
	one := readRun(t, filepath.Join(dir, "single.json"))
	var shards []*result.Run
	var sum result.Totals
	for i := range n {
		s := readRun(t, filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)))
		shards = append(shards, s)
		sum.Requests += s.Totals.Requests
		sum.Failures += s.Totals.Failures
		sum.SessionsStarted += s.Totals.SessionsStarted
		if s.Totals.SessionsStarted == 0 || s.Totals.SessionsStarted == one.Totals.SessionsStarted {
			t.Errorf("shard %d started %d sessions: not a share of %d", i, s.Totals.SessionsStarted, one.Totals.SessionsStarted)
		}
	}
	if m.Shards != n || m.Totals.Requests != sum.Requests || m.Totals.Failures != sum.Failures || m.Totals.SessionsStarted != sum.SessionsStarted {
		t.Errorf("merged shards %d totals %+v, want %d and the shards' sums %+v", m.Shards, m.Totals, n, sum)
	}
	if m.Totals.SessionsStarted != one.Totals.SessionsStarted || m.Totals.SessionsStarted != 80 {
		t.Errorf("shards together started %d sessions, the unsharded run %d, the schedule 80", m.Totals.SessionsStarted, one.Totals.SessionsStarted)
	}
	// A failed step ends its session early, so request counts only match
	// when nothing failed (on a loaded machine a 2 s timeout can fire).
	if m.Totals.Failures == 0 && one.Totals.Failures == 0 && m.Totals.Requests != one.Totals.Requests {
		t.Errorf("shards together made %d requests, the unsharded run %d", m.Totals.Requests, one.Totals.Requests)
	}
	// The merged histogram is the exact merge of the shards' histograms.
	want, err := result.Merge(shards...)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range m.Steps {
		if s.Latency != want.Steps[i].Latency || s.Latency.Count != s.Successes {
			t.Errorf("step %s latency %+v, want %+v", s.Name, s.Latency, want.Steps[i].Latency)
		}
	}
	if len(m.Thresholds) != 2 {
		t.Errorf("merged thresholds %+v, want the 2 of the scenario judged again", m.Thresholds)
	}

	// The merged result renders and compares like any run.
	if r := runBin(ctx, bin, "report", "html", merged, filepath.Join(dir, "single.json"), "-o", filepath.Join(dir, "r.html")); r.code != 0 {
		t.Errorf("report html exited %d: %s", r.code, r.stderr)
	}
	if r := runBin(ctx, bin, "report", "compare", filepath.Join(dir, "single.json"), merged, "--max-p99-increase", "off", "--max-error-rate-increase", "off"); r.code != 0 {
		t.Errorf("report compare exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
}
