package owned

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestShellForms: a --target-cmd that sets a variable, or changes
// directory first, starts the server; the process lobbybench watches is
// the server itself (not a shell waiting for it), so the exit status
// reported for a crash is the server's own and Stop's SIGTERM ends it.
func TestShellForms(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	forms := []struct {
		name string
		cmd  func(addr string) string
		cwd  string // "" lobbybench's
	}{
		{"assignment", func(a string) string {
			return fmt.Sprintf("%s=udp '%s' -test.run='^TestHelperProcess$' -- %s", helperEnv, exe, a)
		}, ""},
		{"cd then assignment", func(a string) string {
			return fmt.Sprintf("cd '%s' && %s=udp '%s' -test.run='^TestHelperProcess$' -- %s", dir, helperEnv, exe, a)
		}, dir},
	}
	ends := []struct {
		name, status string
		end          func(t *testing.T, p *Process, addr string)
	}{
		{"crash", "killed by SIGABRT", func(t *testing.T, p *Process, a string) {
			send(t, a, "abort")
			waitFor(t, p.Exited(), "the abort")
		}},
		{"stop", "killed by SIGTERM", func(t *testing.T, p *Process, a string) {
			if err := p.Stop(); err != nil {
				t.Errorf("Stop = %v", err)
			}
		}},
	}
	for _, f := range forms {
		for _, end := range ends {
			t.Run(f.name+"/"+end.name, func(t *testing.T) {
				a := freeUDP(t)
				p := mustStart(t, Spec{Command: f.cmd(a), Addr: a, Ready: udpReady(a), ReadyTimeout: 20 * time.Second, Grace: 10 * time.Second, TailLines: 5000})
				if got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID())); err != nil || got != exe {
					t.Errorf("the process watched runs %q (%v), want the server %q", got, err, exe)
				}
				wd := f.cwd
				if wd == "" {
					wd, _ = os.Getwd()
				}
				wd, _ = filepath.EvalSymlinks(wd)
				if tail := strings.Join(p.Tail(), "\n"); !strings.Contains(tail, "listening on "+a+" in "+wd) {
					t.Errorf("the server did not say it listens in %s:\n%s", wd, tail)
				}
				end.end(t, p, a)
				if got := p.ExitStatus(); got != end.status {
					t.Errorf("ExitStatus = %q, want the server's %q", got, end.status)
				}
			})
		}
	}
}
