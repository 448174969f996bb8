package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	reftcp "github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
)

func startConformRef(t *testing.T) *refserver.Server {
	t.Helper()
	cfg := refserver.Loopback()
	refudp.ConfigOf(cfg).CountdownInterval = 20 * time.Millisecond
	reftcp.ConfigOf(cfg).CountdownInterval = 20 * time.Millisecond
	s, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// echoServer answers every datagram with itself: reachable, and wrong.
func echoServer(t *testing.T) string { return interruptingEcho(t, 0, nil) }

// deadPort returns a loopback UDP port that refuses datagrams, held for
// the test (deadport.UDP).
func deadPort(t *testing.T) string { return deadport.UDP(t).String() }

func TestConformUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no target", []string{"conform"}, "--target is required"},
		{"bad header", []string{"conform", "--target", "127.0.0.1:1", "--header", "nope"}, "--header"},
		{"bad instance ports", []string{"conform", "--target", "127.0.0.1:1", "--instance-ports", "9-1"}, "--instance-ports"},
		{"bad pattern", []string{"conform", "--target", "127.0.0.1:1", "--cases", "tcp-lobby/["}, "--cases"},
		{"no case matches", []string{"conform", "--target", "127.0.0.1:1", "--cases", "nothing"}, "no udp-lobby case matches"},
		{"unknown protocol", []string{"conform", "--target", "127.0.0.1:1", "--protocol", "smtp"}, `unknown protocol "smtp"`},
		{"bad sources", []string{"conform", "--target", "127.0.0.1:1", "--source-addrs", "x"}, "--source-addrs"},
		{"bad allow-redirect", []string{"conform", "--target", "127.0.0.1:1", "--allow-redirect", "10.0.0.1:80"}, `--allow-redirect: "10.0.0.1:80" is neither an IP address nor a host name`},
		{"allow-redirect any in a list", []string{"conform", "--target", "127.0.0.1:1", "--allow-redirect", "any,10.0.0.1"}, `"any" stands alone`},
		{"bad timeout", []string{"conform", "--target", "127.0.0.1:1", "--timeout", "0s"}, "--timeout"},
		{"max fill zero", []string{"conform", "--target", "127.0.0.1:1", "--max-fill", "0"}, "--max-fill 0 is outside 1-4096"},
		{"max fill over the bound", []string{"conform", "--target", "127.0.0.1:1", "--max-fill", "4097"}, "--max-fill 4097 is outside 1-4096"},
		{"negative pool wait", []string{"conform", "--target", "127.0.0.1:1", "--pool-wait", "-1s"}, "--pool-wait"},
		{"bad target", []string{"conform", "--target", "nope"}, "target"},
		{"extra argument", []string{"conform", "--target", "127.0.0.1:1", "x"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitUsage, errs)
			}
			if !strings.Contains(errs, tt.stderr) || strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q: want one line containing %q", errs, tt.stderr)
			}
		})
	}
}

func TestConformList(t *testing.T) {
	code, out, errs := runCLI(t, "conform", "--list")
	if code != exitOK || !strings.Contains(out, "udp-lobby/13/1") || !strings.Contains(out, "inst/2/5") || strings.Contains(out, "tcp-lobby/") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "conform", "--list", "--protocol", "tcp-lobby", "--cases", "tcp-lobby/7.1")
	if code != exitOK || !strings.Contains(out, "tcp-lobby/7.1/4") || !strings.Contains(out, "\n4 cases\n") || !strings.Contains(out, "tcp-lobby.md §7 Error handling") || !strings.Contains(out, "Sections cite docs/protocols/ in the lobbybench repository.") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestConformUnreachable(t *testing.T) {
	code, _, errs := runCLI(t, "conform", "--target", deadPort(t), "--timeout", "50ms")
	if code != exitUnreachable || !strings.Contains(errs, "unreachable") {
		t.Errorf("exit %d, want %d (stderr %q)", code, exitUnreachable, errs)
	}
}

