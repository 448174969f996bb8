package main

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
)

// startRefPart starts the reference server's parts names alone on free
// loopback ports, stopped when the test ends.
func startRefPart(t *testing.T, names ...string) *refserver.Server {
	t.Helper()
	cfg, err := refserver.Loopback().Only(names...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// halfSilentRelay relays UDP datagrams to upstream and back, each client
// address on its own upstream socket, and drops every reply to every
// second client address after the first (the reachability check's): half
// the sessions get no reply and time out, the other half are answered.
func halfSilentRelay(t *testing.T, upstream netip.AddrPort) string {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ups []*net.UDPConn
	var wg sync.WaitGroup
	peers := map[netip.AddrPort]*net.UDPConn{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, from, err := ln.ReadFromUDPAddrPort(buf)
			if err != nil {
				return // closed
			}
			up := peers[from]
			if up == nil {
				if up, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(upstream)); err != nil {
					return
				}
				silent := len(peers)%2 == 1
				peers[from] = up
				mu.Lock()
				ups = append(ups, up)
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					rb := make([]byte, 64<<10)
					for {
						m, err := up.Read(rb)
						if err != nil {
							return // closed
						}
						if !silent {
							ln.WriteToUDPAddrPort(rb[:m], from)
						}
					}
				}()
			}
			up.Write(buf[:n])
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, up := range ups {
			up.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.LocalAddr().String()
}

// TestRunDefaultGate: a run half of whose requests time out fails the
// default error gate when its scenario names no error threshold: exit 4,
// the gate marked "(default)" in the table, the JSON and the JUnit, the
// timeouts named in the totals. The scenario's own errors.rate replaces
// the gate, and --no-default-gate turns it off.
func TestRunDefaultGate(t *testing.T) {
	t.Parallel()
	srv := startRefPart(t, "udp-lobby")
	const body = "protocol: udp-lobby\nload: {rate: 20/s, duration: 1s}\ndefaults: {timeout: 200ms, retries: 0}\n" +
		"flows:\n  - name: poll\n    steps: [list_rooms]\n"
	tests := []struct {
		name     string
		scenario string
		flags    []string
		code     int
		gate     bool   // the default gate judged the run
		last     string // the table's verdict line starts so
	}{
		{"no error threshold", body, nil, exitThreshold, true, "FAIL · 1 of 2 thresholds breached"},
		{"its own errors.rate", body + "thresholds: [errors.rate < 90%]\n", nil, exitOK, false, "PASS · the 1 threshold passed"},
		{"--no-default-gate", body + "thresholds: [list_rooms.count > 0]\n", []string{"--no-default-gate"}, exitOK, false, "PASS · the 1 threshold passed"},
		{"default_error_gate: false", body + "default_error_gate: false\nthresholds: [list_rooms.count > 0]\n", nil, exitOK, false, "PASS · the 1 threshold passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Its own relay: the reachability check is its first client.
			relay := halfSilentRelay(t, srv.Addr("udp-lobby"))
			dir := t.TempDir()
			js, ju := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
			args := append([]string{"run", "--quiet", "--watchdog", "0", "--grace", "2s", "--target", relay, "--json", js, "--junit", ju}, tt.flags...)
			code, out, errs := runCLI(t, append(args, writeScenario(t, tt.scenario))...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			run := readOwnedRun(t, js)
			timeouts := run.Totals.Timeouts()
			if timeouts == 0 || run.Totals.Successes == 0 {
				t.Fatalf("totals %+v: want timeouts and successes", run.Totals)
			}
			if !strings.Contains(out, "; "+strconv.FormatInt(timeouts, 10)+" timeout") {
				t.Errorf("the totals do not name the %d timeouts:\n%s", timeouts, out)
			}
			hasGate := slices.ContainsFunc(run.Thresholds, func(th result.ThresholdResult) bool { return th.Default })
			junit, _ := os.ReadFile(ju)
			if hasGate != tt.gate || strings.Contains(out, "(default)") != tt.gate || strings.Contains(string(junit), "(default)") != tt.gate {
				t.Errorf("default gate in JSON %v, table %v, JUnit %v; want %v\n%s", hasGate, strings.Contains(out, "(default)"), strings.Contains(string(junit), "(default)"), tt.gate, out)
			}
			if !strings.Contains(out, "\n"+tt.last) {
				t.Errorf("no verdict line %q in:\n%s", tt.last, out)
			}
			if tt.gate && !strings.Contains(string(junit), `failures="1"`) {
				t.Errorf("JUnit does not fail the default gate:\n%s", junit)
			}
		})
	}
}

// TestRunSilentGate is the run that read PASS with a quarter of its
// requests dropped: a server that answers half the clients and drops the
// other half's requests, against a timeout longer than the run, so that
// none of them fails and the end of the run cuts them all. The error gate
// passes (nothing failed); the silent gate fails the run, which exits 4,
// and the warnings name the silent requests by message type.
func TestRunSilentGate(t *testing.T) {
	t.Parallel()
	srv := startRefPart(t, "udp-lobby")
	relay := halfSilentRelay(t, srv.Addr("udp-lobby"))
	const body = "protocol: udp-lobby\nload: {rate: 20/s, duration: 1s}\ndefaults: {timeout: 1h, retries: 0}\n" +
		"flows:\n  - name: poll\n    steps: [list_rooms]\n"
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runCLI(t, "run", "--quiet", "--watchdog", "0", "--grace", "2s", "--target", relay, "--json", js, writeScenario(t, body))
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitThreshold, out, errs)
	}
	run := readOwnedRun(t, js)
	if run.Totals.Failures != 0 || run.Totals.Successes == 0 || run.SilentCuts() == 0 {
		t.Fatalf("totals %+v, %d cut silent: want successes, silent cuts, no failure", run.Totals, run.SilentCuts())
	}
	want := map[string]bool{result.DefaultErrorGate.Name: true, result.DefaultSilentGate.Name: false}
	for _, th := range run.Thresholds {
		if pass, ok := want[th.Name]; !ok || th.Pass != pass || !th.Default {
			t.Errorf("verdict %+v, want the default gates, the silent one failing", th)
		}
		delete(want, th.Name)
	}
	if len(want) > 0 {
		t.Errorf("gates %v not judged", want)
	}
	if !strings.Contains(out, "\nFAIL · 1 of 2 thresholds breached") || !strings.Contains(out, "LIST_ROOMS") {
		t.Errorf("the verdict or the warning naming the silent requests is missing:\n%s", out)
	}
}

