package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// silentTCP listens on 127.0.0.1, accepts every connection and never
// answers: a lobby that takes the connection and ignores CONNECT_REQ.
func silentTCP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// TestRunNeverSucceeded: a run in which a step was tried and never
// succeeded (every request failed, or every one was cut by the end of the
// run) leads its table with FAIL naming the step, gets a failing JUnit
// testcase and exits 4, even with no threshold; a step never reached, and
// a think the end of the run cut, do not fail a run.
func TestRunNeverSucceeded(t *testing.T) {
	t.Parallel()
	silent := silentTCP(t)
	tests := []struct {
		name     string
		target   string
		scenario string
		grace    string
		code     int
		first    *regexp.Regexp // the table's first line
		junit    *regexp.Regexp // the JUnit holds it (nil: no never-succeeded case)
	}{
		{
			name: "every request failed", target: silent, grace: "2s", code: exitThreshold,
			scenario: `
protocol: tcp-lobby
load: {rate: 10/s, duration: 300ms}
defaults: {timeout: 100ms}
flows:
  - name: browse
    steps: [connect, list, disconnect]
`,
			// Every request timed out: the default error gate breaks too
			// (not the silent one: timeouts are not cut).
			first: regexp.MustCompile(`^FAIL · step connect \(\d+ timeout\) was tried and never succeeded; 1 of 2 thresholds breached$`),
			junit: regexp.MustCompile(`<failure message="step connect never succeeded \(\d+ timeout\)" type="never succeeded">`),
		},
		{
			name: "every request cut by the end", target: silent, grace: "100ms", code: exitThreshold,
			scenario: `
protocol: tcp-lobby
load: {rate: 10/s, duration: 300ms}
defaults: {timeout: 1h}
flows:
  - name: browse
    steps: [connect, list, disconnect]
thresholds:
  - errors.count == 0
`,
			first: regexp.MustCompile(`^FAIL · step connect \(\d+ cut by the end of the run\) was tried and never succeeded; the 1 threshold passed$`),
			junit: regexp.MustCompile(`<failure message="step connect never succeeded \(\d+ cut by the end of the run\)" type="never succeeded">`),
		},
		{
			name: "a think cut by the end, a step never reached", grace: "100ms", code: exitOK,
			scenario: `
protocol: udp-lobby
load: {rate: 10/s, duration: 300ms}
flows:
  - name: poll
    steps: [list_rooms, {think: 1h}, {leave: {}}]
`,
			first: regexp.MustCompile(`^Run `),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			junit := filepath.Join(t.TempDir(), "r.xml")
			args := []string{"run", "--quiet", "--grace", tt.grace, "--junit", junit}
			if tt.target != "" {
				args = append(args, "--target", tt.target)
			}
			code, out, errs := runCLI(t, append(args, writeScenario(t, tt.scenario))...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s\n%s", code, tt.code, errs, out)
			}
			if first := firstParagraph(out); !tt.first.MatchString(first) {
				t.Errorf("first line %q, want it to match %q", first, tt.first)
			}
			data, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			if j := string(data); tt.junit != nil && !tt.junit.MatchString(j) {
				t.Errorf("JUnit lacks %q:\n%s", tt.junit, j)
			} else if tt.junit == nil && strings.Contains(j, "never succeeded") {
				t.Errorf("JUnit names a step that never succeeded:\n%s", j)
			}
		})
	}
}
