package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
)

// faultyTarget is the reference server's part proto behind a faultproxy
// that does mode after `after` client packets.
func faultyTarget(t *testing.T, proto string, mode faultproxy.Mode, after int) *faultproxy.Proxy {
	t.Helper()
	parts := []string{proto}
	if proto == tcpwire.ProtocolName {
		parts = append(parts, udpwire.ProtocolName)
	}
	srv := startRefPart(t, parts...)
	newProxy := faultproxy.UDP
	if proto == tcpwire.ProtocolName {
		newProxy = faultproxy.TCP
	}
	p, err := newProxy(srv.Addr(proto), mode, after)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func faultyScenario(t *testing.T, proto string, target netip.AddrPort, duration string) string {
	steps := map[string]string{"udp-lobby": "[list_rooms]", "tcp-lobby": "[connect, list_rooms]", "leviathan": "[connect, echo]"}[proto]
	return writeScenario(t, fmt.Sprintf("protocol: %s\ntarget: %s\ndefaults: {timeout: 300ms, retries: 0}\nload: {model: closed, clients: 3, duration: %s}\nflows:\n  - name: poll\n    steps: %s\nthresholds:\n  - list_rooms.count > 0\n",
		proto, target, duration, steps))
}

// TestRunTargetDown: `run` against a target that dies (tcp-lobby,
// refused) or hangs (udp-lobby, silent) mid-run exits 7, says TARGET
// DOWN first and last on the terminal and in the JSON, and splits the
// failures into while down and while up; the same healthy target exits
// 0 with none.
//
// The target fails after 40 client packets, whenever a loaded machine
// sends them, and the run goes on until it has said so (then it is
// interrupted, as by Ctrl-C: TARGET DOWN wins over the interruption).
// A run of a fixed length once ended, beside two busy loops, with 23
// requests answered and the proxy's budget not yet spent: the target had
// not died during the run, and exit 0 was right.
func TestRunTargetDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, proto, duration string
		mode                  faultproxy.Mode
		kind                  string
		code                  int
	}{
		// The down rows' 60 s is a bound, not a wait: they end once the
		// outage is said.
		{"tcp-lobby dies", "tcp-lobby", "60s", faultproxy.Die, result.DownRefused, exitTargetDown},
		// Silent takes two unanswered probes of 1 s (the scenario's
		// 300ms timeout is below the watchdog's floor).
		{"udp-lobby hangs", "udp-lobby", "60s", faultproxy.Hang, result.DownSilent, exitTargetDown},
		{"leviathan healthy", "leviathan", "2s", faultproxy.Healthy, "", exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := faultyTarget(t, tc.proto, tc.mode, 40)
			js := filepath.Join(t.TempDir(), "r.json")
			sc := faultyScenario(t, tc.proto, p.Addr(), tc.duration)
			if tc.proto == "leviathan" {
				// The first step, in a run of 2 s: beside two busy loops
				// and -race, one handshake took 566 ms of a 500 ms run,
				// so no echo ran, and echo.count > 0 broke (exit 4) on a
				// healthy target.
				sc = writeScenario(t, strings.Replace(mustRead(t, sc), "list_rooms.count > 0", "connect.count > 0", 1))
			}
			code, out, errs := runUntil(t, "lobbybench: TARGET DOWN at +", "run", "--watchdog", "50ms", "--grace", "500ms", "--json", js, sc)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr %s\nstdout %s", code, tc.code, errs, out)
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
			if tc.kind == "" {
				if len(run.Outages) != 0 || strings.Contains(out+errs, "TARGET DOWN") {
					t.Errorf("a healthy target went down: %+v\n%s", run.Outages, errs)
				}
				return
			}
			if len(run.Outages) != 1 || run.Outages[0].Kind != tc.kind || run.Outages[0].Back {
				t.Fatalf("outages %+v, want one %s, not back", run.Outages, tc.kind)
			}
			hl := run.Headline().Text
			if first := firstParagraph(out); !strings.HasPrefix(hl, "TARGET DOWN · at +") || first != hl {
				t.Errorf("first line %q, headline %q", first, hl)
			}
			if !strings.HasPrefix(run.TargetDown, "TARGET DOWN · ") {
				t.Errorf("JSON target_down %q", run.TargetDown)
			}
			if !strings.Contains(errs, "lobbybench: TARGET DOWN at +") || !strings.Contains(errs, "lobbybench run: TARGET DOWN · ") {
				t.Errorf("stderr does not say it at once and at the end:\n%s", errs)
			}
			if len(run.Totals.FailuresWhileDown) == 0 || !strings.Contains(out, "WHILE DOWN") {
				t.Errorf("failures while down %v; table:\n%s", run.Totals.FailuresWhileDown, out)
			}
		})
	}
}

// runUntil is runCLI interrupted (as by Ctrl-C) once stderr shows match:
// a run that must see an event ends on it, not after a length that a
// loaded machine may not fill with what leads to it.
func runUntil(t *testing.T, match string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errs := cancelOn(match, cancel)
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: errs, getenv: func(string) string { return "" }}
	code := runMain(ctx, e, args)
	return code, out.String(), errs.String()
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunWatchdogFlag: --watchdog takes 0 (off) and rejects a negative
// interval as a usage error.
func TestRunWatchdogFlag(t *testing.T) {
	t.Parallel()
	code, _, errs := runCLI(t, "run", "--watchdog", "-1s", writeScenario(t, shortRun))
	if code != exitUsage || !strings.Contains(errs, "--watchdog -1s must be 0 (off) or above") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	p := faultyTarget(t, "udp-lobby", faultproxy.Die, 20)
	code, out, errs := runCLI(t, "run", "--quiet", "--watchdog", "0", faultyScenario(t, "udp-lobby", p.Addr(), "800ms"))
	if code == exitTargetDown || strings.Contains(out+errs, "TARGET DOWN") {
		t.Errorf("--watchdog 0 still watched: exit %d\n%s%s", code, out, errs)
	}
}

// TestRunWorkersTargetDown: with --workers 2 each worker watches the
// target; the merged document has the union of their outages (one), says
// TARGET DOWN, and the parent exits 7.
func TestRunWorkersTargetDown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	// The target dies once the parent's and both workers' reachability
	// checks (a connect and close each, nothing sent) went through: a
	// worker that found it already dead would leave no result, rightly,
	// and prove nothing of the merge.
	p := faultyTarget(t, "tcp-lobby", faultproxy.Die, 1<<62)
	go func() {
		for i := 0; i < 6000 && p.EmptyConns() < 3; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		p.Trip()
	}()
	code, errs, doc, _ := runWorkersCmd(t, nil, 0, "--quiet", "--workers", "2", "--watchdog", "50ms", "--grace", "500ms",
		faultyScenario(t, "tcp-lobby", p.Addr(), "2s"))
	if code != exitTargetDown {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitTargetDown, errs)
	}
	if doc == nil || len(doc.Outages) != 1 || doc.Outages[0].Kind != result.DownRefused || !strings.HasPrefix(doc.TargetDown, "TARGET DOWN · at +") {
		t.Fatalf("merged document: %+v", doc)
	}
	if doc.Shards != 2 || len(doc.Totals.FailuresWhileDown) == 0 || len(doc.Incomplete) != 0 {
		t.Errorf("%d shards, failures while down %v, incomplete %q: want both workers' results, none incomplete", doc.Shards, doc.Totals.FailuresWhileDown, doc.Incomplete)
	}
}