func TestConformRun(t *testing.T) {
	srv := startConformRef(t)
	dir := t.TempDir()
	j, x, m, h := filepath.Join(dir, "c.json"), filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.md"), filepath.Join(dir, "c.html")
	code, out, errs := runCLI(t, "conform", "--target", srv.Addr(udpwire.ProtocolName).String(), "--cases", "udp-lobby/4,udp-lobby/12,inst/2/1",
		"--json", j, "--junit", x, "--markdown", m, "--html", h)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "✔ udp-lobby/4/1") || !strings.Contains(out, "3 cases in") || !strings.Contains(out, "header spec, guessed") {
		t.Errorf("stdout %q", out)
	}
	// The progress bar is for a terminal: piped output has none.
	if strings.Contains(out+errs, "conform 3/3") || strings.Contains(out+errs, "[=") {
		t.Errorf("a progress bar in piped output:\nstdout %q\nstderr %q", out, errs)
	}
	fh, err := os.Open(j)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	c, err := result.ReadConform(fh)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Summary(); s.Total != 3 || s.Pass != 3 {
		t.Errorf("JSON summary %+v", s)
	}
	for _, p := range []string{x, m, h} {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), "udp-lobby/12/1") {
			t.Errorf("%s: %v %q", p, err, b)
		}
	}
	// TCP on the same reference server.
	code, out, _ = runCLI(t, "conform", "--protocol", "tcp-lobby", "--target", srv.Addr(tcpwire.ProtocolName).String(), "--cases", "tcp-lobby/2.2,tcp-lobby/7.1", "--quiet")
	if code != exitOK || !strings.Contains(out, "5 cases in") || strings.Contains(out, "✔") {
		t.Errorf("tcp: exit %d, stdout %q", code, out)
	}
}

func TestConformFailureAndStrict(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "conform", "--target", echoServer(t), "--header", "spec", "--cases", "udp-lobby/4")
	if code != exitFailed || !strings.Contains(out, "✘ udp-lobby/4/1") || !strings.Contains(out, "wire:") {
		t.Errorf("echo server: exit %d, stdout %q", code, out)
	}
	// The loopback reference server sets no per-address connection quota:
	// tcp-lobby/R/4 (64 connections from one address, none refused) warns, which
	// fails only under --strict. A counting verdict, unlike the rate-limit
	// flood's (udp-lobby/14/1), which a loaded machine can turn into a warning.
	// A passing case goes with it: a run in which not one case passed
	// never passes.
	srv := startConformRef(t)
	args := []string{"conform", "--protocol", "tcp-lobby", "--target", srv.Addr(tcpwire.ProtocolName).String(), "--cases", "tcp-lobby/R/4,tcp-lobby/5.1/1"}
	if code, out, _ := runCLI(t, args...); code != exitOK || !strings.Contains(out, "! tcp-lobby/R/4") {
		t.Errorf("non-strict: exit %d, stdout %q", code, out)
	}
	if code, out, _ := runCLI(t, append(args, "--strict")...); code != exitFailed {
		t.Errorf("strict: exit %d, stdout %q", code, out)
	}
	// The warning alone: not one case passed, so no PASS, whatever the
	// level of what was found.
	args[len(args)-1] = "tcp-lobby/R/4"
	if code, out, _ := runCLI(t, args...); code != exitFailed || !strings.Contains(out, "NO PASS · not one of 1 case passed (1 warned)") || strings.Contains(out, "\nPASS") {
		t.Errorf("warning alone: exit %d, stdout %q", code, out)
	}
}

