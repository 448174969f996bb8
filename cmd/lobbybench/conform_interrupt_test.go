package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interruptingEcho echoes every datagram (reachable, and wrong) and, when
// after > 0, calls stop once it has received after datagrams: a Ctrl-C in
// the middle of the suite, after the probe.
func interruptingEcho(t *testing.T, after int, stop func()) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { c.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for n := 1; ; n++ {
			k, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if after > 0 && n == after {
				stop()
			}
			c.WriteToUDPAddrPort(buf[:k], from)
		}
	}()
	return c.LocalAddr().String()
}

// TestConformInterrupted: a conform run whose context is cancelled part
// way says INTERRUPTED first in the terminal, the JSON (interrupted:
// true), the JUnit (an <error> testcase before any case), the HTML banner
// and the Markdown, and exits 5 as run does.
func TestConformInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// --header spec: the probe sends one datagram per try, two tries at
	// most, so the 6th datagram is always a case's.
	target := interruptingEcho(t, 6, cancel)
	dir := t.TempDir()
	files := map[string]string{"json": filepath.Join(dir, "c.json"), "junit": filepath.Join(dir, "c.xml"),
		"markdown": filepath.Join(dir, "c.md"), "html": filepath.Join(dir, "c.html")}
	args := []string{"conform", "--target", target, "--cases", "udp-lobby/4,udp-lobby/5,udp-lobby/12", "--timeout", "200ms", "--header", "spec"}
	for flag, path := range files {
		args = append(args, "--"+flag, path)
	}
	code, out, errs := runCLICtx(ctx, args...)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInterrupted, out, errs)
	}
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, "INTERRUPTED · the suite was stopped") {
		t.Errorf("terminal: first line %q\n%s", first, out)
	}
	tests := []struct {
		format string
		lead   string // what must come before the first case id
	}{
		{"json", `"interrupted": true`},
		{"junit", `<error message="INTERRUPTED · the suite was stopped`},
		{"markdown", "**INTERRUPTED · the suite was stopped"},
		{"html", `<p class="status interrupted">INTERRUPTED · the suite was stopped`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			b, err := os.ReadFile(files[tt.format])
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			i, j := strings.Index(s, tt.lead), strings.Index(s, "udp-lobby/4/1")
			if i < 0 || j < 0 || i > j {
				t.Errorf("%s: %q at %d, first case at %d:\n%s", tt.format, tt.lead, i, j, s)
			}
		})
	}
}
