package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// writeScenario writes a scenario file into a temp dir and returns its path.
func writeScenario(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCLICtx is runCLI with a context (to interrupt the run).
func runCLICtx(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runMain(ctx, e, args)
	return code, out.String(), errb.String()
}

// shortRun is a fast udp-lobby scenario against the embedded server.
const shortRun = `
protocol: udp-lobby
seed: 3
load: {rate: 40/s, duration: 500ms, max_clients: 100}
flows:
  - name: room
    group_size: 2
    steps:
      - create_room: {only: leader}
      - join: {room: created, only: members}
      - hello
      - instance_join
      - ping: {count: 3, interval: 5ms}
      - leave
thresholds:
  - violations == 0
  - ping.count > 0
`

func TestRunUsageErrors(t *testing.T) {
	good := writeScenario(t, shortRun)
	tests := []struct {
		name   string
		args   []string
		stderr *regexp.Regexp // every stderr line must match
		want   string         // substring of stderr
	}{
		{"no scenario", []string{"run"}, nil, "want exactly one SCENARIO.yaml"},
		{"missing file", []string{"run", "/nonexistent/x.yaml"}, nil, "no such file"},
		{"bad shard", []string{"run", "--shard", "3/3", good}, nil, "-shard"},
		{"bad rate", []string{"run", "--rate", "fast", good}, nil, "-rate"},
		{"bad allow-redirect", []string{"run", "--allow-redirect", "10.0.0.1,", good}, nil, "--allow-redirect: \"10.0.0.1,\" has an empty host"},
		{"rate on closed", []string{"run", "--rate", "2x", writeScenario(t, strings.Replace(shortRun, "rate: 40/s", "clients: 2", 1))}, nil, "--rate applies to an open-model scenario"},
		{"bad target", []string{"run", "--target", "nope", good}, nil, "--target"},
		{"bad instance ports", []string{"run", "--instance-ports", "9063-9000", good}, nil, "--instance-ports: "},
		{"instance ports on tcp-lobby", []string{"run", "--instance-ports", "9000-9063", writeScenario(t, "protocol: tcp-lobby\nload: {rate: 1/s, duration: 1s}\nflows: [{steps: [list_rooms]}]\n")}, nil,
			"--instance-ports applies to udp-lobby only, not tcp-lobby"},
		{"json dir missing", []string{"run", "--json", "/nonexistent/dir/r.json", good}, nil, "--json"},
		{"html dir missing", []string{"run", "--html", "/nonexistent/dir/r.html", good}, nil, "--html"},
		{"markdown dir missing", []string{"run", "--markdown", "/nonexistent/dir/r.md", good}, nil, "--markdown: directory of"},
		{"bad metrics address", []string{"run", "--quiet", "--metrics-addr", "256.1.1.1:x", good}, nil, "--metrics-addr"},
		{"bad dashboard address", []string{"run", "--quiet", "--dashboard-addr", "256.1.1.1:x", good}, regexp.MustCompile(`^lobbybench run: --dashboard-addr: .+$`), "--dashboard-addr: "},
		{"dashboard address without a port", []string{"run", "--dashboard-addr", "localhost", good}, regexp.MustCompile(`^lobbybench run: --dashboard-addr: .+$`), "missing port"},
		{"linger with nothing served", []string{"run", "--serve-linger", "5s", good}, nil, "--serve-linger 5s needs --metrics-addr or --dashboard-addr"},
		{"negative max clients", []string{"run", "--max-clients", "-1", good}, nil, "--max-clients"},
		{"zero max clients", []string{"run", "--max-clients", "0", good}, nil, "--max-clients 0 must be at least 1"},
		{"zero duration", []string{"run", "--duration", "0s", good}, nil, "--duration must be above 0"},
		{"zero clients", []string{"run", "--clients", "0", good}, nil, "--clients 0 is outside"},
		{"zero grace", []string{"run", "--grace", "0s", good}, nil, "--grace 0s must be above 0"},
		{"negative grace", []string{"run", "--grace", "-1s", good}, nil, "--grace -1s must be above 0"},
		{"broken scenario", []string{"run", writeScenario(t, "protocol: udp-lobby\nlaod: {rate: 1/s}\nflows:\n  - steps: [frobnicate]\n")},
			regexp.MustCompile(`^.*s\.yaml(:\d+)?: .+$`), `:2: unknown key "laod"`},
		{"unknown threshold metric", []string{"run", writeScenario(t, shortRun+"  - pign.p99 < 10ms\n")},
			regexp.MustCompile(`^.*s\.yaml:\d+: .+$`), `unknown metric "pign.p99"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q lacks %q", errs, tc.want)
			}
			if out != "" {
				t.Errorf("stdout %q: nothing should run", out)
			}
			if tc.stderr != nil {
				for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
					if !tc.stderr.MatchString(line) {
						t.Errorf("stderr line %q is not file:line: message", line)
					}
				}
			}
		})
	}
}

// TestRunEmbedded is a short real run: embedded server, real UDP clients,
// JSON, JUnit, Markdown and HTML written, exit 0.
func TestRunEmbedded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, ju, ht, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	code, out, errs := runCLI(t, "run", "--quiet", "--json", js, "--junit", ju, "--html", ht, "--markdown", md, "--metrics-addr", "127.0.0.1:0", writeScenario(t, shortRun))
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s\nstdout %s", code, errs, out)
	}
	// The send-lag warning depends on how busy the machine is (timing,
	// not asserted here); anything else on stderr is a fault.
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if line != "" && !strings.HasPrefix(line, "lobbybench run: warning: the harness sent late") {
			t.Errorf("--quiet run wrote to stderr: %q", line)
		}
	}
	assertNarrow(t, out)
	for _, want := range []string{"ping", "Sessions: 20 started, 20 completed", "Harness: peak RSS", "Embedded server:"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(js)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := result.ReadRun(f)
	if err != nil {
		t.Fatal(err)
	}
	// The scenario's two and the default gates.
	if run.Totals.SessionsStarted != 20 || run.Totals.Failures != 0 || len(run.Thresholds) != 4 || !run.Thresholds[2].Default || !run.Thresholds[3].Default {
		t.Errorf("JSON totals %+v, thresholds %+v", run.Totals, run.Thresholds)
	}
	if x, err := os.ReadFile(ju); err != nil || !bytes.Contains(x, []byte("<testsuites")) {
		t.Errorf("JUnit: %v %.200s", err, x)
	}
	if x, err := os.ReadFile(ht); err != nil || !bytes.Contains(x, []byte("<svg")) {
		t.Errorf("HTML: %v %.200s", err, x)
	}
	if x, err := os.ReadFile(md); err != nil || !bytes.HasPrefix(x, []byte("**PASS · all 4 thresholds passed**\n")) || !bytes.Contains(x, []byte("| ping |")) {
		t.Errorf("Markdown: %v %.300s", err, x)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d files in the output directory, want the 4 results (a temporary file left behind?)", len(ents))
	}
}

// TestRunInterruptedWritesJSON cancels a long run: exit 5, JSON written
// with what was measured, and every other format led by INTERRUPTED.
func TestRunInterruptedWritesJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, ju, md, ht := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	long := strings.Replace(shortRun, "duration: 500ms", "duration: 1h", 1)
	// Ctrl-C once the live metrics count a session started, not after a
	// wall-clock wait that a busy machine's setup could outlast (CI's race
	// phase once did: no session had started).
	found := make(chan string, 1)
	errw := &watched{seen: func(text string) bool {
		m := liveMetricsRE.FindStringSubmatch(text)
		if m != nil {
			found <- m[1]
		}
		return m != nil
	}}
	type ran struct {
		code int
		out  string
	}
	done := make(chan ran, 1)
	go func() {
		var out bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: errw, getenv: func(string) string { return "" }}
		code := runMain(ctx, e, []string{"run", "--metrics-addr", "127.0.0.1:0", "--grace", "200ms", "--json", js, "--junit", ju, "--markdown", md, "--html", ht, writeScenario(t, long)})
		done <- ran{code, out.String()}
	}()
	select {
	case url := <-found:
		for ctx.Err() == nil && scrape(t, url)["lobbybench_sessions_started_total"] == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	case r := <-done:
		t.Fatalf("the run ended (exit %d) before serving its metrics:\n%s", r.code, errw.String())
	}
	cancel()
	r := <-done
	code, out, errs := r.code, r.out, errw.String()
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitInterrupted, errs)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Totals result.Totals `json:"totals"`
		Engine struct {
			Interrupted bool `json:"interrupted"`
		} `json:"engine"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || !doc.Engine.Interrupted || doc.Totals.SessionsStarted == 0 {
		t.Errorf("JSON %v: %+v", err, doc)
	}
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, "INTERRUPTED · the run was stopped") {
		t.Errorf("terminal: first line %q", first)
	}
	for _, f := range []struct{ path, lead, before string }{
		{md, "**INTERRUPTED · the run was stopped", ""},
		{ju, `<error message="INTERRUPTED · the run was stopped`, "lobbybench.thresholds"},
		{ht, `<p class="status interrupted">INTERRUPTED · the run was stopped`, "<svg"},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, f.lead)
		if f.before == "" && i != 0 || i < 0 || f.before != "" && strings.Index(s, f.before) < i {
			t.Errorf("%s: %q at %d, not first:\n%.400s", filepath.Base(f.path), f.lead, i, s)
		}
	}
}

// TestRunUnreachable: a target nobody listens on exits 3 and says so
// (its result files: TestNotStartedReplacesStaleFiles).
func TestRunUnreachable(t *testing.T) {
	code, _, errs := runCLI(t, "run", "--quiet", "--target", "127.0.0.1:9", writeScenario(t, shortRun))
	if code != exitUnreachable || !strings.Contains(errs, "unreachable") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestRunThresholdBreached: a failing threshold exits 4.
func TestRunThresholdBreached(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, "run", "--quiet", writeScenario(t, shortRun+"  - ping.p50 > 1h\n"))
	if code != exitThreshold {
		t.Errorf("exit %d, want %d; stderr %s\n%s", code, exitThreshold, errs, out)
	}
}

// TestRunEmbeddedTCP runs a tcp-lobby scenario against the embedded TCP
// lobby: the same pipeline with the other protocol's clients.
func TestRunEmbeddedTCP(t *testing.T) {
	t.Parallel()
	sc := `
protocol: tcp-lobby
load: {rate: 20/s, duration: 500ms}
flows:
  - name: browse
    steps: [connect, list, disconnect]
thresholds:
  - list.count == 10
  - errors.count == 0
`
	code, out, errs := runCLI(t, "run", "--quiet", writeScenario(t, sc))
	if code != exitOK || !strings.Contains(out, "tcp-lobby, open model") {
		t.Errorf("exit %d; stderr %s\n%s", code, errs, out)
	}
}

// TestRunEmbeddedLeviathan runs a leviathan scenario against the embedded
// Leviathan endpoint.
func TestRunEmbeddedLeviathan(t *testing.T) {
	t.Parallel()
	sc := `
protocol: leviathan
load: {rate: 20/s, duration: 500ms}
flows:
  - name: joiner
    steps: [connect, join_server, close]
thresholds:
  - join_server.count == 10
`
	code, out, errs := runCLI(t, "run", "--quiet", writeScenario(t, sc))
	if code != exitOK || !strings.Contains(out, "leviathan, open model") || !strings.Contains(out, "leviathan.players: joined=10") {
		t.Errorf("exit %d; stderr %s\n%s", code, errs, out)
	}
}

// TestRunFailedStartsExit: a closed scenario with more clients than the
// process's open-files limit (lowered to 64 in a real process) says
// before it sends anything that it cannot fit, names the limit and
// --workers at the first failed start, counts the failed starts in the
// JSON and exits 6 although no threshold failed.
func TestRunFailedStartsExit(t *testing.T) {
	t.Parallel()
	sc := `
protocol: udp-lobby
load: {model: closed, clients: 100, duration: 500ms}
flows:
  - name: poll
    steps: [list_rooms, {think: 100ms}]
embedded_server: {max_instances: 1}
`
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	cmd := lobbybenchCmd(t, []string{nofileEnv + "=64"}, "run", "--quiet", "--json", jsonPath, writeScenario(t, sc))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	errs := errb.String()
	code := cmd.ProcessState.ExitCode()
	if code != exitIncomplete {
		t.Errorf("exit %d (%v), want %d; stderr %s", code, err, exitIncomplete, errs)
	}
	for _, want := range []string{"against an open-files limit (RLIMIT_NOFILE) of 64", "too many open files (RLIMIT_NOFILE 64 per process)", "--workers", "could not open their socket"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if n := strings.Count(errs, "a client could not open a socket"); n != 1 {
		t.Errorf("the first failed start is announced %d times, want once:\n%s", n, errs)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sessions struct {
			Failed       int64 `json:"failed"`
			FailedStarts int64 `json:"failed_starts"`
		} `json:"sessions"`
		Totals result.Totals `json:"totals"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Sessions.FailedStarts == 0 ||
		doc.Totals.FailuresByReason["too_many_open_files"] != doc.Sessions.FailedStarts {
		t.Errorf("JSON sessions %+v, failures %v (%v): want the failed starts counted under too_many_open_files", doc.Sessions, doc.Totals.FailuresByReason, err)
	}
}

// TestRunPrecise: --precise is accepted and said once: what it does for
// udp-lobby (and, as these runs are embedded, that it costs the embedded
// server), that it does nothing for the other protocols.
func TestRunPrecise(t *testing.T) {
	tcp := "protocol: tcp-lobby\nload: {rate: 20/s, duration: 300ms}\nflows:\n  - name: b\n    steps: [connect, list, disconnect]\n"
	for _, tc := range []struct {
		name, scenario, want string
	}{
		{"udp-lobby", shortRun, simclient.PreciseNote(udpwire.ProtocolName, true)},
		{"tcp-lobby", tcp, "--precise affects udp-lobby clients only: this tcp-lobby run is measured as without it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "run", "--quiet", "--precise", writeScenario(t, tc.scenario))
			if code != exitOK {
				t.Fatalf("exit %d; stderr %s\n%s", code, errs, out)
			}
			if n := strings.Count(errs, "lobbybench run: "+tc.want+"\n"); n != 1 {
				t.Errorf("stderr says %q %d times, want once:\n%s", tc.want, n, errs)
			}
		})
	}
}

// TestRunNoSpin: --no-spin is accepted and recorded in the result's JSON
// (engine.no_spin), and absent without it; engine.pacing names the
// pacing used either way.
func TestRunNoSpin(t *testing.T) {
	for _, noSpin := range []bool{false, true} {
		t.Run(fmt.Sprint(noSpin), func(t *testing.T) {
			js := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "--quiet", "--json", js}
			if noSpin {
				args = append(args, "--no-spin")
			}
			code, out, errs := runCLI(t, append(args, writeScenario(t, shortRun))...)
			if code != exitOK {
				t.Fatalf("exit %d; stderr %s\n%s", code, errs, out)
			}
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Engine struct {
					NoSpin *bool  `json:"no_spin"`
					Pacing string `json:"pacing"`
				} `json:"engine"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if got := doc.Engine.NoSpin != nil && *doc.Engine.NoSpin; got != noSpin || !noSpin && doc.Engine.NoSpin != nil {
				t.Errorf("engine.no_spin = %v, want %v (absent when false)", doc.Engine.NoSpin, noSpin)
			}
			if doc.Engine.Pacing != precise.Pacing {
				t.Errorf("engine.pacing = %q, want %q", doc.Engine.Pacing, precise.Pacing)
			}
		})
	}
}