// TestConformMaxSkips: a skip budget fails a hollow run (exit 1), in the
// JUnit too; the skip count heads the output either way.
func TestConformMaxSkips(t *testing.T) {
	srv := startConformRef(t)
	x := filepath.Join(t.TempDir(), "c.xml")
	// udp-lobby/7/2 needs --instance-ports: without it, it is skipped.
	args := []string{"conform", "--target", srv.Addr(udpwire.ProtocolName).String(), "--cases", "udp-lobby/4/1,udp-lobby/7/2", "--junit", x}
	code, out, _ := runCLI(t, args...)
	if code != exitOK || !strings.Contains(out, "PASS · no case failed (1 of 2 passed); 1 of 2 cases skipped") {
		t.Errorf("no budget: exit %d, stdout %q", code, out)
	}
	code, out, errs := runCLI(t, append(args, "--max-skips", "0")...)
	if code != exitFailed || !strings.Contains(out, "FAIL · 1 of 2 cases skipped, over --max-skips 0") || !strings.Contains(errs, "over --max-skips 0") {
		t.Errorf("budget 0: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if b, err := os.ReadFile(x); err != nil || !strings.Contains(string(b), `type="skip budget"`) {
		t.Errorf("JUnit: %v %s", err, b)
	}
	if code, _, _ := runCLI(t, append(args, "--max-skips", "1")...); code != exitOK {
		t.Errorf("budget 1: exit %d", code)
	}
	if code, _, errs := runCLI(t, append(args, "--max-skips", "-2")...); code != exitUsage {
		t.Errorf("budget -2: exit %d %q", code, errs)
	}
}

// TestConformPassingWire: a passing case's wire log stays out of the
// JUnit and HTML unless --verbose; the JSON always has it.
func TestConformPassingWire(t *testing.T) {
	srv := startConformRef(t)
	dir := t.TempDir()
	j, x, h := filepath.Join(dir, "c.json"), filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.html")
	args := []string{"conform", "--target", srv.Addr(udpwire.ProtocolName).String(), "--cases", "udp-lobby/4/1", "--json", j, "--junit", x, "--html", h}
	if code, out, errs := runCLI(t, args...); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if js := read(j); !strings.Contains(js, `"wire": [`) {
		t.Error("the JSON lost the wire log")
	}
	if s := read(x); strings.Contains(s, "-> +") || !strings.Contains(s, "left out") {
		t.Errorf("JUnit keeps the passing case's wire log:\n%s", s)
	}
	if s := read(h); strings.Contains(s, `class="wire"`) || !strings.Contains(s, "left out") {
		t.Error("HTML keeps the passing case's wire log")
	}
	// report junit and report html of the stored JSON trim as conform does.
	for _, tt := range []struct {
		name string
		args []string
		wire bool // the passing case's wire log is rendered
	}{
		{"report junit", []string{"report", "junit", j}, false},
		{"report html", []string{"report", "html", j}, false},
		{"report junit --verbose", []string{"report", "junit", j, "--verbose"}, true},
		{"report html --verbose", []string{"report", "html", "--verbose", j}, true},
	} {
		code, out, errs := runCLI(t, tt.args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errs)
		}
		if hasWire := strings.Contains(out, "-> +") || strings.Contains(out, `class="wire"`); hasWire != tt.wire {
			t.Errorf("%s: wire log rendered %v, want %v:\n%s", tt.name, hasWire, tt.wire, out)
		}
		if tt.name == "report junit" && out != read(x) {
			t.Errorf("report junit differs from conform --junit:\n%s\nconform wrote:\n%s", out, read(x))
		}
	}
	if code, _, _ := runCLI(t, append(args, "--verbose")...); code != exitOK {
		t.Fatal("verbose run failed")
	}
	if s := read(x); !strings.Contains(s, "-> +") {
		t.Errorf("--verbose JUnit has no wire log:\n%s", s)
	}
}

