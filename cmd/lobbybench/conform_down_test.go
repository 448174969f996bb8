package main

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// dyingLobby is a proxy in front of the reference TCP lobby that dies the
// first time a client sends READY_REQ, as the third-party lobby that
// aborted when a full room's members got ready: abort closes the listener
// and every connection (refused), hang relays nothing more (silent).
func dyingLobby(t *testing.T, how string) string {
	t.Helper()
	upstream := startConformRef(t).Addr(tcpwire.ProtocolName).String()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	dead := false
	isDead := func() bool { mu.Lock(); defer mu.Unlock(); return dead }
	die := func() {
		mu.Lock()
		defer mu.Unlock()
		if dead {
			return
		}
		dead = true
		if how == "abort" {
			ln.Close()
			for _, c := range conns {
				c.Close()
			}
		}
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, cc)
			mu.Unlock()
			if isDead() {
				continue // hung: accepted, never answered
			}
			uc, err := net.Dial("tcp", upstream)
			if err != nil {
				cc.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, uc)
			mu.Unlock()
			wg.Add(2)
			go func() {
				defer wg.Done()
				var hdr [4]byte
				for {
					if _, err := io.ReadFull(cc, hdr[:]); err != nil {
						return
					}
					b := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
					if _, err := io.ReadFull(cc, b); err != nil {
						return
					}
					if len(b) > 0 && tcpwire.Type(b[0]) == tcpwire.TypeReadyReq {
						die()
					}
					if isDead() {
						continue
					}
					if _, err := uc.Write(append(hdr[:], b...)); err != nil {
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				buf := make([]byte, 32<<10)
				for {
					n, err := uc.Read(buf)
					if err != nil {
						return
					}
					if !isDead() {
						cc.Write(buf[:n])
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestConformTargetDown: a lobby that dies during the suite makes conform
// lead with TARGET DOWN, name the case in flight and how it died, mark
// the later cases not run, and exit 7; one killing case alone is no PASS
// either. The JUnit says so too.
func TestConformTargetDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, how, cases, kind string
		notRun                 bool
	}{
		{"aborts, suite", "abort", "tcp-lobby/5.3,tcp-lobby/5.4,tcp-lobby/5.1/7", "refused: nothing listens", true},
		{"hangs, suite", "hang", "tcp-lobby/5.3,tcp-lobby/5.4,tcp-lobby/5.1/7", "silent: it answers nothing", true},
		{"aborts, the killing case alone", "abort", "tcp-lobby/5.3/1", "refused: nothing listens", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := filepath.Join(t.TempDir(), "c.xml")
			code, out, errs := runCLI(t, "conform", "--protocol", "tcp-lobby", "--target", dyingLobby(t, tt.how),
				"--cases", tt.cases, "--timeout", "500ms", "--junit", x)
			lead := "TARGET DOWN · the server stopped answering (" + tt.kind + ") during "
			if code != exitTargetDown || !strings.HasPrefix(out, lead) || !strings.Contains(errs, "target down: ") {
				t.Fatalf("exit %d, want %d; stdout %q; stderr %q", code, exitTargetDown, out, errs)
			}
			if !strings.Contains(out, "✘ tcp-lobby/5.3/1") || !strings.Contains(out, "stopped answering during this case ("+tt.kind) {
				t.Errorf("the killing case does not fail naming the death: %q", out)
			}
			if strings.Contains(out, "skipped:  harness error") || strings.Contains(out, "PASS ·") {
				t.Errorf("a harness error or a PASS: %q", out)
			}
			if got := strings.Contains(out, "⊘ "); got != tt.notRun {
				t.Errorf("not-run cases shown: %v, want %v: %q", got, tt.notRun, out)
			}
			b, err := os.ReadFile(x)
			if err != nil || !strings.Contains(string(b), `type="target_down"`) {
				t.Errorf("JUnit: %v %s", err, b)
			}
		})
	}
}