// TestRunInstancePorts: --instance-ports overrides the scenario's
// instance_ports against a real target (a port outside it is a violation,
// exit 1), and gives the message conform gives for a bad range.
func TestRunInstancePorts(t *testing.T) {
	t.Parallel()
	srv := startConformRef(t) // instances on free ports, all above 1023
	addr := srv.Addr(udpwire.ProtocolName).String()
	good := writeScenario(t, shortRun+"instance_ports: 1-2\n")
	for _, tt := range []struct {
		name  string
		ports string
		code  int
	}{
		{"scenario's range, no override", "", exitFailed},
		{"override covers the ports", "1024-65535", exitOK},
		{"override excludes them", "3-4", exitFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"run", "--quiet", "--target", addr, good}
			if tt.ports != "" {
				args = append(args, "--instance-ports", tt.ports)
			}
			code, out, errs := runCLI(t, args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.code, out, errs)
			}
		})
	}
	_, _, runErr := runCLI(t, "run", "--instance-ports", "x", good)
	_, _, confErr := runCLI(t, "conform", "--target", addr, "--instance-ports", "x")
	_, runMsg, _ := strings.Cut(runErr, ": ")
	_, confMsg, _ := strings.Cut(confErr, ": ")
	if runMsg == "" || runMsg != confMsg {
		t.Errorf("run says %q, conform says %q: want one message", runErr, confErr)
	}
}

// liveMetricsRE finds the address of the live metrics in a run's stderr.
var liveMetricsRE = regexp.MustCompile(`live metrics at (\S+)`)
