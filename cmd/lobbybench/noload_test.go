package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunNoLoad: a closed-model run whose ramp from 0 never reached a
// client sent nothing: NO LOAD first in the table, the Markdown and the
// JUnit (no green tests="0"), exit 6.
func TestRunNoLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ju, md := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.md")
	sc := writeScenario(t, "protocol: udp-lobby\nload:\n  model: closed\n  stages: [{clients: 1, for: 1s}]\n"+
		"flows:\n  - name: poll\n    steps: [list_rooms]\n")
	code, out, errs := runCLI(t, "run", "--quiet", "--junit", ju, "--markdown", md, sc)
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitIncomplete, out, errs)
	}
	const want = "NO LOAD · no request was sent (0 sessions started)"
	if first := firstParagraph(out); !strings.HasPrefix(first, want) {
		t.Errorf("first line %q, want %q", first, want)
	}
	junit, _ := os.ReadFile(ju)
	if !strings.Contains(string(junit), `tests="1"`) || !strings.Contains(string(junit), `errors="1"`) || !strings.Contains(string(junit), want) {
		t.Errorf("JUnit reads a run with no load as green:\n%s", junit)
	}
	if m, _ := os.ReadFile(md); !strings.HasPrefix(string(m), "**"+want) {
		t.Errorf("Markdown does not lead with NO LOAD:\n%.300s", m)
	}
}