// TestRunDefaultGateTrickle is the case that read PASS with most of its
// connects timed out: a TCP lobby behind a link that, after the first
// sessions, delivers the server's bytes one per 100 ms. A CONNECT_ACK
// (12 bytes framed) then takes over a second against a 500 ms timeout,
// while the first sessions, forwarded whole, succeed. The scenario names
// no error threshold: the default gate fails the run, which exits 4, and
// the totals name the timeouts.
func TestRunDefaultGateTrickle(t *testing.T) {
	t.Parallel()
	srv := startRefPart(t, "udp-lobby", "tcp-lobby")
	// One client read for the reachability check's LIST_ROOMS_REQ, then
	// about three sessions' CONNECT_REQ and DISCONNECT whole.
	px, err := faultproxy.TCP(srv.Addr("tcp-lobby"), faultproxy.Trickle, 7)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	const body = "protocol: tcp-lobby\nload: {rate: 10/s, duration: 1s}\ndefaults: {timeout: 500ms, retries: 0}\n" +
		"flows:\n  - name: c\n    steps: [{connect: {name: trickle}}, disconnect]\nthresholds: [connect.count > 0]\n"
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runCLI(t, "run", "--quiet", "--watchdog", "0", "--grace", "2s", "--target", px.Addr().String(), "--json", js, writeScenario(t, body))
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitThreshold, out, errs)
	}
	run := readOwnedRun(t, js)
	timeouts := run.Totals.Timeouts()
	if timeouts == 0 || run.Totals.Successes == 0 {
		t.Fatalf("totals %+v: want timeouts and successes", run.Totals)
	}
	i := slices.IndexFunc(run.Thresholds, func(th result.ThresholdResult) bool { return th.Default })
	if i < 0 || run.Thresholds[i].Pass {
		t.Fatalf("the default gate did not fail the run: %+v", run.Thresholds)
	}
	if !strings.Contains(out, "; "+strconv.FormatInt(timeouts, 10)+" timeout") {
		t.Errorf("the totals do not name the %d timeouts:\n%s", timeouts, out)
	}
}
