package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestNotStartedReplacesStaleFiles: a command that ends before it
// measured anything (the target unreachable, Ctrl-C while the run waits
// for its start instant, a --target-cmd server that exits at once)
// still writes every result file asked for, each leading with why and
// "nothing was measured", over the files a passing run left there
// before: CI reading them must not see that earlier PASS. Without the
// NotStarted documents, each row finds the stale files in place.
func TestNotStartedReplacesStaleFiles(t *testing.T) {
	t.Parallel()
	dead := deadPort(t)
	exited := "sh -c 'echo no config >&2; exit 3'"
	run := writeScenario(t, shortRun)
	tests := []struct {
		name   string
		cancel string // not "": Ctrl-C once stderr says it
		args   []string
		file   string // the scenario, after the flags
		code   int
		status string
		reason string // in the headline
	}{
		{"run unreachable", "", []string{"run", "--quiet", "--target", dead}, run, exitUnreachable, result.StatusUnreachable, "unreachable"},
		{"run --workers unreachable", "", []string{"run", "--quiet", "--workers", "2", "--target", dead}, run, exitUnreachable, result.StatusUnreachable, "unreachable"},
		{"run stopped waiting for its start", "waiting ", []string{"run", "--start-at", "+5m"}, run, exitInterrupted, result.StatusInterrupted, "stopped while waiting for the start instant"},
		{"run's --target-cmd exited", "", []string{"run", "--quiet", "--target", dead, "--target-cmd", exited}, run, exitUnreachable, result.StatusUnreachable, "exited with status 3"},
		{"conform unreachable", "", []string{"conform", "--quiet", "--target", dead, "--timeout", "50ms"}, "", exitUnreachable, result.StatusUnreachable, "unreachable"},
		{"capacity unreachable", "", []string{"capacity", "--target", dead, "--step", "1s"}, pollScenario(t, "list_rooms.errors == 0"), exitUnreachable, result.StatusUnreachable, "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{"json": "r.json", "junit": "r.xml", "markdown": "r.md", "html": "r.html"}
			args := append([]string{}, tt.args...)
			for flag, name := range files {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte("stale: PASS from an earlier run\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--"+flag, p)
			}
			if tt.file != "" {
				args = append(args, tt.file)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			onMatch := cancel
			if tt.cancel == "" {
				onMatch = func() {}
			}
			stderr := cancelOn(tt.cancel, onMatch)
			e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(string) string { return "" }}
			code := runMain(ctx, e, args)
			errs := stderr.String()
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errs)
			}
			f, err := os.Open(filepath.Join(dir, files["json"]))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := result.Read(f)
			f.Close()
			if err != nil {
				t.Fatalf("JSON: %v", err)
			}
			hl := doc.Headline()
			lead := strings.ToUpper(tt.status) + " · "
			if hl.Status != tt.status || !hl.Partial() || !strings.HasPrefix(hl.Text, lead) || !strings.Contains(hl.Text, tt.reason) || !strings.HasSuffix(hl.Text, "nothing was measured") {
				t.Errorf("JSON headline %+v: want status %s, %q and %q", hl, tt.status, tt.reason, "nothing was measured")
			}
			for flag, want := range map[string]string{
				"junit":    `<error message="` + lead,
				"markdown": "**" + lead,
				"html":     `<p class="status ` + tt.status + `">` + lead,
			} {
				b, err := os.ReadFile(filepath.Join(dir, files[flag]))
				if err != nil {
					t.Fatal(err)
				}
				if s := string(b); strings.Contains(s, "stale") || !strings.Contains(s, want) {
					t.Errorf("--%s: want %q, not the stale file:\n%.300s", flag, want, s)
				}
			}
		})
	}
}
