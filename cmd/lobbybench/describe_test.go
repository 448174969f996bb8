package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDescribe: describe prints the plan and its forecast, and says it
// sends nothing.
func TestDescribe(t *testing.T) {
	code, out, errs := runCLI(t, "describe", "--rate", "100/s", "../../scenarios/join-storm.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"scenario join-storm", "flow room:", "forecast (worked out from the scenario; nothing is sent)",
		"peak 100/s", "open files", "25/s created at the peak", "the embedded server's 100"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) { // lines are folded
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDescribeFlows: described with --flows (as run takes it), the
// forecast counts a socket a client, none on virtual flows, and says that
// auto is settled by the run.
func TestDescribeFlows(t *testing.T) {
	for _, tt := range []struct{ flows, want string }{
		{"sockets", "sockets one per client: at most"},
		{"virtual", "sockets none per client: virtual flows"},
		{"auto", "unless the run gets virtual flows"},
	} {
		code, out, errs := runCLI(t, "describe", "--flows", tt.flows, "../../scenarios/join-storm.yaml")
		if code != exitOK || !strings.Contains(strings.Join(strings.Fields(out), " "), tt.want) {
			t.Errorf("--flows %s: exit %d (%s), want 0 and %q in:\n%s", tt.flows, code, errs, tt.want, out)
		}
	}
}

// TestDescribeBadInput: a broken scenario is named by file:line and a bad
// flag by its name, exit 2, as run does.
func TestDescribeBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nprotocol: udp-lobby\nlaod: {rate: 10/s, duration: 1s}\nflows: [{name: f, steps: [list_rooms]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"describe", bad}, bad + ":3"},
		{"no file", []string{"describe", "nope.yaml"}, "nope.yaml"},
		{"no scenario", []string{"describe"}, "want exactly one SCENARIO.yaml"},
		{"zero duration", []string{"describe", "--duration", "0s", "../../scenarios/join-storm.yaml"}, "--duration must be above 0"},
		{"bad rate", []string{"describe", "--rate", "fast", "../../scenarios/join-storm.yaml"}, "-rate"},
		{"bad flows", []string{"describe", "--flows", "many", "../../scenarios/join-storm.yaml"}, "--flows"},
		{"virtual flows over TCP", []string{"describe", "--flows", "virtual", "../../scenarios/full-match-tcp.yaml"}, "--flows virtual"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) || out != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errs, out, tt.want)
			}
		})
	}
}

// TestDescribeSendsNothing: described against a target that is a socket
// this test holds, nothing reaches it (a UDP datagram or a TCP connection
// made before describe returned is queued on it by then).
func TestDescribeSendsNothing(t *testing.T) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	for _, tt := range []struct{ scenario, target string }{
		{"join-storm", udp.LocalAddr().String()},
		{"full-match-tcp", tcp.Addr().String()},
	} {
		code, out, errs := runCLI(t, "describe", "--target", tt.target, "../../scenarios/"+tt.scenario+".yaml")
		if code != exitOK || !strings.Contains(out, "target        "+tt.target) {
			t.Fatalf("%s: exit %d, stderr %q\n%s", tt.scenario, code, errs, out)
		}
	}
	udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, from, err := udp.ReadFrom(make([]byte, 2048)); err == nil {
		t.Errorf("describe sent a %d-byte datagram from %v", n, from)
	}
	tcp.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if c, err := tcp.Accept(); err == nil {
		t.Errorf("describe connected from %v", c.RemoteAddr())
		c.Close()
	}
}

// TestDescribeHelp: `help describe` documents the command.
func TestDescribeHelp(t *testing.T) {
	code, out, _ := runCLI(t, "help", "describe")
	if code != exitOK || !strings.Contains(out, "A dry run") || !strings.Contains(out, "--rate") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, list, _ := runCLI(t, "help"); !strings.Contains(list, "describe") {
		t.Errorf("the command list lacks describe:\n%s", list)
	}
}
