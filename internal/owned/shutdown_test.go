//go:build linux

package owned

import (
	"testing"
	"time"
)

// TestShutdown: the stop at the end says how it went in one wording, and
// nothing when the process had ended on its own; Ended tells a running
// process from an ended one and quotes at most QuotedLines of its output.
func TestShutdown(t *testing.T) {
	tests := []struct {
		name  string
		mode  string
		abort bool // the server ends on its own first
		want  string
	}{
		{"clean", "udp", false, "stopped on SIGTERM: killed by SIGTERM"},
		{"ignores SIGTERM", "noterm", false, "did not stop within 250ms of SIGTERM; lobbybench killed its process group with SIGKILL (killed by SIGKILL)"},
		{"ended on its own", "udp", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := freeUDP(t)
			s := spec(t, tt.mode, a)
			s.Grace = time.Second
			if tt.mode == "noterm" {
				s.Grace = ignoredGrace
			}
			p := mustStart(t, s)
			if status, out, ended := p.Ended(); ended || status != "" || out != nil {
				t.Errorf("Ended while it runs = %q, %q, %v", status, out, ended)
			}
			if tt.abort {
				send(t, a, "abort")
				waitFor(t, p.Exited(), "the abort")
				status, out, ended := p.Ended()
				if !ended || status != "killed by SIGABRT" || len(out) == 0 || len(out) > QuotedLines {
					t.Errorf("Ended = %q, %d lines, %v", status, len(out), ended)
				}
			}
			if got := p.Shutdown(); got != tt.want {
				t.Errorf("Shutdown = %q, want %q", got, tt.want)
			}
			if again := p.Shutdown(); again != "" {
				t.Errorf("second Shutdown = %q, want \"\" (it has ended)", again)
			}
		})
	}
}