// TestConformDocsBase: the HTML report names the cited document's path in
// the repository, and links the section only under --docs-base.
func TestConformDocsBase(t *testing.T) {
	srv := startConformRef(t)
	h := filepath.Join(t.TempDir(), "c.html")
	args := []string{"conform", "--target", srv.Addr(udpwire.ProtocolName).String(), "--cases", "udp-lobby/4/1", "--html", h}
	for _, tt := range []struct {
		extra      []string
		want, lack string
	}{
		{nil, `title="docs/protocols/udp-lobby.md §4 in the lobbybench repository"`, `<a href="`},
		{[]string{"--docs-base", "file:///src/lobbybench/docs/protocols"}, `<a href="file:///src/lobbybench/docs/protocols/udp-lobby.md#s4">udp-lobby.md §4 LOBBY_LIST_ROOMS</a>`, ""},
	} {
		if code, out, errs := runCLI(t, append(args, tt.extra...)...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", tt.extra, code, out, errs)
		}
		b, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, tt.want) || (tt.lack != "" && strings.Contains(s, tt.lack)) {
			t.Errorf("%v: the HTML lacks %q or has %q\n%s", tt.extra, tt.want, tt.lack, s)
		}
	}
}

// TestConformDocsBaseBad: a --docs-base that is no http, https or file URL
// or path, or that carries a query or fragment, is a usage error naming the
// flag.
func TestConformDocsBaseBad(t *testing.T) {
	for _, bad := range []string{"javascript:alert(1)", "https://x.example/p?ref=main", "https://x.example/p#top", "http://[::1"} {
		code, _, errs := runCLI(t, "conform", "--target", "127.0.0.1:9", "--docs-base", bad)
		if code != exitUsage || !strings.Contains(errs, "--docs-base") {
			t.Errorf("%q: exit %d %q", bad, code, errs)
		}
	}
}

// TestTargetSameMessage: a bad --target gets the same one-line usage error
// (exit 2) from conform and run: both check it with internal/target.
func TestTargetSameMessage(t *testing.T) {
	for _, bad := range []string{"host:notaport", "nope", "127.0.0.1:0"} {
		t.Run(bad, func(t *testing.T) {
			var msgs []string
			for _, args := range [][]string{
				{"conform", "--target", bad},
				{"run", "--target", bad, "../../scenarios/list-poll.yaml"},
			} {
				code, _, errs := runCLI(t, args...)
				if code != exitUsage || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "lookup") {
					t.Errorf("%v: exit %d, stderr %q; want one clean usage line", args[0], code, errs)
				}
				_, msg, _ := strings.Cut(errs, "--target: ")
				msgs = append(msgs, msg)
			}
			if msgs[0] == "" || msgs[0] != msgs[1] {
				t.Errorf("conform says %q, run says %q; want the same --target message", msgs[0], msgs[1])
			}
		})
	}
}

// TestConformMaxFill: a pool of more instances than the default bound
// (64) is skipped, with the bound named; --max-fill lets the suite fill it
// and reach the limit, as against a default 'lobbybench serve' (100
// instances).
func TestConformMaxFill(t *testing.T) {
	t.Parallel()
	const pool = 70
	lo := quietport.Pick(t, "udp", pool)
	cfg := refserver.Loopback()
	refudp.ConfigOf(cfg).BasePort, refudp.ConfigOf(cfg).MaxInstances = lo, pool
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ports := fmt.Sprintf("%d-%d", lo, lo+pool-1)
	for _, tt := range []struct {
		name string
		fill []string
		code int
		want string
	}{
		{"default bound skips, naming --max-fill", nil, exitFailed, "(bound 64): give --max-fill 71"},
		{"--max-fill reaches the limit", []string{"--max-fill", "71"}, exitOK, "0 skipped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"conform", "--target", srv.Addr(udpwire.ProtocolName).String(), "--cases", "udp-lobby/10/5",
				"--instance-ports", ports, "--max-skips", "0", "--pool-wait", "0s"}, tt.fill...)
			code, out, errs := runCLI(t, args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d (want %d), stdout lacks %q?\n%s\n%s", code, tt.code, tt.want, out, errs)
			}
		})
	}
}
