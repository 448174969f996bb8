package owned

import (
	"strings"
	"testing"
)

// TestScript: exec goes before the server's own command, after a list's
// other commands and the command's variable assignments; a one-command
// line that is not simple runs as before; a list whose last command is
// not simple is refused, saying why.
func TestScript(t *testing.T) {
	tests := []struct {
		name, cmd       string
		script, program string
		err             string
	}{
		{"plain", "./srv --port 9000", "exec ./srv --port 9000", "./srv", ""},
		{"quoted", `'/opt/my srv' -c "a b"`, `exec '/opt/my srv' -c "a b"`, `'/opt/my srv'`, ""},
		{"assignment", "GOMAXPROCS=2 ./srv", "GOMAXPROCS=2 exec ./srv", "./srv", ""},
		{"quoted assignments", `A='x y' B="$HOME/z" ./srv -v`, `A='x y' B="$HOME/z" exec ./srv -v`, "./srv", ""},
		{"cd first", "cd /tmp && ./srv", "cd /tmp && exec ./srv", "", ""},
		{"cd and assignment", "cd /tmp && LOG=debug ./srv", "cd /tmp && LOG=debug exec ./srv", "", ""},
		{"semicolons and lines", "make build; ./srv\n", "make build; exec ./srv\n", "", ""},
		{"or before and", "test -d d || mkdir d && ./srv", "test -d d || mkdir d && exec ./srv", "", ""},
		{"background helper", "./side & ./srv", "./side & exec ./srv", "", ""},
		{"redirections", "./srv >log 2>&1", "exec ./srv >log 2>&1", "./srv", ""},
		{"substitution", `cd "$(dirname x)" && ./srv --id $(hostname; echo a)`, `cd "$(dirname x)" && exec ./srv --id $(hostname; echo a)`, "", ""},
		{"separator quoted", `./srv --motd 'a; b && c'`, `exec ./srv --motd 'a; b && c'`, "./srv", ""},
		{"trailing separator", "./srv;", "exec ./srv;", "./srv", ""},
		{"exec already", "cd d && exec ./srv", "cd d && exec ./srv", "", ""},
		{"comment", "./srv # the server", "exec ./srv # the server", "./srv", ""},
		{"one pipeline as before", "./srv | tee log", "exec ./srv | tee log", "./srv", ""},
		{"unclosed quote left to the shell", "./srv 'x", "exec ./srv 'x", "./srv", ""},
		{"list ending in a pipeline", "cd d && ./srv | tee log", "", "", "the last command is not a simple command"},
		{"list ending in or", "cd d && ./srv || echo failed", "", "", "the last command is not a simple command"},
		{"list ending in a subshell", "cd d && (./srv)", "", "", "the last command is not a simple command"},
		{"list ending in a loop", "cd d; while true; do ./srv; done", "", "", "the last command is not a simple command"},
		{"only assignments last", "cd d && A=1", "", "", "sets variables and starts nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script, program, err := Script(tt.cmd)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "--target-cmd") {
					t.Fatalf("err = %v, want one naming --target-cmd and %q", err, tt.err)
				}
				return
			}
			if err != nil || script != tt.script || program != tt.program {
				t.Fatalf("Script = %q, %q, %v; want %q, %q", script, program, err, tt.script, tt.program)
			}
		})
	}
}

func TestCommentEnd(t *testing.T) {
	for _, tt := range []struct {
		line string
		i    int
		want int
	}{
		{"./srv # the server", 6, 17},  // to the end of the line
		{"./a # x\n./srv", 4, 6},       // before the newline
		{"#\n./srv", 0, 0},             // an empty comment
		{"./a #", 4, 4},                // a comment of only #
		{"./a # x\n# y\n./srv", 8, 10}, // the second of two
	} {
		if got := commentEnd(tt.line, tt.i); got != tt.want {
			t.Errorf("commentEnd(%q, %d) = %d, want %d", tt.line, tt.i, got, tt.want)
		}
	}
}
